//go:build linux

// Command sandboxcall measures one sandboxed call: /bin/true run N times
// through mur's sandbox along the path a shell tool call takes
// (shell.Session.Run over a sandbox.Session: environment rows, pipes,
// process group, the contained init, Landlock, seccomp, rlimits, cgroup
// limits, capability drop, the session's network, mount, IPC and PID
// namespaces) and through bubblewrap with a comparable per-call policy
// (new network, mount, PID, IPC and UTS namespaces, read-only system binds,
// the session folders bound in, a fresh /proc and /dev, mur's own seccomp
// filter, every capability dropped, a new session). The variants run
// interleaved, rotating which goes first, so load drifts hit each alike; it
// prints p50/p95 per variant and each one's ratio to bwrap.
//
//	sandboxcall [-n 200] [-gap 20ms] [-helper name=path ...] [-bwrap /usr/bin/bwrap]
//
// Each -helper runs the mur path with that binary as the sandbox's helper
// (bin/mur re-executed, as mur did before cmd/mur-sandbox; bin/mur-sandbox).
// Needs root (cgroups, namespaces).
package main

import (
	"bytes"
	"context"
	"encoding/binary"
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

	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/sandbox"
	"github.com/murmur/mur/internal/shell"
)

type helpers []string

func (h *helpers) String() string     { return strings.Join(*h, ",") }
func (h *helpers) Set(v string) error { *h = append(*h, v); return nil }

type variant struct {
	name string
	run  func() error
	ds   []time.Duration
	cpu  time.Duration // children's user+system CPU over all calls
}

// childCPU is the user+system CPU of this process's waited-for children
// (and theirs): a call's helper, target, bwrap and its own children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	sandbox.Main()
	n := flag.Int("n", 200, "calls per variant")
	gap := flag.Duration("gap", 20*time.Millisecond, "idle pause before each call (untimed), as between an agent's calls")
	bwrap := flag.String("bwrap", "/usr/bin/bwrap", "bubblewrap binary (\"\" skips it)")
	var hs helpers
	flag.Var(&hs, "helper", "name=path of a sandbox helper binary to measure (repeatable); default: bin/mur-sandbox")
	flag.Parse()
	if len(hs) == 0 {
		hs = helpers{"mur-sandbox=bin/mur-sandbox"}
	}
	if err := run(*n, *gap, *bwrap, hs); err != nil {
		fmt.Fprintf(os.Stderr, "sandboxcall: %v\n", err)
		os.Exit(1)
	}
}

