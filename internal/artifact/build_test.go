package artifact

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/murmur/mur/internal/diag"
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

// TestWithVersion: mur build --version replaces exactly the top-level
// version's value, keeping quotes' removal, comments and every other byte.
func TestWithVersion(t *testing.T) {
	cases := []struct{ in, want string }{
		{"name: t\nversion: \"0.1.0\"\nruntime: tool\n", "name: t\nversion: \"2.0.0\"\nruntime: tool\n"},
		{"name: t\nversion: 0.1.0 # pinned\n", "name: t\nversion: \"2.0.0\" # pinned\n"},
		{"name: t\nversion: '0.1.0'  # x\n", "name: t\nversion: \"2.0.0\"  # x\n"},
		{"name: t\r\nversion: 0.1.0\r\n", "name: t\r\nversion: \"2.0.0\"\r\n"},
		{"name: t\nmeta:\n  version: 9\n", "name: t\nmeta:\n  version: 9\nversion: \"2.0.0\"\n"},
		{"version:    1\nname: t", "version:    \"2.0.0\"\nname: t"},
	}
	for _, c := range cases {
		got, err := withVersion([]byte(c.in), "2.0.0")
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if string(got) != c.want {
			t.Errorf("withVersion(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if _, err := withVersion([]byte("- a\n"), "2.0.0"); err == nil {
		t.Error("a list was given a version")
	}
}

// TestBuildWithVersionAndSkill: --version packs the new version (the
// source is untouched, the digest differs) and --skill packs a folder by
// the skill rules even beside a murmur.yaml, which is not packed.
func TestBuildWithVersionAndSkill(t *testing.T) {
	dir := t.TempDir()
	src := "name: s\nversion: \"0.1.0\" # keep\nruntime: tool\nexecution: static\nrequires_files: []\n"
	os.WriteFile(filepath.Join(dir, "murmur.yaml"), []byte(src), 0o644)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: folder-skill\nversion: 3.0.0\n---\nHi\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "skill.md.txt"), []byte("extra"), 0o644)
	plain, ds := Build(dir)
	if plain == nil || ds.HasErrors() {
		t.Fatalf("build: %v", ds)
	}
	b, ds := BuildWith(dir, BuildOptions{Version: "0.2.0"})
	if b == nil || ds.HasErrors() {
		t.Fatalf("build --version: %v", ds)
	}
	if b.Manifest.Version != "0.2.0" || b.Digest == plain.Digest {
		t.Fatalf("version %q digest same=%v", b.Manifest.Version, b.Digest == plain.Digest)
	}
	pkg, err := Open(b.Data, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	mf, _ := pkg.ReadFile("murmur.yaml")
	if string(mf) != "name: s\nversion: \"0.2.0\" # keep\nruntime: tool\nexecution: static\nrequires_files: []\n" {
		t.Fatalf("packed murmur.yaml %q", mf)
	}
	if have, _ := os.ReadFile(filepath.Join(dir, "murmur.yaml")); string(have) != src {
		t.Fatalf("source changed: %q", have)
	}
	if _, ds := BuildWith(dir, BuildOptions{Version: "a/b"}); !ds.HasErrors() || ds.Errors()[0].Code != diag.BldName {
		t.Fatalf("a/b: %v", ds)
	}
	sk, ds := BuildWith(dir, BuildOptions{Skill: true})
	if sk == nil || ds.HasErrors() {
		t.Fatalf("build --skill: %v", ds)
	}
	if sk.Manifest.Name != "folder-skill" || sk.Manifest.Version != "3.0.0" || sk.Manifest.Runtime != "skill" {
		t.Fatalf("skill manifest %+v", sk.Manifest)
	}
	pkg, _ = Open(sk.Data, DefaultLimits)
	if !pkg.Has("skill.md") || !pkg.Has("skill.md.txt") || pkg.Has("SKILL.md") {
		t.Fatalf("skill package holds %v", pkg.Names())
	}
	mf, _ = pkg.ReadFile("murmur.yaml")
	if strings.Contains(string(mf), "keep") {
		t.Fatalf("the folder's murmur.yaml was packed: %q", mf)
	}
	sk2, ds := BuildWith(dir, BuildOptions{Skill: true, Version: "4.0.0"})
	if sk2 == nil || ds.HasErrors() || sk2.Manifest.Version != "4.0.0" {
		t.Fatalf("--skill --version: %v", ds)
	}
}
