package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/diag"
)

// privileged skips unless MUR_TEST_PRIVILEGED=1 (make test-escape) and the
// host can enforce scoped.
func privileged(t *testing.T) Host {
	t.Helper()
	if os.Getenv("MUR_TEST_PRIVILEGED") != "1" {
		t.Skip("set MUR_TEST_PRIVILEGED=1 (make test-escape) to run sandboxed processes")
	}
	h := Probe()
	if r := Explain(h, Policy{}); r.Achieved < Scoped {
		t.Skipf("host cannot enforce scoped:\n%s", r)
	}
	return h
}

func testPolicy(t *testing.T) Policy {
	base := t.TempDir()
	p := Policy{Workdir: filepath.Join(base, "work"), Home: filepath.Join(base, "home"), Tmp: filepath.Join(base, "tmp"),
		Cgroup: Cgroup{MemoryBytes: 256 << 20, PidsMax: 64}, Rlimits: Rlimits{MaxOpenFiles: 256}}
	for _, d := range []string{p.Workdir, p.Home, p.Tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// readableOutside fails the test unless the test process itself reads
// path: only then is a denial inside the sandbox the sandbox's (a non-root
// user cannot read /etc/shadow at all, and its denial proves nothing).
func readableOutside(t *testing.T, path string) {
	t.Helper()
	if _, err := os.ReadFile(path); err != nil {
		t.Fatalf("precondition: %s is unreadable outside the sandbox (%v), so a denial inside proves nothing; run as root", path, err)
	}
}

func TestSessionRunsShell(t *testing.T) {
	privileged(t)
	readableOutside(t, "/etc/shadow")
	p := testPolicy(t)
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(s.Report().String(), "limits written: memory, swap, pids") {
		t.Errorf("report does not say memory, swap and pids are bounded:\n%s", s.Report())
	}
	cmd := s.Command(context.Background(), "/bin/sh", "-c", "echo hi > out; cat out; cat /etc/shadow")
	cmd.Dir = p.Workdir
	out, err := cmd.CombinedOutput()
	t.Logf("%s err=%v", out, err)
	if !strings.HasPrefix(string(out), "hi\n") || err == nil {
		t.Fatalf("want hi and a denied shadow read, got %q %v", out, err)
	}
}

func run(t *testing.T, s *Session, dir, line string) (string, error) {
	t.Helper()
	cmd := s.Command(context.Background(), "/bin/sh", "-c", line)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestSealedStagedRuntime(t *testing.T) {
	privileged(t)
	p := testPolicy(t)
	staged := filepath.Join(filepath.Dir(p.Workdir), "staged")
	if err := os.MkdirAll(filepath.Join(staged, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staged, "bin", "tool"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	p.StagedRuntime = []StagedTree{{Binary: "tool", SourcePath: staged, Pin: "test-1"}}
	p.Floor = Sealed
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Report().Achieved != Sealed {
		t.Fatalf("achieved %s", s.Report().Achieved)
	}
	if out, err := run(t, s, p.Workdir, staged+"/bin/tool && echo ran"); err != nil || !strings.Contains(out, "ran") {
		t.Fatalf("staged binary did not run: %q %v", out, err)
	}
	// The composed root holds only what was bound: not /var, /root or /home.
	out, _ := run(t, s, p.Workdir, "for d in /var /root /home /opt; do test -e $d && echo present $d; done; touch "+staged+"/x 2>&1 || echo ro")
	if strings.Contains(out, "present") || !strings.Contains(out, "ro") {
		t.Fatalf("composed root shows host paths or a writable staged tree: %q", out)
	}
}

func TestInterpreterRuntimeListDir(t *testing.T) {
	privileged(t)
	p := testPolicy(t)
	base := filepath.Dir(p.Workdir)
	for _, d := range []string{"listable", "hidden"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, d, "mod.py"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.InterpreterRuntime = []RuntimeDir{{Path: filepath.Join(base, "listable"), ListDir: true}, {Path: filepath.Join(base, "hidden"), ListDir: false}}
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tests := []struct {
		line string
		ok   bool
	}{
		{"ls " + base + "/listable", true},
		{"cat " + base + "/listable/mod.py", true},
		{"cat " + base + "/hidden/mod.py", true},
		{"ls " + base + "/hidden", false},
		{"echo y > " + base + "/listable/mod.py", false},
	}
	for _, tt := range tests {
		if out, err := run(t, s, p.Workdir, tt.line); (err == nil) != tt.ok {
			t.Errorf("%s: ok=%v, want %v (%s)", tt.line, err == nil, tt.ok, out)
		}
	}
}

func TestWorkdirExecAllowsBuiltBinaries(t *testing.T) {
	privileged(t)
	p := testPolicy(t)
	p.WorkdirExec = true
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Report().Achieved != Advisory {
		t.Fatalf("workdir_exec must cap at advisory, got %s", s.Report().Achieved)
	}
	if out, err := run(t, s, p.Workdir, "cp /bin/true ./built && ./built && echo ran"); err != nil || !strings.Contains(out, "ran") {
		t.Fatalf("built binary did not run: %q %v", out, err)
	}
}

func TestIOMaxUnresolvableDeviceWarns(t *testing.T) {
	privileged(t)
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Skip("no tmpfs at /dev/shm")
	}
	p := testPolicy(t)
	dir, err := os.MkdirTemp("/dev/shm", "mur-io-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p.Workdir = dir
	p.Cgroup.IOBytesPerSec = 1 << 20
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Warnings().Has(diag.SecIOMaxUnavailable) {
		t.Fatalf("no W-SEC-021 for a tmpfs workdir: %v", s.Warnings())
	}
	if out, err := run(t, s, dir, "echo ok > f && cat f"); err != nil || out != "ok\n" {
		t.Fatalf("other limits must keep the session usable: %q %v", out, err)
	}
}

func TestFloorRefusedBeforeAnythingExists(t *testing.T) {
	// A host that cannot seal, whose cgroup root is a plain directory: a
	// scope created before the refusal would show up in it.
	h := fullHost()
	h.MountNS = false
	h.CgroupV2 = t.TempDir()
	h.Controllers = map[string]string{}
	p := testPolicy(t)
	p.Floor = Sealed
	_, err := newSession(context.Background(), h, p)
	if !errors.Is(err, ErrFloor) {
		t.Fatalf("want E-CAP-003, got %v", err)
	}
	if ents, _ := os.ReadDir(h.CgroupV2); len(ents) != 0 {
		t.Fatalf("a refused session left %d entries in the cgroup root", len(ents))
	}
}

func TestCloseRemovesScope(t *testing.T) {
	privileged(t)
	p := testPolicy(t)
	p.Floor = Sealed
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, s, p.Workdir, "sleep 100 >/dev/null 2>&1 &"); err != nil {
		t.Fatal(err)
	}
	dirs := s.cg.dirs()
	if len(dirs) == 0 || !fileExists(dirs[0]) {
		t.Fatal("no scope while the session runs")
	}
	s.Close()
	for _, d := range dirs {
		if fileExists(d) {
			t.Fatalf("Close left %s", d)
		}
	}
	if _, err := os.Stat(s.rootDir); !os.IsNotExist(err) {
		t.Fatalf("Close left the root directory: %v", err)
	}
	if err := s.Prepare(exec.Command("/bin/true")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Prepare after Close: %v", err)
	}
}

func TestLimitHitLines(t *testing.T) {
	s := &Session{policy: Policy{Rlimits: Rlimits{MaxOpenFiles: 64, MaxFileSizeBytes: 10}}, ended: make(chan struct{})}
	if got := s.LimitHit(fmt.Errorf("open: %w", syscall.EMFILE), nil); !strings.Contains(got, "max_open_files is 64") {
		t.Fatalf("EMFILE line: %q", got)
	}
	if got := s.LimitHit(syscall.EFBIG, nil); !strings.Contains(got, "max_file_size_bytes (10 bytes)") {
		t.Fatalf("EFBIG line: %q", got)
	}
	if got := s.LimitHit(nil, nil); got != "" {
		t.Fatalf("no limit, got %q", got)
	}
}

func TestTmpMapped(t *testing.T) {
	privileged(t)
	for _, class := range []Class{Scoped, Sealed} {
		t.Run(class.String(), func(t *testing.T) {
			// Session folders outside /tmp, as the records directory is.
			base, err := os.MkdirTemp("/var/tmp", "mur-tmpmap-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(base)
			p := Policy{Workdir: filepath.Join(base, "work"), Home: filepath.Join(base, "home"), Tmp: filepath.Join(base, "tmp"), Floor: class}
			for _, d := range []string{p.Workdir, p.Home, p.Tmp} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s, err := NewSession(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !s.TmpMapped() {
				t.Fatal("tmp not mapped")
			}
			if out, err := run(t, s, p.Workdir, "echo x > /tmp/f && ls /tmp"); err != nil || out != "f\n" {
				t.Fatalf("/tmp is not the session's tmp: %q %v", out, err)
			}
			if _, err := os.Stat(filepath.Join(p.Tmp, "f")); err != nil {
				t.Fatalf("write to /tmp did not land in the session's tmp: %v", err)
			}
		})
	}
	p := testPolicy(t) // under /tmp: mapping would hide it
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.TmpMapped() {
		t.Fatal("mapped /tmp over granted paths")
	}
}

// TestUnprivilegedHost runs commands on a host that offers only what needs
// no privilege (Landlock, seccomp, rlimits): what remains is still enforced
// and the report says what is not.
func TestUnprivilegedHost(t *testing.T) {
	h := Probe()
	if h.LandlockABI < minLandlockABI || !h.Seccomp {
		t.Skip("no Landlock or seccomp on this host")
	}
	h.NetNS, h.MountNS, h.CgroupV2, h.Controllers = false, false, "", map[string]string{}
	readableOutside(t, "/etc/shadow")
	p := testPolicy(t)
	p.ReadOnly = []string{"ro"}
	s, err := newSession(context.Background(), h, p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r := s.Report(); r.Achieved != Advisory || !strings.Contains(r.String(), "read_only is checked before dispatch only") {
		t.Fatalf("report:\n%s", r)
	}
	tests := []struct {
		line string
		ok   bool
	}{
		{"echo x > f && cat f", true},
		{"cat /etc/shadow", false},
		{"cp /bin/true ./t && ./t", false},
	}
	for _, tt := range tests {
		if out, err := run(t, s, p.Workdir, tt.line); (err == nil) != tt.ok {
			t.Errorf("%s: ok=%v, want %v (%s)", tt.line, err == nil, tt.ok, out)
		}
	}
}

func TestSealedExecPathBySymlink(t *testing.T) {
	privileged(t)
	p := testPolicy(t)
	base, err := os.MkdirTemp("/var/tmp", "mur-exec-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	b, _ := os.ReadFile("/bin/true")
	for _, d := range []string{"real", "bin"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "real", "tool"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "bin", "tool")
	if err := os.Symlink("../real/tool", link); err != nil {
		t.Fatal(err)
	}
	p.ExecPaths = []string{link}
	for _, class := range []Class{Scoped, Sealed} {
		p.Floor = class
		s, err := NewSession(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		out, err := run(t, s, p.Workdir, link+" && echo ran")
		s.Close()
		if err != nil || out != "ran\n" {
			t.Errorf("%s: allowlisted binary by its link: %q %v", class, out, err)
		}
	}
}

// TestStartBornInScope checks both ways a command reaches the scope: born
// there via Session.Start, or joining from its init after cmd.Start.
func TestStartBornInScope(t *testing.T) {
	privileged(t)
	p := testPolicy(t)
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.cg.v1) == 0 {
		t.Skip("no cgroup v1 controllers on this host: nothing to be born into")
	}
	for name, start := range map[string]func(*exec.Cmd) error{"Session.Start": s.Start, "cmd.Start": (*exec.Cmd).Start} {
		cmd := exec.Command("/bin/cat", "/proc/self/cgroup")
		if err := s.Prepare(cmd); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		cmd.Stdout = &out
		if err := start(cmd); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		cur := parseProcCgroup(out.String())
		for _, j := range s.cg.v1Joins() {
			if cur[j.Controller] != j.Path {
				t.Errorf("%s: %s cgroup is %q, want %q", name, j.Controller, cur[j.Controller], j.Path)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(exec.Command("/bin/true")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
}

func TestReadOnlyMissingAtLaunch(t *testing.T) {
	privileged(t)
	p := testPolicy(t)
	p.ReadOnly = []string{"later/fixtures"}
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if out, err := run(t, s, p.Workdir, "echo x > later/fixtures/f"); err == nil {
		t.Fatalf("wrote into a read_only subtree created after launch: %q", out)
	}
	if out, err := run(t, s, p.Workdir, "echo x > later/other && cat later/other"); err != nil {
		t.Fatalf("the rest of the workdir must stay writable: %q %v", out, err)
	}
}

func TestSessionFoldersMustExist(t *testing.T) {
	p := testPolicy(t)
	p.Home = filepath.Join(p.Home, "missing")
	h := fullHost()
	h.CgroupV2 = t.TempDir()
	if _, err := newSession(context.Background(), h, p); !errors.Is(err, ErrPolicy) {
		t.Fatalf("want ErrPolicy for a missing home, got %v", err)
	}
}
