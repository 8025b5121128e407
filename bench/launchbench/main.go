// Command launchbench measures `mur run` from process start to the
// provider receiving the driver's first request, and the resident memory
// of the capsule while that request is held (an idle capsule waiting on a
// slow provider). It sets up its own HOME: the driver and file tool built
// into .mur.zip packages, published to the global store and installed into
// a capsule pinned by murmur.lock, exactly as `mur build/publish/install`
// do for a user. The provider is the scripted double on loopback.
//
//	launchbench -mur bin/mur -guests build/guests [-runs 20] [-hold 300ms] [-fleet 4]
//
// -fleet N then starts N runs of the capsule at once and, while all N wait
// on the provider, reports each one's proportional set size (PSS: private
// pages plus its share of pages the capsules share, such as the mur binary
// and the driver's compiled code mapped from the compile cache): what one
// more capsule costs the machine.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/murmur/mur/internal/providertest"
)

const capsule = `name: bench
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      api_key: ${OPENAI_API_KEY}
  - name: murmur/file-go
    version: "0.1.0"
    runtime: tool
capabilities:
  shell:
    allow: [sh]
inference:
  transport: http
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 4
%EXTRA%`

func main() {
	murBin := flag.String("mur", "bin/mur", "mur binary to measure")
	guests := flag.String("guests", "build/guests", "directory of built components")
	src := flag.String("src", ".", "repository root (artifact murmur.yaml sources)")
	runs := flag.Int("runs", 20, "measured runs (after the warm-up runs)")
	hold := flag.Duration("hold", 300*time.Millisecond, "how long the provider holds the first request before answering (RSS is sampled at its end)")
	ceiling := flag.Bool("ceiling", false, "declare a spend ceiling (max_session_tokens): each request is counted before it is sent")
	flag.StringVar(&wrap, "wrap", "", "command prefix for each measured mur run, split on spaces (e.g. a profiler: perf record -g -o p.data --)")
	flag.IntVar(&fleetSize, "fleet", 0, "after the runs, this many capsules idle at once: report each one's PSS")
	flag.Parse()
	if err := run(*murBin, *guests, *src, *runs, *hold, *ceiling); err != nil {
		fmt.Fprintf(os.Stderr, "launchbench: %v\n", err)
		os.Exit(1)
	}
}

// warmups run before the measured runs: the first fills the compile
// cache; the second, more than a second after install, is the first whose
// full verification of the installed artifacts is stamped (a launch right
// after install leaves that to the next one). A user's capsule is in that
// state from its second launch on.
const warmups = 2

// wrap prefixes each measured run's command line.
var wrap string

// fleetSize is -fleet.
var fleetSize int

// probe is the provider double wrapped to timestamp the first request of
// each run and sample the capsule's memory while it waits.
type probe struct {
	prov *providertest.Server
	hold time.Duration

	mu    sync.Mutex
	gate  func() // when set, every request waits in it first (-fleet)
	pid   int
	first chan time.Time
	rss   [3]int64 // VmRSS, VmHWM, RssAnon in KiB, sampled at the end of the hold
	turns []time.Time
}

func (p *probe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	gate := p.gate
	p.mu.Unlock()
	if gate != nil {
		gate()
		p.prov.ServeHTTP(w, r)
		return
	}
	now := time.Now()
	p.mu.Lock()
	first := len(p.turns) == 0
	p.turns = append(p.turns, now)
	pid := p.pid
	p.mu.Unlock()
	if first {
		p.first <- now
		time.Sleep(p.hold)
		rss, hwm, anon := memory(pid)
		p.mu.Lock()
		p.rss = [3]int64{rss, hwm, anon}
		p.mu.Unlock()
	}
	p.prov.ServeHTTP(w, r)
}

// memory reads VmRSS, VmHWM and RssAnon (KiB) of pid from /proc. RssAnon
// is the capsule's own memory; the rest of VmRSS is file pages (the mur
// binary, mapped compiled code) shared through the page cache.
func memory(pid int) (rss, hwm, anon int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		case "RssAnon":
			anon = n
		}
	}
	return rss, hwm, anon
}

