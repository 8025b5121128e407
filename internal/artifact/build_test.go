package artifact

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the want section of testdata/build/*.txtar")

// TestBuildGolden runs every testdata/build/*.txtar: the files of the
// archive under src/ are the source directory ("-> TARGET" as a file's
// whole content makes it a symlink), and the "want" file is what Build
// reports: the packed entries and digest, or the diagnostics.
func TestBuildGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/build/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden cases")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			src := filepath.Join(root, "src")
			os.MkdirAll(src, 0o755)
			wantIdx := -1
			for i, af := range ar.Files {
				if af.Name == "want" {
					wantIdx = i
					continue
				}
				p := filepath.Join(root, filepath.FromSlash(af.Name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				if target, ok := strings.CutPrefix(string(af.Data), "-> "); ok {
					if err := os.Symlink(strings.TrimSpace(target), p); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.WriteFile(p, af.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := render(src, root)
			if *update {
				if wantIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					wantIdx = len(ar.Files) - 1
				}
				ar.Files[wantIdx].Data = []byte(got)
				os.WriteFile(f, txtar.Format(ar), 0o644)
				return
			}
			if wantIdx < 0 {
				t.Fatal("no want file; run with -update")
			}
			if want := string(ar.Files[wantIdx].Data); got != want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, want)
			}
			// Reproducible: a second build gives the same bytes.
			if b1, _ := Build(src); b1 != nil {
				b2, _ := Build(src)
				if b2 == nil || b1.Digest != b2.Digest {
					t.Fatal("two builds of the same source differ")
				}
			}
		})
	}
}

func render(src, root string) string {
	b, ds := Build(src)
	var out strings.Builder
	for _, d := range ds {
		s := strings.ReplaceAll(d.String(), root+string(filepath.Separator), "")
		s = strings.ReplaceAll(s, root, "")
		fmt.Fprintln(&out, s)
	}
	if b == nil || ds.HasErrors() {
		return out.String()
	}
	p, err := Open(b.Data, DefaultLimits)
	if err != nil {
		return out.String() + "reopen: " + err.Error() + "\n"
	}
	fmt.Fprintf(&out, "built %s execution=%s\n", b.Manifest.ID(), b.Manifest.ExecutionType())
	for _, n := range p.Names() {
		fmt.Fprintf(&out, "  %s\n", n)
	}
	fmt.Fprintf(&out, "wit %v\n", ScanWIT(b.Payload...))
	fmt.Fprintln(&out, b.Digest)
	return out.String()
}
