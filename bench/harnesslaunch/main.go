//go:build linux

// Command harnesslaunch measures what mur adds to starting a harness CLI
// under transport: process (spec 004; issue #16's goal: at most 30 ms):
// one task run by process.Transport — the driver's launch() and
// parse-line() calls, the harness's environment rows, the session's
// sandbox (contained init, Landlock, seccomp, rlimits, cgroup scope,
// namespaces) and the loopback tool server in its network namespace
// with a fresh token — against starting the same harness binary directly
// with the same arguments and stdin and reading it to its exit. The
// harness is tools/harness-fake with the script "result ok" (its session
// and result lines), so what is measured is the launch, not a model. The
// two run interleaved, rotating which goes first, so load drifts hit
// each alike; it prints p50/p95 of each and of the per-pair difference.
//
//	harnesslaunch -driver build/guests/process-driver-skeleton-go.wasm -harness /path/to/harness-fake [-n 100] [-gap 20ms]
//
// Needs root (cgroups, namespaces).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/mcp"
	"github.com/murmur/mur/internal/process"
	"github.com/murmur/mur/internal/sandbox"
	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
)

func main() {
	sandbox.Main()
	n := flag.Int("n", 100, "launches per variant")
	gap := flag.Duration("gap", 20*time.Millisecond, "pause between launches")
	drv := flag.String("driver", "build/guests/process-driver-skeleton-go.wasm", "the process driver skeleton component")
	harness := flag.String("harness", "", "tools/harness-fake, built (required)")
	flag.Parse()
	if err := run(*n, *gap, *drv, *harness); err != nil {
		fmt.Fprintln(os.Stderr, "harnesslaunch:", err)
		os.Exit(1)
	}
}

// oneTool is the tool set the server offers: one tool, never called.
type oneTool struct{}

func (oneTool) ToolDefs() []agent.ToolDef {
	return []agent.ToolDef{{Name: "noop", Description: "does nothing", InputSchema: []byte(`{"type":"object"}`)}}
}
func (oneTool) CallTool(context.Context, agent.ToolCall) (string, bool) { return "", false }

type discard struct{}

func (discard) Emit(event.Event) {}

const script = "result ok\n"

var errRun = errors.New("the run through mur failed")

