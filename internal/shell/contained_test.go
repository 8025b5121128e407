package shell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/sandbox"
)

// TestMain lets a sandboxed command re-execute this test binary as the
// sandbox's init.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// contained returns a fixture whose container is a real sandbox session,
// or skips unless MUR_TEST_PRIVILEGED=1 and the host enforces scoped.
func contained(t testing.TB, mod func(*Policy)) (*fixture, *sandbox.Session) {
	if os.Getenv("MUR_TEST_PRIVILEGED") != "1" {
		t.Skip("set MUR_TEST_PRIVILEGED=1 (make test-shell-slow) to run shell calls in the real sandbox")
	}
	if r := sandbox.Explain(sandbox.Probe(), sandbox.Policy{}); r.Achieved < sandbox.Scoped {
		t.Skipf("host cannot enforce scoped:\n%s", r)
	}
	f := newFixture(t, mod)
	sb, err := sandbox.NewSession(context.Background(), sandbox.Policy{
		Workdir: f.pol.Workdir, Home: f.pol.Home, Tmp: f.pol.Tmp,
		ReadOnly: f.pol.ReadOnly,
		Cgroup:   sandbox.Cgroup{MemoryBytes: 512 << 20, PidsMax: 128},
		Rlimits:  sandbox.Rlimits{MaxOpenFiles: 1024},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	f.s.c = sb
	return f, sb
}

func TestContainedCalls(t *testing.T) {
	// A grace no load reaches: the quick calls below must finish in the
	// foreground however slow the machine is; the one demotion is driven
	// by cancelling its call (the turn's end), not by this clock.
	f, sb := contained(t, func(p *Policy) { p.GraceSecs = grace(3600) })

	r := f.call(t, "bash", `printf 'out\n'; printf 'err\n' >&2`)
	if r.Text() != "Exit code: 0\nStdout:\nout\n\nStderr:\nerr\n" {
		t.Errorf("contained result %q", r.Text())
	}
	// The sandbox denies what the grant does not give: a host file this
	// user may read (so only the sandbox can refuse it, root or not),
	// outside the workdir, home and tmp.
	secret := filepath.Join(t.TempDir(), "host-secret")
	if err := os.WriteFile(secret, []byte("host secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("cat", secret).Output(); err != nil || string(b) != "host secret\n" {
		t.Fatalf("the same read outside the sandbox: %q %v", b, err)
	}
	r = f.call(t, "bash", `cat `+secret)
	if r.ExitCode == 0 || strings.Contains(r.Stdout, "host secret") {
		t.Errorf("read %s: %q", secret, r.Text())
	}
	// Still its own group leader with /dev/null stdin, in the workdir.
	r = f.call(t, "bash", `set -- $(cut -d' ' -f5 /proc/$$/stat); echo "pgid=$1 pid=$$"; readlink /proc/$$/fd/0; pwd`)
	if lines := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(lines) != 3 || lines[1] != "/dev/null" || lines[2] != f.pol.Workdir {
		t.Errorf("contained process shape: %q", r.Text())
	}
	// The output-holder rule holds through the sandbox's init.
	r = f.call(t, "bash", `sleep 20 & echo main`)
	if r.Note != NoteGroupKilled {
		t.Errorf("holder: %q", r.Text())
	}
	// A demoted command is killed at the session's end. The call is
	// demoted when its context ends, which happens once the command has
	// said "going" and opened the FIFO: its output is then certain to be
	// in the log, whatever the load.
	ready := filepath.Join(f.pol.Workdir, "ready")
	if err := unix.Mkfifo(ready, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		defer cancel()
		if b, err := os.ReadFile(ready); err != nil || string(b) != "x\n" {
			t.Errorf("ready FIFO: %q %v", b, err)
		}
	}()
	r, err := f.s.Call(ctx, "bash", `echo going; echo x > ready; sleep 3600`)
	if err != nil || r.WorkID == "" {
		t.Fatalf("not demoted: %q %v", r.Text(), err)
	}
	pid := f.s.work[r.WorkID].pgid
	ab, err := f.s.Close(context.Background())
	if err != nil || len(ab) != 1 {
		t.Fatalf("Close = %v, %v", ab, err)
	}
	waitGone(t, pid)
	if err := sb.Close(); err != nil {
		t.Error(err)
	}
	if log, _ := os.ReadFile(filepath.Join(f.pol.RecordsDir, "logs", r.WorkID+".log")); !strings.Contains(string(log), "going") {
		t.Errorf("log %q", log)
	}
}
