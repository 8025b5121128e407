// Command doorbench measures a real `mur run` serving its A2A door: the
// proportional set size (PSS) of capsules idling with their door open, and
// TASKS sequential tasks through one queue + sleep capsule — each a
// blocking SendMessage whose one model call the provider double answers at
// once — with the per-task latency and the capsule's resident memory after
// the first 100 tasks and after the last. It sets up its own HOME: the
// driver built into a .mur.zip, published to the global store and
// installed into a capsule pinned by murmur.lock.
//
//	doorbench -mur bin/mur -guests build/guests [-tasks 1000] [-fleet 8]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/murmur/mur/bench/internal/procmem"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/murmur/mur/internal/providertest"
)

const capsule = `name: doorbench
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      api_key: ${OPENAI_API_KEY}
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
lifecycle:
  task_acceptance: queue
  after_task: sleep
`

func main() {
	murBin := flag.String("mur", "bin/mur", "mur binary to measure")
	guests := flag.String("guests", "build/guests", "directory of built components")
	src := flag.String("src", ".", "repository root (artifact murmur.yaml sources)")
	tasks := flag.Int("tasks", 1000, "sequential tasks through one capsule")
	fleet := flag.Int("fleet", 8, "capsules idling at once with their doors open, for PSS")
	flag.IntVar(&mapsTop, "maps", 0, "print the N mappings whose Anonymous grew most from task 100 to the last")
	flag.Parse()
	if err := run(*murBin, *guests, *src, *tasks, *fleet); err != nil {
		fmt.Fprintf(os.Stderr, "doorbench: %v\n", err)
		os.Exit(1)
	}
}

