package wasi

import (
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// newTree builds workdir/{scope/...} plus a sibling and links used by the
// containment tests, and returns the workdir and the "." preopen of scope.
func newTree(t *testing.T) (string, *Preopen) {
	t.Helper()
	wd := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	scope := filepath.Join(wd, "proj")
	must(os.MkdirAll(filepath.Join(scope, "src", "deep"), 0o755))
	must(os.MkdirAll(filepath.Join(scope, "tests", "a"), 0o755))
	must(os.MkdirAll(filepath.Join(wd, "sibling"), 0o755))
	must(os.WriteFile(filepath.Join(wd, "sibling", "secret"), []byte("secret"), 0o644))
	must(os.WriteFile(filepath.Join(scope, "src", "main.txt"), []byte("hello"), 0o644))
	must(os.WriteFile(filepath.Join(scope, "tests", "a", "t.txt"), []byte("t"), 0o644))
	must(os.Symlink("/etc/passwd", filepath.Join(scope, "abs-link")))
	must(os.Symlink("../sibling/secret", filepath.Join(scope, "rel-out")))
	must(os.Symlink("src/deep/../../../sibling", filepath.Join(scope, "sneaky")))
	must(os.Symlink("main.txt", filepath.Join(scope, "src", "in-link")))
	must(os.Symlink("../tests/a", filepath.Join(scope, "src", "to-tests")))
	must(os.Symlink("loop2", filepath.Join(scope, "loop1")))
	must(os.Symlink("loop1", filepath.Join(scope, "loop2")))
	p, err := OpenPreopen(".", scope, "proj", []string{"proj/tests"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return wd, p
}

func TestResolveContainment(t *testing.T) {
	_, p := newTree(t)
	tests := []struct {
		name   string
		base   string
		path   string
		follow bool
		want   string
		code   FSCode
	}{
		{name: "plain", base: ".", path: "src/main.txt", follow: true, want: "src/main.txt"},
		{name: "dots inside", base: ".", path: "src/deep/../main.txt", follow: true, want: "src/main.txt"},
		{name: "dot only", base: ".", path: ".", follow: true, want: "."},
		{name: "from subdir base", base: "src", path: "../tests/a", follow: true, want: "tests/a"},
		{name: "absolute etc passwd", base: ".", path: "/etc/passwd", follow: true, code: CodeNotPermitted},
		{name: "dotdot to sibling", base: ".", path: "../sibling/secret", follow: true, code: CodeNotPermitted},
		{name: "dotdot from base", base: "src", path: "../../sibling", follow: true, code: CodeNotPermitted},
		{name: "symlink absolute", base: ".", path: "abs-link", follow: true, code: CodeNotPermitted},
		{name: "symlink relative out", base: ".", path: "rel-out", follow: true, code: CodeNotPermitted},
		{name: "symlink out via inner dotdot", base: ".", path: "sneaky/secret", follow: true, code: CodeNotPermitted},
		{name: "symlink out as directory component", base: ".", path: "rel-out/x", follow: false, code: CodeNotPermitted},
		{name: "symlink inside", base: ".", path: "src/in-link", follow: true, want: "src/main.txt"},
		{name: "final symlink not followed", base: ".", path: "abs-link", follow: false, want: "abs-link"},
		{name: "symlink to sibling dir inside", base: ".", path: "src/to-tests/t.txt", follow: true, want: "tests/a/t.txt"},
		{name: "loop", base: ".", path: "loop1", follow: true, code: CodeLoop},
		{name: "missing kept", base: ".", path: "new/dir/file", follow: true, want: "new/dir/file"},
		{name: "missing then dotdot out", base: ".", path: "new/../../x", follow: true, code: CodeNotPermitted},
		{name: "nul", base: ".", path: "a\x00b", follow: true, code: CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Resolve(tt.base, tt.path, tt.follow)
			if tt.code != "" {
				if err == nil {
					t.Fatalf("Resolve(%q) = %q, want error %s", tt.path, got, tt.code)
				}
				if c := CodeOf(err); c != tt.code {
					t.Fatalf("Resolve(%q) code = %s (%v), want %s", tt.path, c, err, tt.code)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Resolve(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
			}
		})
	}
}

func TestOpenReadOnlyAndEscapes(t *testing.T) {
	wd, p := newTree(t)
	rd := OpenFlags{Read: true, FollowSymlinks: true}
	wr := OpenFlags{Write: true, Create: true, FollowSymlinks: true}
	tests := []struct {
		name string
		path string
		fl   OpenFlags
		code FSCode
	}{
		{name: "read inside", path: "src/main.txt", fl: rd},
		{name: "read read-only subtree", path: "tests/a/t.txt", fl: rd},
		{name: "write outside read-only", path: "src/new.txt", fl: wr},
		{name: "write read-only subtree", path: "tests/a/new.txt", fl: wr, code: CodeAccess},
		{name: "write read-only root", path: "tests", fl: OpenFlags{Write: true}, code: CodeAccess},
		{name: "write read-only through symlink", path: "src/to-tests/x.txt", fl: wr, code: CodeAccess},
		{name: "truncate read-only", path: "tests/a/t.txt", fl: OpenFlags{Truncate: true, Write: true}, code: CodeAccess},
		{name: "read etc passwd", path: "/etc/passwd", fl: rd, code: CodeNotPermitted},
		{name: "read sibling", path: "../sibling/secret", fl: rd, code: CodeNotPermitted},
		{name: "follow symlink out", path: "rel-out", fl: rd, code: CodeNotPermitted},
		{name: "nofollow final symlink", path: "abs-link", fl: OpenFlags{Read: true}, code: CodeLoop},
		{name: "directory flag on file", path: "src/main.txt", fl: OpenFlags{Read: true, Directory: true, FollowSymlinks: true}, code: CodeNotDirectory},
		{name: "exclusive exists", path: "src/main.txt", fl: OpenFlags{Write: true, Create: true, Exclusive: true}, code: CodeExist},
		{name: "missing", path: "nope", fl: rd, code: CodeNoEntry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, rel, err := p.Open(".", tt.path, tt.fl)
			if tt.code != "" {
				if err == nil {
					f.Close()
					t.Fatalf("Open(%q) succeeded, want %s", tt.path, tt.code)
				}
				if c := CodeOf(err); c != tt.code {
					t.Fatalf("Open(%q) code = %s (%v), want %s", tt.path, c, err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tt.path, err)
			}
			defer f.Close()
			if rel == "" {
				t.Fatal("empty resolved path")
			}
		})
	}
	if _, err := os.Stat(filepath.Join(wd, "proj", "tests", "a", "new.txt")); !os.IsNotExist(err) {
		t.Fatalf("refused write left a file behind: %v", err)
	}
}

func TestPathOpsRespectPolicy(t *testing.T) {
	wd, p := newTree(t)
	tests := []struct {
		name string
		op   func() error
		code FSCode
	}{
		{name: "mkdir ok", op: func() error { return p.Mkdir(".", "src/made") }},
		{name: "mkdir read-only", op: func() error { return p.Mkdir(".", "tests/made") }, code: CodeAccess},
		{name: "mkdir escape", op: func() error { return p.Mkdir(".", "../made") }, code: CodeNotPermitted},
		{name: "unlink read-only", op: func() error { return p.Unlink(".", "tests/a/t.txt") }, code: CodeAccess},
		{name: "unlink dir", op: func() error { return p.Unlink(".", "src/deep") }, code: CodeIsDirectory},
		{name: "rmdir read-only", op: func() error { return p.Rmdir(".", "tests/a") }, code: CodeAccess},
		{name: "rmdir file", op: func() error { return p.Rmdir(".", "src/main.txt") }, code: CodeNotDirectory},
		{name: "rename into read-only", op: func() error { return p.Rename(".", "src/main.txt", p, ".", "tests/m.txt") }, code: CodeAccess},
		{name: "rename out of read-only", op: func() error { return p.Rename(".", "tests/a/t.txt", p, ".", "src/t.txt") }, code: CodeAccess},
		{name: "rename escape", op: func() error { return p.Rename(".", "src/main.txt", p, ".", "../stolen") }, code: CodeNotPermitted},
		{name: "symlink absolute target", op: func() error { return p.Symlink("/etc", ".", "etc") }, code: CodeNotPermitted},
		{name: "symlink climbing target", op: func() error { return p.Symlink("../../sibling", ".", "src/sib") }, code: CodeNotPermitted},
		{name: "symlink inside", op: func() error { return p.Symlink("../tests", ".", "src/t") }},
		{name: "link from outside", op: func() error { return p.Link(".", "rel-out", true, p, ".", "stolen") }, code: CodeNotPermitted},
		{name: "hard link to a read-only file", op: func() error { return p.Link(".", "tests/a/t.txt", false, p, ".", "src/t-alias") }, code: CodeAccess},
		{name: "hard link inside", op: func() error { return p.Link(".", "src/main.txt", false, p, ".", "src/main-alias") }},
		{name: "rename ok", op: func() error { return p.Rename(".", "src/main.txt", p, ".", "src/moved.txt") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if c := CodeOf(err); err == nil || c != tt.code {
				t.Fatalf("got %v (%s), want %s", err, c, tt.code)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(wd, "made")); !os.IsNotExist(err) {
		t.Fatal("mkdir escaped the preopen")
	}
	f, _, err := p.Open(".", "src/moved.txt", OpenFlags{Read: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	if string(b) != "hello" {
		t.Fatalf("moved content %q", b)
	}
}

func TestRenameCannotCarryReadOnlyAway(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bench", "fixtures"), 0o755)
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	p, err := OpenPreopen(".", dir, ".", []string{"bench/fixtures"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Rename(".", "bench", p, ".", "moved"); CodeOf(err) != CodeAccess {
		t.Fatalf("renaming the parent of a read-only subtree: %v", err)
	}
	if err := p.Rename(".", "empty", p, ".", "bench"); CodeOf(err) != CodeAccess {
		t.Fatalf("renaming onto the parent of a read-only subtree: %v", err)
	}
	if err := p.Rename(".", "empty", p, ".", "benchmark"); err != nil {
		t.Fatalf("unrelated rename: %v", err)
	}
}

func TestReadOnlyMatchesByComponent(t *testing.T) {
	dir := t.TempDir()
	p, err := OpenPreopen(".", dir, ".", []string{"tests", "bench/fixtures"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for rel, want := range map[string]bool{
		"tests": true, "tests/a": true, "tests/a/b": true,
		"tests2": false, "testsuite/a": false, "atests": false, "build/tests": false,
		"bench/fixtures/x": true, "bench/other": false, ".": false,
	} {
		if got := p.ReadOnlyAt(rel); got != want {
			t.Errorf("ReadOnlyAt(%q) = %v, want %v", rel, got, want)
		}
	}
	state, err := OpenPreopen("state", t.TempDir(), "", []string{"tests"})
	if err != nil {
		t.Fatal(err)
	}
	defer state.Close()
	if state.ReadOnlyAt("tests") {
		t.Error("state store matched a workdir read-only entry")
	}
	if !errors.Is(p.checkWrite("w", "tests/x"), ErrReadOnly) {
		t.Error("checkWrite did not wrap ErrReadOnly")
	}
}

// FuzzResolve checks the containment invariant on arbitrary guest paths
// over a tree with symlinks pointing in and out: a resolved path is always
// relative, clean, free of ".." and, when it exists, really under the
// preopen on the host.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"src/main.txt", "../sibling", "/etc/passwd", "rel-out", "sneaky/secret",
		"src/to-tests/t.txt", "loop1", "a/../../b", "./././x", "src//deep/..", "abs-link/x"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, guest string, follow bool) {
		wd, p := newTree(t)
		rel, err := p.Resolve(".", guest, follow)
		if err != nil {
			return
		}
		if strings.HasPrefix(rel, "/") || rel != path.Clean(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			t.Fatalf("Resolve(%q) = %q: not a clean relative path", guest, rel)
		}
		host, err := filepath.EvalSymlinks(filepath.Join(p.HostDir, rel))
		if err != nil {
			return
		}
		root, _ := filepath.EvalSymlinks(filepath.Join(wd, "proj"))
		if !follow {
			return // a final symlink is returned unfollowed on purpose
		}
		if host != root && !strings.HasPrefix(host, root+string(filepath.Separator)) {
			t.Fatalf("Resolve(%q) = %q, which is %s on the host, outside %s", guest, rel, host, root)
		}
	})
}