func run(n int, gap time.Duration, drvPath, harness string) error {
	if harness == "" {
		return errors.New("-harness is required")
	}
	harness, err := filepath.Abs(harness)
	if err != nil {
		return err
	}
	ctx := context.Background()
	b, err := os.ReadFile(drvPath)
	if err != nil {
		return err
	}
	rt, err := component.New(cm.Config{})
	if err != nil {
		return err
	}
	defer rt.Close()
	c, err := rt.Compile(b)
	if err != nil {
		return err
	}
	inst, err := rt.Instantiate(ctx, c, component.Options{Name: "skeleton", Policy: wasi.Policy{}})
	if err != nil {
		return err
	}
	defer inst.Close()
	d, err := inst.ProcessDriver()
	if err != nil {
		return err
	}
	desc, err := d.Describe(ctx)
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "harnesslaunch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	dirs := map[string]string{}
	for _, k := range []string{"work", "home", "tmp", "logs"} {
		dirs[k] = filepath.Join(root, k)
		if err := os.MkdirAll(dirs[k], 0o755); err != nil {
			return err
		}
	}
	// The policy a scoped capsule's shell command runs under, the
	// harness granted its binary as mur grants it.
	sb, err := sandbox.NewSession(ctx, sandbox.Policy{
		Workdir: dirs["work"], Home: dirs["home"], Tmp: dirs["tmp"],
		ExecPaths: []string{harness},
		Floor:     sandbox.Scoped,
		Network:   sandbox.Network{Allow: []sandbox.AllowHost{{Host: "127.0.0.1", Port: 9}}},
		Cgroup:    sandbox.Cgroup{MemoryBytes: 4 << 30, PidsMax: 256, IOBytesPerSec: 100 << 20},
		Rlimits:   sandbox.Rlimits{MaxProcesses: 128, MaxOpenFiles: 1024, MaxFileSizeBytes: 4 << 30, MemoryBytes: 2 << 30},
	})
	if err != nil {
		return err
	}
	defer sb.Close()
	env := process.Env{Allow: [][2]string{{"HOME", os.Getenv("HOME")}}, Account: [][2]string{{"USER", "bench"}},
		Session: [][2]string{{"MURMUR_RUNTIME_DIR", root}, {"MURMUR_RECORDS_DIR", root}}}
	tr := &process.Transport{
		Driver: d, DriverName: "local/process-driver-skeleton-go", Desc: desc, Binary: harness, Version: "1.2.3",
		Env: env, Starter: sb, Workdir: dirs["work"], Logs: dirs["logs"], Events: discard{},
		Tools: func(ctx context.Context, touch func()) (component.ToolServer, func(), error) {
			ln, err := sb.ListenLoopback()
			if err != nil {
				return component.ToolServer{}, nil, err
			}
			lb, err := mcp.ServeLoopbackOn(ln, oneTool{}, mcp.Options{Name: "bench", Version: "0"})
			if err != nil {
				return component.ToolServer{}, nil, err
			}
			return component.ToolServer{URL: lb.URL, Token: lb.Token, ToolNames: []string{"noop"}}, func() { lb.Close() }, nil
		},
	}
	// Direct: the plan the driver makes for the same task with a tool
	// server, started with no sandbox and no server.
	plan, err := d.Launch(ctx, component.LaunchRequest{Prompt: script, MaxTurns: 0,
		Tools: &component.ToolServer{URL: "http://127.0.0.1:9/mcp", Token: "t", ToolNames: []string{"noop"}}})
	if err != nil {
		return err
	}
	direct := func() error {
		cmd := exec.Command(harness, plan.Args...)
		cmd.Dir, cmd.Env = dirs["work"], env.Harness(plan.EnvSet)
		cmd.Stdin = strings.NewReader(script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		out, err := cmd.Output()
		if err != nil {
			return err
		}
		if !strings.Contains(string(out), `"result"`) {
			return fmt.Errorf("direct: no result in %q", out)
		}
		return nil
	}
	// A run that fails is counted and reported with the harness's log,
	// not timed: the figure is about launches that worked.
	var failed []string
	viaMur := func(i int) error {
		o := tr.RunTask(ctx, agent.Task{ID: fmt.Sprintf("tsk_%d", i), Text: script})
		if o.Status != agent.ExitOK || o.Answer != "ok" {
			log, _ := os.ReadFile(filepath.Join(dirs["logs"], "harness.log"))
			failed = append(failed, fmt.Sprintf("%s: %s (harness.log: %q)", o.Code, o.Reason, log))
			return errRun
		}
		return nil
	}
	// Warm both paths (page cache, the driver's first calls).
	for i := 0; i < 3; i++ {
		if err := direct(); err != nil {
			return err
		}
		if err := viaMur(-1 - i); err != nil {
			return err
		}
	}
	// CPU time (this process and its reaped children, user + system) is
	// timed too: on a loaded machine the wall figures are mostly the
	// scheduler's, the CPU a launch burns is not.
	var ds, ms, diffs, dcpu, mcpu, cdiffs []time.Duration
	for i := 0; i < n; i++ {
		var dd, md, dc, mc time.Duration
		for k := 0; k < 2; k++ {
			time.Sleep(gap)
			c0 := cpuTime()
			t0 := time.Now()
			if (i+k)%2 == 0 {
				if err := direct(); err != nil {
					return err
				}
				dd, dc = time.Since(t0), cpuTime()-c0
			} else {
				if err := viaMur(i); err != nil {
					md = -1
					continue
				}
				md, mc = time.Since(t0), cpuTime()-c0
			}
		}
		if md < 0 {
			continue
		}
		ds, ms, diffs = append(ds, dd), append(ms, md), append(diffs, md-dd)
		dcpu, mcpu, cdiffs = append(dcpu, dc), append(mcpu, mc), append(cdiffs, mc-dc)
	}
	if len(ms) == 0 {
		return fmt.Errorf("every run through mur failed: %v", failed)
	}
	fmt.Printf("harness launch to exit, %d interleaved pairs (gap %s), %d runs through mur failed:\n", len(ms), gap, len(failed))
	for _, f := range failed {
		fmt.Println("  failed:", f)
	}
	for _, v := range []struct {
		name string
		d    []time.Duration
	}{{"direct (exec, no sandbox, no server)", ds}, {"mur (driver, env, sandbox, tool server)", ms}, {"mur - direct, per pair", diffs},
		{"CPU: direct", dcpu}, {"CPU: mur", mcpu}, {"CPU: mur - direct, per pair", cdiffs}} {
		p50, p95 := pct(v.d, 50), pct(v.d, 95)
		fmt.Printf("  %-42s p50 %7.2f ms  p95 %7.2f ms\n", v.name, ms1(p50), ms1(p95))
	}
	return nil
}

// cpuTime is the user and system time of this process and of its
// children that have been waited for.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

func pct(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms1(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
