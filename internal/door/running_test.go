package door

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRegisterListsAndCloses(t *testing.T) {
	home := t.TempDir()
	r := Running{Session: "ses_a", Capsule: "cap", URL: "http://127.0.0.1:1", PID: os.Getpid(), Started: time.Now(), Token: "mur_secret"}
	g, err := Register(home, r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(RunDir(home), "ses_a.json")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("registration mode %v, want 0600 (it holds the operator token)", st.Mode().Perm())
	}
	if dst, _ := os.Stat(RunDir(home)); dst.Mode().Perm() != 0o700 {
		t.Errorf("run dir mode %v, want 0700", dst.Mode().Perm())
	}
	got, err := ListRunning(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Session != "ses_a" || got[0].Token != "mur_secret" || got[0].URL != r.URL {
		t.Fatalf("ListRunning = %+v, want ses_a", got)
	}
	if Gone(home, "ses_a") {
		t.Error("Gone(ses_a) while it is registered")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := ListRunning(home); len(got) != 0 {
		t.Errorf("after Close, ListRunning = %+v", got)
	}
	if !Gone(home, "ses_a") {
		t.Error("Gone(ses_a) false after Close")
	}
}

func TestRegisterRefusesPathLikeIDs(t *testing.T) {
	for _, id := range []string{"", "../x", "a/b", ".hidden"} {
		if _, err := Register(t.TempDir(), Running{Session: id}); err == nil {
			t.Errorf("Register(%q) accepted", id)
		}
	}
}

// A mur killed with SIGKILL never closes its registration: the kernel drops
// its lock, and the next ListRunning removes the file instead of listing it.
func TestKilledRegistrationIsStale(t *testing.T) {
	if home := os.Getenv("MUR_TEST_REGISTER_HOME"); home != "" {
		if _, err := Register(home, Running{Session: "ses_killed", Capsule: "c", URL: "http://x", PID: os.Getpid()}); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("registered\n")
		time.Sleep(time.Hour)
	}
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRegistrationIsStale$")
	cmd.Env = append(os.Environ(), "MUR_TEST_REGISTER_HOME="+home)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if !strings.Contains(string(buf[:n]), "registered") {
		_ = cmd.Process.Kill()
		t.Fatalf("helper said %q", buf[:n])
	}
	got, err := ListRunning(home)
	if err != nil || len(got) != 1 || got[0].PID != cmd.Process.Pid {
		t.Fatalf("while the helper lives, ListRunning = %+v, %v", got, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	path := filepath.Join(RunDir(home), "ses_killed.json")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the killed helper's file should still be there before ps: %v", err)
	}
	got, err = ListRunning(home)
	if err != nil || len(got) != 0 {
		t.Fatalf("after kill -9, ListRunning = %+v, %v; want nothing", got, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("stale registration not removed: %v", err)
	}
}

// A registration half-written by a mur that died inside Register is
// removed once it is old enough that no live Register can be holding it.
func TestAbandonedTempRemoved(t *testing.T) {
	home := t.TempDir()
	dir := RunDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, tempPrefix+"old")
	young := filepath.Join(dir, tempPrefix+"young")
	for _, p := range []string{old, young} {
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * abandonAfter)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if _, err := ListRunning(home); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("abandoned %s not removed: %v", old, err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a young temp file (maybe a Register in progress) was removed: %v", err)
	}
}
