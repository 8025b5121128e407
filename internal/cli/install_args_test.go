package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/store"
)

// TestDeclareInstalled: mur install NAME declares what it pinned — a new
// entry appended (runtime: for a non-tool), an existing one's version
// changed, comments and other keys kept, and the result decodes as a
// capsule; a file it cannot edit is left as it was.
func TestDeclareInstalled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "murmur.yaml")
	src := "# ops note\nname: c\nversion: \"0.1.0\"\nartifacts:\n  - name: ana/tool # keep me\n    version: \"1.0.0\"\n"
	os.WriteFile(path, []byte(src), 0o644)
	done := []store.Installed{
		{Ref: artifact.Ref{Scope: "ana", Name: "tool", Version: "1.1.0"}, Runtime: "tool"},
		{Ref: artifact.Ref{Scope: "ana", Name: "style", Version: "2.0.0"}, Runtime: "skill"},
	}
	got, err := declareInstalled(path, done)
	if err != nil || strings.Join(got, ",") != "ana/tool@1.1.0,ana/style@2.0.0" {
		t.Fatalf("declared %v, %v", got, err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{"# ops note", "# keep me", "version: \"1.1.0\"", "name: ana/style", "runtime: skill"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("murmur.yaml lacks %q:\n%s", want, b)
		}
	}
	c, ds := manifest.ParseCapsule(path, b)
	if c == nil || ds.HasErrors() || len(c.Artifacts) != 2 || c.Artifacts[1].Runtime != "skill" || c.Artifacts[0].Version != "1.1.0" {
		t.Fatalf("decoded %+v, %v", c, ds)
	}
	// Declared already at that version: nothing to write.
	if got, err := declareInstalled(path, done); err != nil || len(got) != 0 {
		t.Fatalf("again: %v, %v", got, err)
	}
	bad := "name: c\nversion: \"0.1.0\"\nartifacts: nope\n"
	os.WriteFile(path, []byte(bad), 0o644)
	if _, err := declareInstalled(path, done); err == nil || !strings.Contains(err.Error(), "declare the installed artifacts by hand") {
		t.Fatalf("artifacts: not a list: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Fatalf("a refused edit wrote %q", b)
	}
}
