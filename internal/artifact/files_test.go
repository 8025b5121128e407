package artifact

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/diag"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func nopos(int) diag.Pos { return diag.Pos{File: "murmur.yaml", Line: 5} }

func codeOf(err error) diag.Code {
	var d diag.Diagnostic
	if errors.As(err, &d) {
		return d.Code
	}
	return ""
}

func TestCollectRequired(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"tool.wasm": "w", "assets/logo.png": "p"})
	os.Symlink("tool.wasm", filepath.Join(dir, "link.wasm"))
	os.Symlink("assets", filepath.Join(dir, "adir"))
	got, err := CollectRequired(dir, []string{"tool.wasm", "assets/logo.png"}, nopos)
	if err != nil || len(got) != 2 || got[1].Path != "assets/logo.png" {
		t.Fatalf("CollectRequired = %v, %v", got, err)
	}
	tests := []struct {
		name  string
		files []string
		code  diag.Code
		says  string
	}{
		{"missing names the first", []string{"tool.wasm", "gone.txt", "also-gone"}, "E-IO-003", `"gone.txt"`},
		{"absolute", []string{"/etc/passwd"}, "E-BLD-002", "absolute"},
		{"dot-dot", []string{"../x"}, "E-BLD-002", ".."},
		{"inner dot-dot", []string{"assets/../tool.wasm"}, "E-BLD-002", ".."},
		{"symlink", []string{"link.wasm"}, "E-BLD-002", "symlink"},
		{"through symlinked dir", []string{"adir/logo.png"}, "E-BLD-002", "symlink"},
		{"directory", []string{"assets"}, "E-BLD-002", "regular"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CollectRequired(dir, tt.files, nopos)
			if codeOf(err) != tt.code || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("err = %v, want %s saying %q", err, tt.code, tt.says)
			}
			if !strings.Contains(err.Error(), "murmur.yaml:5") {
				t.Fatalf("err %v does not name its place", err)
			}
		})
	}
}

func TestReadSkillFolder(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"SKILL.md": "---\nname: house-style\nversion: 1.0.0\ndescription: Our style. More.\n---\n# body", "references/forms.md": "f", "murmur.yaml": "name: x"})
	sf, err := ReadSkillFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(sf.Files) != 2 || sf.Files[0].Path != "references/forms.md" || sf.Files[1].Path != "skill.md" || sf.Manifest == nil {
		t.Fatalf("files = %+v", sf.Files)
	}
	n, v, d := SkillFrontMatter(sf.Files[1].Data)
	if n != "house-style" || v != "1.0.0" || d != "Our style. More." {
		t.Fatalf("front matter = %q %q %q", n, v, d)
	}

	for _, tt := range []struct {
		name  string
		setup func(dir string)
		code  diag.Code
		says  string
	}{
		{"no skill.md", func(d string) { write(t, d, map[string]string{"x.md": ""}) }, "E-IO-001", "contains no skill.md"},
		{"both spellings", func(d string) { write(t, d, map[string]string{"SKILL.md": "", "skill.md": ""}) }, "E-BLD-002", "both"},
		{"build recipe", func(d string) { write(t, d, map[string]string{"skill.md": "", "murmur-build.json": "{}"}) }, "E-BLD-002", "murmur-build.json"},
		{"symlink", func(d string) {
			write(t, d, map[string]string{"skill.md": ""})
			os.Symlink("/etc/passwd", filepath.Join(d, "p"))
		}, "E-BLD-002", "symlink"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := t.TempDir()
			tt.setup(d)
			_, err := ReadSkillFolder(d)
			if codeOf(err) != tt.code || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("err = %v, want %s saying %q", err, tt.code, tt.says)
			}
		})
	}
	if _, err := ReadSkillFolder(filepath.Join(dir, "nope")); codeOf(err) != "E-IO-001" || !strings.Contains(err.Error(), "skill source path not found") {
		t.Fatalf("missing folder: %v", err)
	}
}

func FuzzSkillFrontMatter(f *testing.F) {
	f.Add([]byte("---\nname: a\nversion: 1.0.0\ndescription: \"x: y\"\n---\nbody"))
	f.Add([]byte("---\r\nname: a\r\n---\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, v, d := SkillFrontMatter(b)
		for _, s := range []string{n, v, d} {
			if strings.Contains(s, "\n") {
				t.Fatalf("a front-matter value spans lines: %q", s)
			}
		}
	})
}
