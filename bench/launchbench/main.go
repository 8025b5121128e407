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
	"bytes"
	"context"
	"flag"
	"fmt"
	"github.com/murmur/mur/bench/internal/procmem"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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
  limits:
    # A fleet of 100 on 2 cores takes minutes to fill: the first capsule
    # must still be waiting, not past its deadline, when the last arrives.
    deadline_seconds: 3600
inference:
  transport: http
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 4
%EXTRA%`

func main() {
	murBin := flag.String("mur", "bin/mur", "mur binary to measure")
	flag.StringVar(&beforeBin, "before", "", "a second mur binary (the build before a change), run interleaved with -mur")
	flag.StringVar(&floorBin, "floor", "", "the floor program (bench/floor, built static), run interleaved with mur: figures are also reported as mur/floor ratios")
	guests := flag.String("guests", "build/guests", "directory of built components")
	src := flag.String("src", ".", "repository root (artifact murmur.yaml sources)")
	runs := flag.Int("runs", 20, "measured runs of each subject (after the warm-up runs)")
	hold := flag.Duration("hold", 300*time.Millisecond, "how long the provider holds the first request before answering (RSS is sampled at its end)")
	ceiling := flag.Bool("ceiling", false, "also measure a capsule that declares a spend ceiling (max_session_tokens: each request is counted before it is sent), interleaved with the one without")
	flag.StringVar(&wrap, "wrap", "", "command prefix for each measured mur run, split on spaces (e.g. a profiler: perf record -g -o p.data --)")
	flag.IntVar(&fleetSize, "fleet", 0, "after the runs, this many capsules idle at once: report each one's PSS")
	flag.IntVar(&burstSize, "burst", 0, "after the runs, this many launches as fast as the machine allows: CPU-seconds per launch, latency, peak memory")
	flag.IntVar(&burstParallel, "burst-parallel", 0, "launches in flight at once during -burst (default: 2 per core)")
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

var (
	wrap                                string // -wrap
	beforeBin, floorBin                 string // -before, -floor
	fleetSize, burstSize, burstParallel int
)

// probe is the provider double wrapped to timestamp the first request of
// each run and sample the capsule's memory while it waits.
type probe struct {
	prov *providertest.Server
	hold time.Duration

	mu    sync.Mutex
	gate  func(r *http.Request) // when set, every request goes through it first (-fleet, -burst)
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
		gate(r)
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

// subject is one program measured: a mur binary running one capsule, or
// the floor.
type subject struct {
	name  string
	argv  []string
	dir   string
	floor bool

	first, turn2, total []time.Duration
	cpu                 []time.Duration // user+sys of the run's process tree (wait4 rusage)
	rss, hwm, anon      []int64
}

// toolCall is the script of a measured mur run: a tool call, then the
// answer; the second request measures the first tool call and a turn.
var toolCall = []providertest.Step{
	{Calls: []providertest.Call{{ID: "c1", Name: "file-go", Input: `{"op":"write","path":"a.txt","content":"hi"}`}}, InputTokens: 10, OutputTokens: 5},
	{Text: "done", InputTokens: 20, OutputTokens: 2},
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

	install := func(name, extra string) (string, error) {
		capDir := filepath.Join(root, name)
		if err := os.MkdirAll(capDir, 0o755); err != nil {
			return "", err
		}
		m := strings.NewReplacer("%ENDPOINT%", "http://"+ln.Addr().String(), "%EXTRA%", extra).Replace(capsule)
		if err := os.WriteFile(filepath.Join(capDir, "murmur.yaml"), []byte(m), 0o644); err != nil {
			return "", err
		}
		return capDir, mur(capDir, "install")
	}
	capDir, err := install("cap", "")
	if err != nil {
		return err
	}
	dirs := []string{capDir}
	if ceiling {
		d, err := install("cap-ceiling", "  max_session_tokens: 200000\n")
		if err != nil {
			return err
		}
		dirs = append(dirs, d)
	}
	var subjects []*subject
	bins := []string{murBin}
	if beforeBin != "" {
		b, _ := filepath.Abs(beforeBin)
		bins = append([]string{b}, bins...)
	}
	for _, bin := range bins {
		for j, d := range dirs {
			name := "mur"
			if bin != murBin {
				name = "mur -before"
			}
			if j == 1 {
				name += ", spend ceiling"
			}
			subjects = append(subjects, &subject{name: name, argv: []string{bin, "run", "--task", "write a.txt"}, dir: d})
		}
	}

	// Warm-up: each mur subject twice. The first request of the first
	// run is what the floor will send.
	for range warmups {
		for _, s := range subjects {
			if err := s.once(p, env, hold, false); err != nil {
				return err
			}
		}
	}
	if floorBin != "" {
		f, err := floorSubject(floorBin, root, ln.Addr().String(), p.prov.Requests()[0])
		if err != nil {
			return err
		}
		subjects = append([]*subject{f}, subjects...)
	}
	// Measured: subjects in turn, each iteration starting one further, so
	// none always runs right after another.
	for i := range runs {
		for k := range subjects {
			s := subjects[(i+k)%len(subjects)]
			if err := s.once(p, env, hold, true); err != nil {
				return err
			}
		}
	}
	if fleetSize > 0 || burstSize > 0 {
		defer func() {
			if err == nil && burstSize > 0 {
				err = burst(murBin, capDir, env, p, burstSize, burstParallel)
			}
			if err == nil && fleetSize > 0 {
				err = fleet(murBin, capDir, env, p, fleetSize)
			}
		}()
	}
	fmt.Printf("runs: %d of each subject, interleaved (after %d warm-up runs of each mur), hold %v\n", runs, warmups, hold)
	var floor *subject
	for _, s := range subjects {
		if s.floor {
			floor = s
		}
		fmt.Printf("%s:\n", s.name)
		report("  start → first provider request", s.first)
		if !s.floor {
			report("  first answer → next request (first tool call + turn)", s.turn2)
			report("  whole run (minus hold)", s.total)
		}
		report("  CPU user+sys of the run (wait4 rusage; helpers mur reaped)", s.cpu)
		reportKiB("  VmRSS while waiting on the provider", s.rss)
		reportKiB("    of which RssAnon (not shared file pages)", s.anon)
		reportKiB("  VmHWM (peak RSS) at that point", s.hwm)
	}
	if floor != nil {
		fmt.Println("start → first provider request, ratio to the floor (same run):")
		less := func(a, b time.Duration) bool { return a < b }
		for _, s := range subjects {
			if s.floor {
				continue
			}
			fmt.Printf("  %-54s p50 %.2f×  p95 %.2f×\n", s.name,
				float64(pct(s.first, less, 0.5))/float64(pct(floor.first, less, 0.5)),
				float64(pct(s.first, less, 0.95))/float64(pct(floor.first, less, 0.95)))
		}
	}
	return nil
}

// floorSubject writes mur's first request for the floor program to send.
func floorSubject(bin, root, addr string, req providertest.Request) (*subject, error) {
	bin, _ = filepath.Abs(bin)
	body := filepath.Join(root, "first-request.json")
	if err := os.WriteFile(body, req.Raw, 0o644); err != nil {
		return nil, err
	}
	argv := []string{bin, "-url", "http://" + addr + req.Path, "-body", body}
	for k, vs := range req.Header {
		switch k {
		case "Content-Length", "Accept-Encoding", "User-Agent":
			continue // net/http writes its own
		}
		for _, v := range vs {
			argv = append(argv, "-H", k+": "+v)
		}
	}
	return &subject{name: "floor (static Go POST)", argv: argv, dir: root, floor: true}, nil
}

// once runs s one time; measured runs are kept in s.
func (s *subject) once(p *probe, env []string, hold time.Duration, measured bool) error {
	if s.floor {
		p.prov.Push(providertest.Step{Text: "done", InputTokens: 20, OutputTokens: 2})
	} else {
		p.prov.Push(toolCall...)
	}
	p.mu.Lock()
	p.turns = nil
	p.mu.Unlock()
	argv := s.argv
	if wrap != "" && measured && !s.floor {
		argv = append(strings.Fields(wrap), argv...)
	}
	// A run that hangs is killed, not waited for.
	runCtx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stop()
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = s.dir, env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	p.mu.Lock()
	p.pid = cmd.Process.Pid
	p.mu.Unlock()
	var got time.Time
	select {
	case got = <-p.first:
	case <-time.After(60 * time.Second):
	}
	err := cmd.Wait()
	end := time.Now()
	if got.IsZero() || err != nil {
		return fmt.Errorf("%s: no provider request or failed run: %v\n%s", s.name, err, out.String())
	}
	p.mu.Lock()
	turns := append([]time.Time(nil), p.turns...)
	r := p.rss
	p.mu.Unlock()
	if !measured {
		return nil
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s.cpu = append(s.cpu, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
	s.first = append(s.first, got.Sub(start))
	s.total = append(s.total, end.Sub(start)-hold)
	if len(turns) == 2 {
		s.turn2 = append(s.turn2, turns[1].Sub(turns[0])-hold)
	}
	s.rss, s.hwm, s.anon = append(s.rss, r[0]), append(s.hwm, r[1]), append(s.anon, r[2])
	return nil
}

// fleet starts n runs at once; the probe holds every request until all n
// runs wait on their first, then each run's smaps_rollup is read.
func fleet(murBin, capDir string, env []string, p *probe, n int) error {
	held := make(chan struct{}, n)
	release := make(chan struct{})
	p.mu.Lock()
	p.gate = func(*http.Request) {
		held <- struct{}{}
		<-release
	}
	p.mu.Unlock()
	// One answer per run: after the release the runs' requests reach the
	// script in any order, so every step must suit any run.
	for range n {
		p.prov.Push(providertest.Step{Text: "done", InputTokens: 20, OutputTokens: 2})
	}
	// Launches start a few at a time (2 per core): a capsule waiting on
	// the provider costs no CPU, so the fleet grows to n without n
	// launches fighting for the cores at once.
	inFlight := 2 * runtime.NumCPU()
	waiting := 0
	awaitOne := func() error {
		select {
		case <-held:
			waiting++
			return nil
		case <-time.After(2 * time.Minute):
			close(release)
			return fmt.Errorf("fleet: %d of %d runs reached the provider", waiting, n)
		}
	}
	cmds := make([]*exec.Cmd, n)
	outs := make([]*strings.Builder, n)
	for i := range cmds {
		if i-waiting >= inFlight {
			if err := awaitOne(); err != nil {
				return err
			}
		}
		ctx, stop := context.WithTimeout(context.Background(), 15*time.Minute)
		defer stop()
		cmds[i] = exec.CommandContext(ctx, murBin, "run", "--task", "write a.txt")
		cmds[i].Dir, cmds[i].Env = capDir, env
		outs[i] = &strings.Builder{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			return err
		}
	}
	for waiting < n {
		if err := awaitOne(); err != nil {
			return err
		}
	}
	time.Sleep(200 * time.Millisecond) // let each settle into its wait
	var pss, rss, anon, procs []int64
	for _, c := range cmds {
		// A capsule is its mur process and what it started (the sandbox's
		// holder and watcher).
		tree := procmem.Descendants(c.Process.Pid)
		sum := map[string]int64{}
		for _, pid := range tree {
			for k, v := range procmem.Rollup(pid) {
				sum[k] += v
			}
		}
		pss, rss, anon = append(pss, sum["Pss"]), append(rss, sum["Rss"]), append(anon, sum["Anonymous"])
		procs = append(procs, int64(len(tree)))
	}
	close(release)
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			return fmt.Errorf("fleet run: %w\n%s", err, outs[i])
		}
	}
	fmt.Printf("fleet: %d capsules waiting on the provider at once, %d–%d processes each (mur and its sandbox helpers)\n",
		n, pct(procs, func(a, b int64) bool { return a < b }, 0), pct(procs, func(a, b int64) bool { return a < b }, 1))
	reportKiB("  PSS per capsule (its share of what the fleet maps)", pss)
	reportKiB("  RSS per capsule (sum over its processes)", rss)
	reportKiB("  of which anonymous (private)", anon)
	return nil
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

// launchTag finds the burst launch a request belongs to in its body (the
// task text travels in the first request).
var launchTag = regexp.MustCompile(`burst launch (\d+):`)

// burst launches n runs of the capsule, par in flight at once, each a
// one-turn task the provider answers at once. CPU time is the wait4
// rusage of every process the launches made: mur's own (which counts the
// helpers it reaped) and that of any helper that outlived its mur, which
// is reparented to this process (a child subreaper) and reaped here.
func burst(murBin, capDir string, env []string, p *probe, n, par int) error {
	if par <= 0 {
		par = 2 * runtime.NumCPU()
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("burst: become a subreaper: %w", err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	var mu sync.Mutex
	firsts := make([]time.Time, n)
	p.mu.Lock()
	p.gate = func(r *http.Request) {
		now := time.Now()
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		if m := launchTag.FindSubmatch(raw); m != nil {
			i, _ := strconv.Atoi(string(m[1]))
			mu.Lock()
			if i < n && firsts[i].IsZero() {
				firsts[i] = now
			}
			mu.Unlock()
		}
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.gate = nil
		p.mu.Unlock()
	}()
	for range n {
		p.prov.Push(providertest.Step{Text: "done", InputTokens: 20, OutputTokens: 2})
	}

	// Peak memory: the host's memory in use, sampled through the burst.
	base := memInUse()
	var peak int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if m := memInUse(); m > peak {
				peak = m
			}
			select {
			case <-stopSampling:
				return
			case <-t.C:
			}
		}
	}()

	starts := make([]time.Time, n)
	var cpu time.Duration
	var maxrss []int64
	var failed error
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
			defer stop()
			cmd := exec.CommandContext(ctx, murBin, "run", "--task", fmt.Sprintf("burst launch %d: answer done", i))
			cmd.Dir, cmd.Env = capDir, env
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			mu.Lock()
			starts[i] = time.Now()
			mu.Unlock()
			err := cmd.Run()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = fmt.Errorf("burst launch %d: %v\n%s", i, err, out.String())
				return
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			maxrss = append(maxrss, ru.Maxrss)
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	close(stopSampling)
	<-sampled
	if failed != nil {
		return failed
	}
	// Helpers that outlived their mur: reap them all (none else is a
	// child of this process now).
	orphans := 0
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		for {
			var ru syscall.Rusage
			if _, err := syscall.Wait4(-1, nil, 0, &ru); err != nil {
				return // ECHILD: none left
			}
			mu.Lock()
			cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			orphans++
			mu.Unlock()
		}
	}()
	select {
	case <-reaped:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("burst: a launch's helper outlived its mur by 30 s")
	}
	var lat []time.Duration
	for i := range n {
		if firsts[i].IsZero() {
			return fmt.Errorf("burst launch %d: its request was not seen", i)
		}
		lat = append(lat, firsts[i].Sub(starts[i]))
	}
	less := func(a, b time.Duration) bool { return a < b }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
	fmt.Printf("burst: %d launches of a one-turn task, %d in flight, in %.2f s (%.1f launches/s)\n", n, par, wall.Seconds(), float64(n)/wall.Seconds())
	fmt.Printf("  CPU per launch (user+sys, wait4 rusage of mur and its helpers; %d helpers reaped after their mur)  %.4f s\n", orphans, cpu.Seconds()/float64(n))
	fmt.Printf("  start → first provider request  p50 %s  p99 %s  max %s\n", ms(pct(lat, less, 0.5)), ms(pct(lat, less, 0.99)), ms(pct(lat, less, 1)))
	fmt.Printf("  peak host memory in use above the burst's start (MemTotal−MemAvailable, every 5 ms)  %.1f MB\n", float64(peak-base)/1024)
	reportKiB("  peak RSS of one launch (wait4 maxrss)", maxrss)
	return nil
}

// memInUse is MemTotal − MemAvailable in KiB.
func memInUse() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	var total, avail int64
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "MemTotal":
			total = n
		case "MemAvailable":
			avail = n
		}
	}
	return total - avail
}
