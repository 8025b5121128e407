package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

func TestSessionRunsShell(t *testing.T) {
	privileged(t)
	p := testPolicy(t)
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cmd := s.Command(context.Background(), "/bin/sh", "-c", "echo hi > out; cat out; cat /etc/shadow")
	cmd.Dir = p.Workdir
	out, err := cmd.CombinedOutput()
	t.Logf("%s err=%v", out, err)
	if !strings.HasPrefix(string(out), "hi\n") || err == nil {
		t.Fatalf("want hi and a denied shadow read, got %q %v", out, err)
	}
}
