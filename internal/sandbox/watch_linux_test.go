package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Issue #12 item 7: a file written, unlinked and kept open still holds its
// blocks, and the workdir ceiling counts them.
func TestCeilingCountsUnlinkedOpenFiles(t *testing.T) {
	privileged(t)
	p := testPolicy(t)
	p.WorkdirMaxBytes, p.SizeCheckEvery = 4<<20, 100*time.Millisecond
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Two files of 3 MiB of random bytes (no filesystem keeps them sparse),
	// each unlinked once written and kept by a descriptor: the named tree
	// never passes the 4 MiB ceiling, what the session holds does.
	cmd := s.Command(context.Background(), "/bin/bash", "-c",
		`exec 3>a && head -c 3145728 /dev/urandom >&3 && sync a && rm a &&
		 exec 4>b && head -c 3145728 /dev/urandom >&4 && sync b && rm b && ls -A && sleep 30`)
	cmd.Dir = p.Workdir
	out, err := cmd.CombinedOutput()
	select {
	case <-s.Ended():
	default:
		t.Fatalf("the session was not ended: %v %s", err, out)
	}
	if !errors.Is(s.Err(), ErrWorkdirSize) {
		t.Fatalf("ended with %v", s.Err())
	}
	if len(out) != 0 {
		t.Errorf("the workdir still listed %q: the file was not unlinked", out)
	}
}

// The measure itself: an unlinked file this process holds open, on the
// roots' filesystem, is counted once; a named one is left to the walk.
func TestHeldUnlinkedBytes(t *testing.T) {
	dir := t.TempDir()
	named, err := os.Create(filepath.Join(dir, "named"))
	if err != nil {
		t.Fatal(err)
	}
	defer named.Close()
	gone, err := os.Create(filepath.Join(dir, "gone"))
	if err != nil {
		t.Fatal(err)
	}
	defer gone.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for _, f := range []*os.File{named, gone} {
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(gone.Name()); err != nil {
		t.Fatal(err)
	}
	// The runtime's own pid is never counted (the spawner thread puts it
	// in v1 scopes), so a child holds the descriptor.
	cmd := newHolder(t, gone)
	n := heldUnlinkedBytes([]int{cmd, os.Getpid()}, []string{dir})
	if n < 1<<20 || n > 1<<20+64<<10 {
		t.Fatalf("held unlinked bytes = %d, want about 1 MiB (one file, once)", n)
	}
	if m := heldUnlinkedBytes([]int{cmd}, []string{"/proc"}); m != 0 {
		t.Fatalf("a file on another filesystem counted: %d", m)
	}
}

// newHolder starts a sleep that inherits f, and returns its pid.
func newHolder(t *testing.T, f *os.File) int {
	t.Helper()
	cmd := exec.Command("/bin/sleep", "30")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}
