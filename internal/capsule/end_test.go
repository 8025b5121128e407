package capsule

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/shell"
)

// direct runs commands as they are: the close path under test does not
// depend on the sandbox.
type direct struct{}

func (direct) Prepare(*exec.Cmd) error { return nil }

type discard struct{}

func (discard) Emit(event.Event) {}

// TestEndReportsShellCloseError: when the shell layer cannot finish its
// session-end work (here the report cannot be appended to
// logs/bootstrap.log, which is a directory), the session's end says so on
// mur run's stderr instead of dropping the error.
func TestEndReportsShellCloseError(t *testing.T) {
	root := t.TempDir()
	rec := filepath.Join(root, "rec")
	grace := 0
	p := shell.Policy{
		Allow: []string{"sleep"}, PATH: os.Getenv("PATH"), HostEnv: os.Environ(),
		Workdir: filepath.Join(root, "work"), Home: filepath.Join(rec, "home"), Tmp: filepath.Join(rec, "tmp"),
		RuntimeDir: filepath.Join(root, "run"), RecordsDir: rec, SessionID: "ses_end", GraceSecs: &grace,
		Stderr: &strings.Builder{},
	}
	for _, d := range []string{p.Workdir, p.Home, p.Tmp, p.RuntimeDir, filepath.Join(rec, "logs", "bootstrap.log")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := shell.New(p, direct{}, discard{})
	if err != nil {
		t.Fatal(err)
	}
	// With no grace the command moves to the background at once; the
	// session's end then abandons it and writes the report.
	if _, err := s.Call(context.Background(), "sleep", "30"); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	l := &launcher{shell: s, stderr: &stderr}
	l.end()
	if got := stderr.String(); !strings.Contains(got, "mur: session end: ") || !strings.Contains(got, "bootstrap.log") {
		t.Fatalf("stderr = %q, want the report's write failure", got)
	}
}
