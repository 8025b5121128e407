//go:build linux

package escape

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	// make test-escape runs the suite on the helper mur installs
	// (bin/mur-sandbox); without it the test binary is its own helper.
	if h := os.Getenv("MUR_TEST_SANDBOX_HELPER"); h != "" {
		sandbox.SetHelper(h)
	}
	if name := os.Getenv("ESCAPE_PROBE"); name != "" {
		os.Exit(runProbe(name))
	}
	if dir := os.Getenv("ESCAPE_RUNTIME"); dir != "" {
		os.Exit(runDoomedRuntime(dir))
	}
	os.Exit(m.Run())
}

type fixture struct {
	t        *testing.T
	s        *sandbox.Session
	p        sandbox.Policy
	base     string
	sibling  string
	hostSock string
	allowed  int
	denied   int
	udp      net.PacketConn
}

// greeter listens on loopback and greets every connection.
func greeter(t *testing.T) int {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func newFixture(t *testing.T, class sandbox.Class, tweak func(*sandbox.Policy)) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{t: t, base: base, sibling: filepath.Join(base, "secret.txt"), hostSock: filepath.Join(base, "host.sock")}
	f.allowed, f.denied = greeter(t), greeter(t)
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	f.udp = udp
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := sandbox.Policy{
		Workdir: filepath.Join(base, "work"), Home: filepath.Join(base, "home"), Tmp: filepath.Join(base, "tmp"),
		ReadOnly:  []string{"ro"},
		ExecPaths: []string{self},
		Network:   sandbox.Network{Allow: []sandbox.AllowHost{{Host: "localhost", Port: f.allowed}}},
		Rlimits:   sandbox.Rlimits{MaxOpenFiles: 256, MaxFileSizeBytes: 2 << 20, CPUSeconds: 1},
		Cgroup:    sandbox.Cgroup{MemoryBytes: 128 << 20, PidsMax: 32, IOBytesPerSec: 100 << 20},
		Floor:     class,
	}
	for _, d := range []string{p.Workdir, p.Home, p.Tmp, filepath.Join(p.Workdir, "ro")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(p.Workdir, "ro", "f"), []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.sibling, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	ul, err := net.Listen("unix", f.hostSock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ul.Close() })
	if tweak != nil {
		tweak(&p)
	}
	s, err := sandbox.NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f.s, f.p = s, p
	return f
}

type result struct {
	out   string
	err   error
	state *os.ProcessState
}

func (r result) code() int {
	if r.state == nil {
		return -1
	}
	return r.state.ExitCode()
}

func (r result) signal() syscall.Signal {
	if r.state != nil {
		if ws, ok := r.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal()
		}
	}
	return 0
}

// probe runs a sandboxed copy of this binary as the named attack.
func (f *fixture) probe(name string) result {
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = []string{
		"ESCAPE_PROBE=" + name, "SIBLING=" + f.sibling, "HOST_SOCK=" + f.hostSock,
		"HOME=" + f.p.Home, "TMPDIR=" + f.p.Tmp, "RUNTIME_PID=" + strconv.Itoa(os.Getpid()),
		"ALLOWED_PORT=" + strconv.Itoa(f.allowed), "DENIED_PORT=" + strconv.Itoa(f.denied),
		"UDP_PORT=" + strconv.Itoa(f.udp.LocalAddr().(*net.UDPAddr).Port),
	}
	sib, err := os.Open(f.sibling)
	if err != nil {
		f.t.Fatal(err)
	}
	defer sib.Close()
	cmd.ExtraFiles = []*os.File{sib}
	if err := f.s.Prepare(cmd); err != nil {
		f.t.Fatal(err)
	}
	return f.run(cmd, f.s.Start)
}

func (f *fixture) shell(line string) result {
	// Started with cmd.Start, not Session.Start: the init then joins the
	// cgroups itself, the path a caller that ignores Start takes.
	return f.run(f.s.Command(context.Background(), "/bin/sh", "-c", line), (*exec.Cmd).Start)
}