func run(murBin, guests, src string, runs int, hold time.Duration, ceiling bool) (err error) {
	murBin, _ = filepath.Abs(murBin)
	guests, _ = filepath.Abs(guests)
	src, _ = filepath.Abs(src)
	root, err := os.MkdirTemp("", "launchbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	home := filepath.Join(root, "home")
	env := append(os.Environ(), "HOME="+home, "OPENAI_API_KEY=")
	mur := func(dir string, args ...string) error {
		cmd := exec.Command(murBin, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("mur %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	for name, dir := range map[string]string{"driver-openai": "drivers/driver-openai", "file-go": "examples/file-go"} {
		pkg := filepath.Join(root, "src", name)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			return err
		}
		if err := copyFile(filepath.Join(src, dir, "murmur.yaml"), filepath.Join(pkg, "murmur.yaml")); err != nil {
			return err
		}
		if err := copyFile(filepath.Join(guests, name+".wasm"), filepath.Join(pkg, name+".wasm")); err != nil {
			return err
		}
		zip := filepath.Join(root, name+".mur.zip")
		if err := mur(root, "build", pkg, "-o", zip); err != nil {
			return err
		}
		if err := mur(root, "publish", zip, "--scope", "murmur"); err != nil {
			return err
		}
	}
	if err := mur(root, "config", "set", "-g", "credentials.OPENAI_API_KEY", "bench-key"); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	p := &probe{prov: &providertest.Server{}, hold: hold, first: make(chan time.Time, 1)}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	capDir := filepath.Join(root, "cap")
	if err := os.MkdirAll(capDir, 0o755); err != nil {
		return err
	}
	extra := ""
	if ceiling {
		extra = "  max_session_tokens: 200000\n"
	}
	m := strings.NewReplacer("%ENDPOINT%", "http://"+ln.Addr().String(), "%EXTRA%", extra).Replace(capsule)
	if err := os.WriteFile(filepath.Join(capDir, "murmur.yaml"), []byte(m), 0o644); err != nil {
		return err
	}
	if err := mur(capDir, "install"); err != nil {
		return err
	}

	var first, total, turn2 []time.Duration
	var rss, hwm, anon []int64
	for i := -warmups; i < runs; i++ {
		// Two turns: a tool call, then the answer; the second request
		// measures a turn's runtime overhead through the real driver.
		p.prov.Push(
			providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "file-go", Input: `{"op":"write","path":"a.txt","content":"hi"}`}}, InputTokens: 10, OutputTokens: 5},
			providertest.Step{Text: "done", InputTokens: 20, OutputTokens: 2},
		)
		p.mu.Lock()
		p.turns = nil
		p.mu.Unlock()
		argv := []string{murBin, "run", "--task", "write a.txt"}
		if wrap != "" && i >= 0 {
			argv = append(strings.Fields(wrap), argv...)
		}
		// A run that hangs is killed, not waited for.
		runCtx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
		defer stop()
		cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = capDir, env
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return err
		}
		p.mu.Lock()
		p.pid = cmd.Process.Pid
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		var got time.Time
		select {
		case got = <-p.first:
		case <-ctx.Done():
		}
		cancel()
		err := cmd.Wait()
		end := time.Now()
		if got.IsZero() || err != nil {
			return fmt.Errorf("run %d: no provider request or failed run: %v\n%s", i, err, out.String())
		}
		p.mu.Lock()
		turns := append([]time.Time(nil), p.turns...)
		r := p.rss
		p.mu.Unlock()
		if i < 0 {
			continue
		}
		first = append(first, got.Sub(start))
		total = append(total, end.Sub(start)-hold)
		if len(turns) == 2 {
			turn2 = append(turn2, turns[1].Sub(turns[0])-hold)
		}
		rss, hwm, anon = append(rss, r[0]), append(hwm, r[1]), append(anon, r[2])
	}
	if fleetSize > 0 {
		defer func() {
			if err == nil {
				err = fleet(murBin, capDir, env, p, fleetSize)
			}
		}()
	}
	fmt.Printf("runs: %d (after %d warm-up), hold %v, spend ceiling %v\n", runs, warmups, hold, ceiling)
	report("start → first provider request", first)
	report("first → second request (tool call + turn, minus hold)", turn2)
	report("whole run (minus hold)", total)
	reportKiB("VmRSS while waiting on the provider", rss)
	reportKiB("  of which RssAnon (not shared file pages)", anon)
	reportKiB("VmHWM (peak RSS) at that point", hwm)
	return nil
}