func run(n int, gap time.Duration, bwrap string, hs helpers) error {
	// Not under /tmp, where the session tmp is mapped (bwrap and mur alike).
	root, err := os.MkdirTemp("/var/tmp", "sandboxcall-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	dirs := map[string]string{}
	for _, d := range []string{"work", "home", "tmp", "run", "rec"} {
		dirs[d] = filepath.Join(root, d)
		if err := os.MkdirAll(dirs[d], 0o755); err != nil {
			return err
		}
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	// The policy a shell tool call of a scoped capsule runs under: limits
	// as the manifest's defaults set them, one allowed host (so the
	// egress is up).
	pol := sandbox.Policy{
		Workdir: dirs["work"], Home: dirs["home"], Tmp: dirs["tmp"],
		ExecPaths: []string{truePath},
		Floor:     sandbox.Scoped,
		Network:   sandbox.Network{Allow: []sandbox.AllowHost{{Host: "127.0.0.1", Port: 9}}},
		Cgroup:    sandbox.Cgroup{MemoryBytes: 4 << 30, PidsMax: 256, IOBytesPerSec: 100 << 20},
		Rlimits:   sandbox.Rlimits{MaxProcesses: 128, MaxOpenFiles: 1024, MaxFileSizeBytes: 4 << 30, MemoryBytes: 2 << 30},
	}
	var vs []*variant
	vs = append(vs, &variant{name: "bare fork/exec", run: func() error { return runPiped(exec.Command(truePath)) }})
	if bwrap != "" {
		args, filter, err := bwrapArgs(dirs, truePath)
		if err != nil {
			return err
		}
		vs = append(vs, &variant{name: "bwrap", run: func() error {
			f, err := os.Open(filter)
			if err != nil {
				return err
			}
			defer f.Close()
			cmd := exec.Command(bwrap, args...)
			cmd.ExtraFiles = []*os.File{f}
			return runPiped(cmd)
		}})
	}
	ctx := context.Background()
	for _, h := range hs {
		name, path, ok := strings.Cut(h, "=")
		if !ok {
			return fmt.Errorf("-helper %q: want name=path", h)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		if _, err := os.Stat(abs); err != nil {
			return fmt.Errorf("helper %s: %w", name, err)
		}
		// Each helper gets a session of its own, started with it (the
		// holder and watcher are the helper too).
		sandbox.SetHelper(abs)
		sb, err := sandbox.NewSession(ctx, pol)
		if err != nil {
			return fmt.Errorf("sandbox session (%s): %w", name, err)
		}
		defer sb.Close()
		sh, err := shell.New(shell.Policy{
			Allow: []string{"true"}, PATH: filepath.Dir(truePath),
			Workdir: dirs["work"], Home: dirs["home"], Tmp: dirs["tmp"], TmpMapped: sb.TmpMapped(),
			RuntimeDir: dirs["run"], RecordsDir: dirs["rec"], SessionID: "ses_bench",
		}, sb, event.SinkFunc(func(event.Event) {}))
		if err != nil {
			return err
		}
		defer sh.Close(ctx)
		// The helper's own start and exit, with no spec: what a call pays
		// for starting it at all (the rest is its work and the target).
		vs = append(vs, &variant{name: "helper " + name + " alone (starts, exits)", run: func() error {
			cmd := exec.Command(abs)
			cmd.Args = []string{"mur-sandbox"}
			err := runPiped(cmd)
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 2 {
				return nil
			}
			return err
		}})
		vs = append(vs, &variant{name: "mur, helper " + name, run: func() error {
			sandbox.SetHelper(abs)
			r, err := sh.Run(ctx, "true", nil)
			if err == nil && r.ExitCode != 0 {
				err = fmt.Errorf("exit %d: %s", r.ExitCode, r.Stderr)
			}
			return err
		}})
	}
	// One untimed warm-up call each: page cache, first namespace use.
	for _, v := range vs {
		if err := v.run(); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
	}
	for i := 0; i < n; i++ {
		for j := range vs {
			v := vs[(i+j)%len(vs)]
			time.Sleep(gap)
			c0, t0 := childCPU(), time.Now()
			if err := v.run(); err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			v.ds = append(v.ds, time.Since(t0))
			v.cpu += childCPU() - c0
		}
	}
	var base time.Duration
	for _, v := range vs {
		sort.Slice(v.ds, func(a, b int) bool { return v.ds[a] < v.ds[b] })
		if v.name == "bwrap" {
			base = pct(v.ds, 50)
		}
	}
	la, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("%d calls per variant, interleaved, %v idle before each; load %s\n", n, gap, strings.Join(strings.Fields(string(la))[:3], " "))
	fmt.Printf("| variant | p50 | p95 | p50 / bwrap p50 | CPU per call (children) |\n| --- | --- | --- | --- | --- |\n")
	for _, v := range vs {
		ratio := "–"
		if base > 0 {
			ratio = fmt.Sprintf("%.2f", float64(pct(v.ds, 50))/float64(base))
		}
		fmt.Printf("| %s | %.2f ms | %.2f ms | %s | %.2f ms |\n", v.name, ms(pct(v.ds, 50)), ms(pct(v.ds, 95)), ratio, ms(v.cpu/time.Duration(len(v.ds))))
	}
	return nil
}

func pct(ds []time.Duration, p int) time.Duration { return ds[(len(ds)-1)*p/100] }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// runPiped runs cmd with its output on pipes that are read to the end, as
// the shell reads a call's output.
func runPiped(cmd *exec.Cmd) error {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s", err, errb.String())
	}
	return nil
}

// bwrapArgs is bubblewrap's closest policy to a scoped call: the sandbox's
// own seccomp filter (passed on descriptor 3), new namespaces, the system
// trees read-only, the session folders bound (tmp at /tmp), a fresh /proc
// and /dev, no capabilities, its own session, killed with its parent.
func bwrapArgs(dirs map[string]string, truePath string) (args []string, filter string, err error) {
	prog, err := sandbox.SeccompProgram(false)
	if err != nil {
		return nil, "", err
	}
	var raw bytes.Buffer
	for _, ins := range prog {
		_ = binary.Write(&raw, binary.LittleEndian, ins)
	}
	filter = filepath.Join(dirs["run"], "seccomp.bpf")
	if err := os.WriteFile(filter, raw.Bytes(), 0o600); err != nil {
		return nil, "", err
	}
	args = []string{
		"--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/usr", "/usr",
	}
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib64"} {
		if t, err := os.Readlink(d); err == nil {
			args = append(args, "--symlink", t, d)
		} else if _, err := os.Stat(d); err == nil {
			args = append(args, "--ro-bind", d, d)
		}
	}
	for _, f := range []string{"/etc/ld.so.cache", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts"} {
		args = append(args, "--ro-bind-try", f, f)
	}
	args = append(args,
		"--bind", dirs["work"], dirs["work"], "--bind", dirs["home"], dirs["home"], "--bind", dirs["tmp"], "/tmp",
		"--proc", "/proc", "--dev", "/dev", "--chdir", dirs["work"],
		"--seccomp", "3", truePath)
	return args, filter, nil
}