func run(murBin, guests, src string, tasks, fleet int) error {
	murBin, _ = filepath.Abs(murBin)
	guests, _ = filepath.Abs(guests)
	src, _ = filepath.Abs(src)
	root, err := os.MkdirTemp("", "doorbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	env := append(os.Environ(), "HOME="+filepath.Join(root, "home"), "OPENAI_API_KEY=")
	mur := func(dir string, args ...string) error {
		cmd := exec.Command(murBin, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("mur %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	pkg := filepath.Join(root, "src", "driver-openai")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return err
	}
	for from, to := range map[string]string{
		filepath.Join(src, "drivers/driver-openai/murmur.yaml"): filepath.Join(pkg, "murmur.yaml"),
		filepath.Join(guests, "driver-openai.wasm"):             filepath.Join(pkg, "driver-openai.wasm"),
	} {
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return err
		}
	}
	zip := filepath.Join(root, "driver-openai.mur.zip")
	for _, args := range [][]string{{"build", pkg, "-o", zip}, {"publish", zip, "--scope", "murmur"},
		{"config", "set", "-g", "credentials.OPENAI_API_KEY", "bench-key"}} {
		if err := mur(root, args...); err != nil {
			return err
		}
	}
	prov, err := providertest.Serve()
	if err != nil {
		return err
	}
	defer prov.Close()
	capDir := filepath.Join(root, "cap")
	if err := os.MkdirAll(capDir, 0o755); err != nil {
		return err
	}
	m := strings.ReplaceAll(capsule, "%ENDPOINT%", prov.URL)
	if err := os.WriteFile(filepath.Join(capDir, "murmur.yaml"), []byte(m), 0o644); err != nil {
		return err
	}
	if err := mur(capDir, "install"); err != nil {
		return err
	}
	start := func() (*exec.Cmd, string, error) {
		port, err := freePort()
		if err != nil {
			return nil, "", err
		}
		addr := "127.0.0.1:" + port
		cmd := exec.Command(murBin, "run", "--bind", addr)
		cmd.Dir, cmd.Env = capDir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			return nil, "", err
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			resp, err := http.Get("http://" + addr + "/.well-known/agent-card.json")
			if err == nil {
				resp.Body.Close()
				return cmd, addr, nil
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				return nil, "", fmt.Errorf("no door at %s after 60 s:\n%s", addr, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	stop := func(cmd *exec.Cmd) error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		return cmd.Wait()
	}

	// A warm-up capsule fills the compile cache and stamps the install's
	// verification, as a user's second launch finds them.
	prov.Push(providertest.Step{Text: "warm", InputTokens: 10, OutputTokens: 1})
	cmd, addr, err := start()
	if err != nil {
		return err
	}
	if _, err := send(addr, 0); err != nil {
		return err
	}
	if err := stop(cmd); err != nil {
		return fmt.Errorf("warm-up capsule: %w", err)
	}

	fmt.Printf("machine: %d cores, load %s, %s\n", nproc(), loadavg(), time.Now().UTC().Format(time.RFC3339))
	// The fleet: capsules idling with their doors open, no task yet.
	var cmds []*exec.Cmd
	for range fleet {
		c, _, err := start()
		if err != nil {
			return err
		}
		cmds = append(cmds, c)
	}
	time.Sleep(2 * time.Second) // the sandbox is set up off the launch's path
	var pss, rss []int64
	for _, c := range cmds {
		r := procmem.Rollup(c.Process.Pid)
		pss, rss = append(pss, r["Pss"]), append(rss, r["Rss"])
	}
	for _, c := range cmds {
		if err := stop(c); err != nil {
			return fmt.Errorf("fleet capsule: %w", err)
		}
	}
	fmt.Printf("idle capsules with the door open: %d\n", fleet)
	reportKiB("  PSS per capsule", pss)
	reportKiB("  RSS per capsule", rss)

	// Sequential tasks through one capsule.
	for range tasks {
		prov.Push(providertest.Step{Text: "done", InputTokens: 10, OutputTokens: 1})
	}
	cmd, addr, err = start()
	if err != nil {
		return err
	}
	var lat []time.Duration
	var at100 map[string]int64
	for i := 1; i <= tasks; i++ {
		d, err := send(addr, i)
		if err != nil {
			_ = stop(cmd)
			return fmt.Errorf("task %d: %w", i, err)
		}
		lat = append(lat, d)
		if i == 100 {
			at100 = procmem.Rollup(cmd.Process.Pid)
			maps100 = mappings(cmd.Process.Pid)
		}
		if i%1000 == 0 && i < tasks {
			r := procmem.Rollup(cmd.Process.Pid)
			fmt.Printf("  after task %d: Rss %.1f MB, Anonymous %.1f MB\n", i, mb(r["Rss"]), mb(r["Anonymous"]))
		}
	}
	atEnd := procmem.Rollup(cmd.Process.Pid)
	mapsEnd := mappings(cmd.Process.Pid)
	kept, err := lastTaskBytes(addr)
	if err != nil {
		_ = stop(cmd)
		return err
	}
	if err := stop(cmd); err != nil {
		return fmt.Errorf("task capsule: %w", err)
	}
	fmt.Printf("sequential tasks: %d (blocking SendMessage, one model call each, the double answers at once)\n", tasks)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("  per task: p50 %.2f ms, p90 %.2f ms, max %.2f ms\n", ms(lat[len(lat)/2]), ms(lat[len(lat)*9/10]), ms(lat[len(lat)-1]))
	fmt.Printf("  the door keeps each ended task as JSON: the newest is %d bytes (history and artifacts included)\n", kept)
	for _, k := range []string{"Rss", "Pss", "Anonymous"} {
		fmt.Printf("  %s after task 100: %.1f MB, after task %d: %.1f MB, growth %+.2f MB\n",
			k, mb(at100[k]), tasks, mb(atEnd[k]), mb(atEnd[k]-at100[k]))
	}
	if mapsTop > 0 {
		printMapGrowth(maps100, mapsEnd, mapsTop)
	}
	return nil
}

var (
	mapsTop int
	maps100 map[string]mapping
)

// mapping is one VMA of /proc/PID/smaps: its size and anonymous kB.
type mapping struct {
	head       string // "start-end perms offset dev inode [name]"
	size, anon int64
}

// mappings reads /proc/PID/smaps keyed by the mapping's start address (a
// VMA that keeps its start keeps its key while it grows at the end).
func mappings(pid int) map[string]mapping {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil
	}
	out := map[string]mapping{}
	var cur string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			cur = strings.SplitN(f[0], "-", 2)[0]
			out[cur] = mapping{head: line}
			continue
		}
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		m := out[cur]
		switch f[0] {
		case "Size:":
			m.size = n
		case "Anonymous:":
			m.anon = n
		}
		out[cur] = m
	}
	return out
}

// printMapGrowth lists the mappings whose anonymous memory grew most.
func printMapGrowth(before, after map[string]mapping, top int) {
	type row struct {
		m     mapping
		delta int64
	}
	var rows []row
	for k, m := range after {
		if d := m.anon - before[k].anon; d != 0 {
			rows = append(rows, row{m, d})
		}
	}
	for k, m := range before {
		if _, ok := after[k]; !ok {
			rows = append(rows, row{mapping{head: "(gone) " + m.head, size: m.size}, -m.anon})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].delta > rows[j].delta })
	fmt.Printf("  mappings by Anonymous growth, task 100 → last (kB):\n")
	for i, r := range rows {
		if i == top {
			break
		}
		fmt.Printf("    %+6d of %7d  %s\n", r.delta, r.m.size, r.m.head)
	}
}

// lastTaskBytes is the size of the newest task as the door keeps it: the
// JSON of ListTasks' first entry with its whole history and artifacts.
func lastTaskBytes(addr string) (int, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":1,"includeArtifacts":true}}`
	b, err := rpc(addr, body)
	if err != nil {
		return 0, err
	}
	var resp struct {
		Result struct {
			Tasks []json.RawMessage `json:"tasks"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || len(resp.Result.Tasks) != 1 {
		return 0, fmt.Errorf("ListTasks answered %s", b)
	}
	return len(resp.Result.Tasks[0]), nil
}

func rpc(addr, body string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// send runs one task to its end with a blocking SendMessage.
func send(addr string, i int) (time.Duration, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"task %d"}]}}}`, i, i, i)
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if !bytes.Contains(b, []byte("TASK_STATE_COMPLETED")) {
		return 0, fmt.Errorf("answered %s", b)
	}
	return d, nil
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}

func reportKiB(name string, xs []int64) {
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	fmt.Printf("%s: median %.1f MB, min %.1f MB, max %.1f MB\n", name, mb(xs[len(xs)/2]), mb(xs[0]), mb(xs[len(xs)-1]))
}

func mb(kib int64) float64       { return float64(kib) / 1024 }
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func nproc() int                 { n, _ := strconv.Atoi(strings.TrimSpace(run1("nproc"))); return n }
func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
func run1(name string, a ...string) string {
	b, _ := exec.Command(name, a...).Output()
	return string(b)
}