// fleet starts n runs at once; the probe holds every request until all n
// runs wait on their first, then each run's smaps_rollup is read.
func fleet(murBin, capDir string, env []string, p *probe, n int) error {
	held := make(chan struct{}, n)
	release := make(chan struct{})
	p.mu.Lock()
	p.gate = func() {
		held <- struct{}{}
		<-release
	}
	p.mu.Unlock()
	for range n {
		p.prov.Push(providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "file-go", Input: `{"op":"write","path":"a.txt","content":"hi"}`}}, InputTokens: 10, OutputTokens: 5})
	}
	for range n {
		p.prov.Push(providertest.Step{Text: "done", InputTokens: 20, OutputTokens: 2})
	}
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
		defer stop()
		cmds[i] = exec.CommandContext(ctx, murBin, "run", "--task", "write a.txt")
		cmds[i].Dir, cmds[i].Env = capDir, env
		if err := cmds[i].Start(); err != nil {
			return err
		}
	}
	for range n {
		select {
		case <-held:
		case <-time.After(60 * time.Second):
			close(release)
			return fmt.Errorf("fleet: not every run reached the provider")
		}
	}
	time.Sleep(200 * time.Millisecond) // let each settle into its wait
	var pss, rss, anon, procs []int64
	for _, c := range cmds {
		// A capsule is its mur process and what it started (the sandbox's
		// holder and watcher).
		tree := descendants(c.Process.Pid)
		sum := map[string]int64{}
		for _, pid := range tree {
			for k, v := range rollup(pid) {
				sum[k] += v
			}
		}
		pss, rss, anon = append(pss, sum["Pss"]), append(rss, sum["Rss"]), append(anon, sum["Anonymous"])
		procs = append(procs, int64(len(tree)))
	}
	close(release)
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			return fmt.Errorf("fleet run: %w", err)
		}
	}
	fmt.Printf("fleet: %d capsules waiting on the provider at once, %d–%d processes each (mur and its sandbox helpers)\n",
		n, pct(procs, func(a, b int64) bool { return a < b }, 0), pct(procs, func(a, b int64) bool { return a < b }, 1))
	reportKiB("  PSS per capsule (its share of what the fleet maps)", pss)
	reportKiB("  RSS per capsule (sum over its processes)", rss)
	reportKiB("  of which anonymous (private)", anon)
	return nil
}

// descendants returns pid and every process below it.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The parent pid is the second field after the command's ")".
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				children[ppid] = append(children[ppid], child)
			}
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// rollup reads /proc/<pid>/smaps_rollup's kB fields.
func rollup(pid int) map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err == nil {
			out[k] = n
		}
	}
	return out
}

func pct[T any](xs []T, less func(a, b T) bool, q float64) T {
	s := append([]T(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return less(s[i], s[j]) })
	i := int(q*float64(len(s)-1) + 0.5)
	return s[i]
}

func report(name string, xs []time.Duration) {
	if len(xs) == 0 {
		return
	}
	less := func(a, b time.Duration) bool { return a < b }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
	fmt.Printf("%-56s p50 %s  p95 %s  min %s  max %s\n", name, ms(pct(xs, less, 0.5)), ms(pct(xs, less, 0.95)), ms(pct(xs, less, 0)), ms(pct(xs, less, 1)))
}

func reportKiB(name string, xs []int64) {
	if len(xs) == 0 {
		return
	}
	less := func(a, b int64) bool { return a < b }
	mb := func(k int64) string { return fmt.Sprintf("%.1f MB", float64(k)/1024) }
	fmt.Printf("%-56s p50 %s  p95 %s  min %s  max %s\n", name, mb(pct(xs, less, 0.5)), mb(pct(xs, less, 0.95)), mb(pct(xs, less, 0)), mb(pct(xs, less, 1)))
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
