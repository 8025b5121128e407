package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"go.yaml.in/yaml/v3"

	"github.com/murmur/mur/internal/diag"
)

// seedManifests adds every golden case's manifests to the corpus.
func seedManifests(f *testing.F, name string) {
	files, _ := filepath.Glob("testdata/golden/*.txtar")
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			continue
		}
		for _, af := range ar.Files {
			if af.Name == name {
				f.Add(af.Data)
			}
		}
	}
	if data, err := os.ReadFile("testdata/supported_shape.yaml"); err == nil {
		f.Add(data)
	}
}

// FuzzCapsule: decode+validate never panics, and a manifest it accepts
// re-encodes (as YAML and JSON, effective view included) into a manifest
// it accepts again.
func FuzzCapsule(f *testing.F) {
	seedManifests(f, "murmur.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ds := ParseCapsule("murmur.yaml", data)
		if c == nil || ds.HasErrors() {
			return
		}
		// The launch's refusal of unhonoured fields names a written field
		// and its line, whatever the manifest holds.
		for _, d := range c.Unhonoured() {
			if d.Field == "" || d.Pos.Line == 0 || d.Severity != diag.Error {
				t.Fatalf("unhonoured-field refusal without a field, line or error severity: %v", d)
			}
		}
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("accepted manifest does not re-encode: %v", err)
		}
		if _, err := json.Marshal(c); err != nil {
			t.Fatalf("accepted manifest does not encode as JSON: %v", err)
		}
		c2, ds2 := ParseCapsule("murmur.yaml", out)
		if c2 == nil || ds2.HasErrors() {
			t.Fatalf("re-encoded manifest is refused:\n%s\n%v", out, ds2.Errors())
		}
		e := c.Effective()
		eout, err := yaml.Marshal(e)
		if err != nil {
			t.Fatalf("effective manifest does not re-encode: %v", err)
		}
		// Defaults never make a valid manifest invalid.
		if e2, ds3 := ParseCapsule("murmur.yaml", eout); e2 == nil || ds3.HasErrors() {
			t.Fatalf("effective manifest is refused:\n%s\n%v", eout, ds3.Errors())
		}
		_ = ExplainScope(c)
	})
}

// FuzzArtifact: the artifact manifest decoder never panics and an accepted
// manifest re-encodes.
func FuzzArtifact(f *testing.F) {
	seedManifests(f, "artifact.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		a, ds := ParseArtifact("murmur.yaml", data)
		if a == nil || ds.HasErrors() {
			return
		}
		out, err := yaml.Marshal(a)
		if err != nil {
			t.Fatalf("accepted artifact manifest does not re-encode: %v", err)
		}
		if a2, ds2 := ParseArtifact("murmur.yaml", out); a2 == nil || ds2.HasErrors() {
			t.Fatalf("re-encoded artifact manifest is refused:\n%s\n%v", out, ds2.Errors())
		}
		_ = a.ExecutionType()
	})
}
