package manifest

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/murmur/mur/internal/diag"
)

var update = flag.Bool("update", false, "rewrite the want section of golden cases")

// TestGolden runs every testdata/golden/*.txtar case: one per rule and per
// spec table row. A case holds murmur.yaml (a capsule manifest) or
// artifact.yaml (an artifact manifest), optionally installed/<scope>/<name>.yaml
// artifact manifests and a floor section for staging checks, and want: one
// "CODE field" line per expected diagnostic, or nothing for a clean manifest.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden cases")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := runGolden(t, ar)
			var want []string
			wantIdx := -1
			for i, f := range ar.Files {
				if f.Name == "want" {
					wantIdx = i
					for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
						if l = strings.TrimSpace(l); l != "" {
							want = append(want, l)
						}
					}
				}
			}
			sort.Strings(want)
			if *update {
				data := strings.Join(got, "\n")
				if data != "" {
					data += "\n"
				}
				if wantIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					wantIdx = len(ar.Files) - 1
				}
				ar.Files[wantIdx].Data = []byte(data)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("diagnostics differ\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

func runGolden(t *testing.T, ar *txtar.Archive) []string {
	t.Helper()
	var ds diag.List
	inst := InstalledMap{}
	var capsule []byte
	floor := ""
	staging := false
	for _, f := range ar.Files {
		switch {
		case f.Name == "murmur.yaml":
			capsule = f.Data
		case f.Name == "artifact.yaml":
			_, ads := ParseArtifact("artifact.yaml", f.Data)
			ds = append(ds, ads...)
		case f.Name == "floor":
			floor = strings.TrimSpace(string(f.Data))
			staging = true
		case strings.HasPrefix(f.Name, "installed/"):
			staging = true
			a, ads := ParseArtifact(f.Name, f.Data)
			if a == nil {
				t.Fatalf("%s: %v", f.Name, ads)
			}
			inst[strings.TrimSuffix(strings.TrimPrefix(f.Name, "installed/"), ".yaml")] = a
		}
	}
	if capsule != nil {
		c, cds := ParseCapsule("murmur.yaml", capsule)
		ds = append(ds, cds...)
		if staging && c != nil && !cds.HasErrors() {
			ds = append(ds, CheckStaging(c, inst, floor)...)
		}
	}
	got := []string{}
	for _, d := range ds {
		if d.Pos.File == "" || d.Pos.Line == 0 && d.Field != "" && !strings.HasPrefix(d.Msg, "cannot read") {
			// Every diagnostic must point somewhere in its file.
			if d.Pos.Line == 0 {
				t.Errorf("%s has no line: %s", d.Code, d)
			}
		}
		got = append(got, strings.TrimSpace(string(d.Code)+" "+d.Field))
	}
	sort.Strings(got)
	return got
}