func (f *fixture) run(cmd *exec.Cmd, start func(*exec.Cmd) error) result {
	var b strings.Builder
	cmd.Stdout, cmd.Stderr = &b, &b
	// Processes a case leaves behind may hold the output pipe; the session
	// kills them, the case need not wait.
	cmd.WaitDelay = 2 * time.Second
	done := make(chan error, 1)
	if err := start(cmd); err != nil {
		f.t.Fatalf("start: %v", err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return result{out: b.String(), err: err, state: cmd.ProcessState}
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err := <-done
		return result{out: b.String() + "(timed out)", err: err, state: cmd.ProcessState}
	}
}

// verdict is a case's outcome: "" when the sandbox held, else what escaped.
type check func(f *fixture) string

func probeHeld(name string) check {
	return func(f *fixture) string {
		r := f.probe(name)
		switch r.code() {
		case exitDenied:
			return ""
		case exitEscaped:
			return strings.TrimSpace(r.out)
		}
		return fmt.Sprintf("probe broke (exit %d, signal %v): %s", r.code(), r.signal(), r.out)
	}
}

// readableOutside guards a read probe: the harness, same user, must read
// path without the sandbox, so a denial inside it is the sandbox's (a
// non-root user cannot read /etc/shadow at all, and its denial proves
// nothing).
func readableOutside(path string, c check) check {
	return func(f *fixture) string {
		if _, err := os.ReadFile(path); err != nil {
			return fmt.Sprintf("precondition: %s is unreadable outside the sandbox (%v), so a denial inside proves nothing; run the suite as root", path, err)
		}
		return c(f)
	}
}

var cases = []struct {
	name  string
	tweak func(*sandbox.Policy)
	check check
}{
	{"read /etc/shadow", nil, readableOutside("/etc/shadow", probeHeld("read_shadow"))},
	{"read a sibling of the workdir", nil, probeHeld("read_sibling")},
	{"reopen an inherited fd through /proc/self/fd", nil, probeHeld("proc_fd_reopen")},
	{"read_only: open for write", nil, roHeld("ro_open_write")},
	{"read_only: rename into", nil, roHeld("ro_rename_into")},
	{"read_only: unlink", nil, roHeld("ro_unlink")},
	{"read_only: truncate", nil, roHeld("ro_truncate")},
	{"read_only: symlink trick", nil, roHeld("ro_symlink")},
	{"execute a freshly written binary", nil, probeHeld("exec_written")},
	{"reach a non-allowed host by name", nil, probeHeld("net_name_denied")},
	{"reach a non-allowed host by IP", nil, probeHeld("net_ip_denied")},
	{"open /var/run/docker.sock and a host socket", nil, probeHeld("docker_sock")},
	{"send UDP to a host listener", nil, func(f *fixture) string {
		if v := probeHeld("udp_out")(f); v != "" {
			return v
		}
		buf := make([]byte, 64)
		_ = f.udp.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if n, _, err := f.udp.ReadFrom(buf); err == nil {
			return fmt.Sprintf("a datagram reached the host: %q", buf[:n])
		}
		return ""
	}},
	{"create an AF_UNIX socket", nil, probeHeld("unix_socket")},
	{"open a netlink socket", nil, probeHeld("netlink")},
	{"open a packet socket", nil, probeHeld("packet")},
	{"ptrace the runtime", nil, probeHeld("ptrace_runtime")},
	{"signal the runtime", nil, probeHeld("signal_runtime")},
	{"reach a sibling through a symlink or hard link in the workdir", nil, probeHeld("symlink_out")},
	{"read the runtime's command line and pid 1's environment", nil, probeHeld("see_runtime")},
	{"fork bomb", nil, func(f *fixture) string {
		if v := probeHeld("fork_bomb")(f); v != "" {
			return v
		}
		if line := f.s.LimitHit(nil, nil); !strings.Contains(line, "cgroup_pids_max") {
			return "no pids limit line: " + line
		}
		return ""
	}},
	{"memory balloon", func(p *sandbox.Policy) { p.Rlimits.CPUSeconds = 0 }, func(f *fixture) string {
		r := f.probe("memory_balloon")
		if r.signal() != syscall.SIGKILL {
			return fmt.Sprintf("not OOM-killed (exit %d, signal %v): %s", r.code(), r.signal(), r.out)
		}
		if line := f.s.LimitHit(r.err, r.state); !strings.Contains(line, "cgroup_memory_bytes") {
			return "no memory limit line: " + line
		}
		return ""
	}},
	{"fill the disk past max_file_size_bytes", nil, func(f *fixture) string {
		r := f.shell("exec head -c 4194304 /dev/zero > big")
		st, err := os.Stat(filepath.Join(f.p.Workdir, "big"))
		if err == nil && st.Size() > f.p.Rlimits.MaxFileSizeBytes {
			return fmt.Sprintf("wrote %d bytes", st.Size())
		}
		if r.signal() != syscall.SIGXFSZ {
			return fmt.Sprintf("not stopped by SIGXFSZ (exit %d, signal %v)", r.code(), r.signal())
		}
		if line := f.s.LimitHit(r.err, r.state); !strings.Contains(line, "max_file_size_bytes") {
			return "no file size line: " + line
		}
		return ""
	}},
	{"fill the disk past workdir_max_bytes", func(p *sandbox.Policy) {
		p.WorkdirMaxBytes, p.SizeCheckEvery, p.Rlimits.CPUSeconds = 4<<20, 200*time.Millisecond, 0
	}, func(f *fixture) string {
		r := f.probe("disk_fill_ceiling")
		select {
		case <-f.s.Ended():
		default:
			return fmt.Sprintf("session not ended (exit %d): %s", r.code(), r.out)
		}
		var d diag.Diagnostic
		if !errors.Is(f.s.Err(), sandbox.ErrWorkdirSize) || !errors.As(f.s.Err(), &d) || d.Code != diag.RunWorkdirSize {
			return fmt.Sprintf("session ended without E-RUN-013: %v", f.s.Err())
		}
		if r.signal() != syscall.SIGKILL {
			return fmt.Sprintf("probe outlived the ceiling (exit %d)", r.code())
		}
		return ""
	}},
	{"runaway CPU loop", nil, func(f *fixture) string {
		start := time.Now()
		r := f.shell("while :; do :; done")
		if s := r.signal(); s != syscall.SIGXCPU && s != syscall.SIGKILL {
			return fmt.Sprintf("loop not stopped (exit %d) after %s", r.code(), time.Since(start))
		}
		if line := f.s.LimitHit(r.err, r.state); !strings.Contains(line, "cpu_seconds") {
			return "no cpu line: " + line
		}
		return ""
	}},
	{"leak a credential-shaped env var", nil, func(f *fixture) string {
		r := f.shell("env")
		if strings.Contains(r.out, "AWS_SECRET_ACCESS_KEY") || strings.Contains(r.out, "MUR_SANDBOX") {
			return "environment leaked: " + r.out
		}
		return probeHeld("env_leak")(f)
	}},
	{"outlive the session with setsid and a double fork", nil, func(f *fixture) string {
		r := f.shell(`setsid sh -c 'sleep 300 & echo $! > pidfile' >/dev/null 2>&1 &`)
		if r.code() != 0 {
			return "broke: " + r.out
		}
		var pid int
		for i := 0; i < 100 && pid == 0; i++ {
			b, _ := os.ReadFile(filepath.Join(f.p.Workdir, "pidfile"))
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			time.Sleep(20 * time.Millisecond)
		}
		pid = hostPid(pid, "sleep")
		if pid == 0 || !alive(pid) {
			return "broke: no detached process started"
		}
		f.s.Close()
		for i := 0; i < 100 && alive(pid); i++ {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return fmt.Sprintf("pid %d outlived the session", pid)
		}
		return ""
	}},
	{"outlive a SIGKILLed runtime", nil, func(f *fixture) string {
		self, _ := os.Executable()
		rt := exec.Command(self)
		rt.Env = append(os.Environ(), "ESCAPE_RUNTIME="+f.base)
		out, err := rt.StdoutPipe()
		if err != nil {
			return "broke: " + err.Error()
		}
		if err := rt.Start(); err != nil {
			return "broke: " + err.Error()
		}
		var pid int
		_, err = fmt.Fscan(out, &pid)
		if pid = hostPid(pid, "sleep"); err != nil || pid == 0 || !alive(pid) {
			_ = rt.Process.Kill()
			return fmt.Sprintf("broke: the doomed runtime started nothing (%v)", err)
		}
		_ = rt.Process.Kill()
		_ = rt.Wait()
		for i := 0; i < 150 && alive(pid); i++ {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return fmt.Sprintf("pid %d outlived the killed runtime", pid)
		}
		return ""
	}},

	// Allowed cases: a suite that denies everything must not pass.
	{"allowed: workdir writable, read_only readable", nil, probeHeld("workdir_writable")},
	{"allowed: the allowed host is reachable by name and IP", nil, probeHeld("net_allowed")},
	{"allowed: system binaries run", nil, func(f *fixture) string {
		if r := f.shell("/bin/true && ls /usr >/dev/null"); r.code() != 0 {
			return fmt.Sprintf("refused (exit %d): %s", r.code(), r.out)
		}
		return ""
	}},
	{"allowed: unix_sockets true allows AF_UNIX", func(p *sandbox.Policy) { p.Network.UnixSockets = true }, probeHeld("unix_allowed")},
}

// roHeld runs a read_only attack and also checks the file is untouched.
func roHeld(name string) check {
	return func(f *fixture) string {
		if v := probeHeld(name)(f); v != "" {
			return v
		}
		b, err := os.ReadFile(filepath.Join(f.p.Workdir, "ro", "f"))
		if err != nil || string(b) != "original" {
			return fmt.Sprintf("ro/f changed: %q %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(f.p.Workdir, "ro", "moved")); err == nil {
			return "a file was renamed into ro/"
		}
		return ""
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func TestEscape(t *testing.T) {
	if os.Getenv("MUR_TEST_PRIVILEGED") != "1" {
		t.Skip("set MUR_TEST_PRIVILEGED=1 (make test-escape): the suite needs root and namespaces")
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "AKIAESCAPESUITE")
	h := sandbox.Probe()
	for _, class := range []sandbox.Class{sandbox.Scoped, sandbox.Sealed} {
		if got := sandbox.Achieved(h, sandbox.Policy{Floor: class}); got < class {
			t.Errorf("this host achieves %s, the suite needs %s:\n%s", got, class, sandbox.Explain(h, sandbox.Policy{}))
			continue
		}
		var escaped int
		for _, c := range cases {
			held := t.Run(class.String()+"/"+c.name, func(t *testing.T) {
				f := newFixture(t, class, c.tweak)
				if v := c.check(f); v != "" {
					t.Errorf("ESCAPED: %s", v)
					return
				}
				t.Logf("denied")
			})
			if !held {
				escaped++
			}
		}
		t.Logf("%s: %d cases, %d escaped", class, len(cases), escaped)
	}
}

// runDoomedRuntime is a runtime the test SIGKILLs: it opens a session under
// base, backgrounds a long sleep in it, prints the sleep's pid and waits.
func runDoomedRuntime(base string) int {
	p := sandbox.Policy{Workdir: filepath.Join(base, "work"), Home: filepath.Join(base, "home"), Tmp: filepath.Join(base, "tmp"),
		Cgroup: sandbox.Cgroup{MemoryBytes: 64 << 20, PidsMax: 16}}
	s, err := sandbox.NewSession(context.Background(), p)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cmd := s.Command(context.Background(), "/bin/sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!")
	b, err := cmd.Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	os.Stdout.Write(b)
	select {}
}
