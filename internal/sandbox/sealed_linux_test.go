package sandbox

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSealedAllowsSystemBinary: an allowlisted binary that lives in a bound
// system tree (shell.allow: [bash] resolves to /usr/bin/bash) is bound onto
// itself in the sealed root; the root used to refuse it, opening the file
// under the read-only /usr for writing (EROFS, or ETXTBSY while it runs).
func TestSealedAllowsSystemBinary(t *testing.T) {
	privileged(t)
	p := testPolicy(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	real, err := filepath.EvalSymlinks(sh)
	if err != nil {
		t.Fatal(err)
	}
	p.ExecPaths, p.Floor = []string{sh}, Sealed
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatalf("sealed session with %s (%s) allowlisted: %v", sh, real, err)
	}
	defer s.Close()
	if out, err := run(t, s, p.Workdir, "echo ran"); err != nil || out != "ran\n" {
		t.Fatalf("%q %v", out, err)
	}
}
