package readonly

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCheckLineAgainstBash runs each line in a real bash and compares what
// it changed under the protected subtree with what the check refused: a
// refusal names a path the line really writes, and a line the check lets
// through really leaves the subtree alone. It keeps the shell-line reader
// honest about quoting, redirections and each write target.
func TestCheckLineAgainstBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	tests := []struct {
		line   string
		refuse bool
	}{
		{"echo x > tests/a", true},
		{"echo x >> tests/a", true},
		{"set -o noclobber; echo x >| tests/a", true},
		{"echo x &> tests/new", true},
		{"echo x &>> tests/a", true},
		{"echo x 2> tests/err", true},
		{"echo x 2>> tests/a >&2", true},
		{"echo x >&tests/new", true},
		{`echo x > "tests/a b"`, true},
		{`echo x > te'sts'/q`, true},
		{"echo x | tee tests/t", true},
		{"rm tests/a", true},
		{"rm -r tests/d", true},
		{"rmdir tests/d", true},
		{"unlink tests/a", true},
		{"shred -n 1 tests/a", true},
		{"truncate -s 0 tests/f", true},
		{"mkdir tests/m", true},
		{"touch tests/a", true},
		{"chmod 600 tests/a", true},
		{"chown 0 tests/a", true},
		{"mv src/x tests/x", true},
		{"cp src/x tests/", true},
		{"cp -t tests src/x", true},
		{"install -m 644 src/x tests/i", true},
		{"ln -s ../src/x tests/l", true},
		{"sed -i s/a/b/ tests/f", true},
		{"sed -i.bak -e s/a/b/ tests/f", true},
		{"sed --in-place=.orig s/a/b/ tests/f", true},
		{"dd if=src/x of=tests/dd status=none", true},
		{"cd tests && touch c", true},
		{"LC_ALL=C touch tests/e", true},
		{"env touch tests/e", true},
		{"if true; then touch tests/e; fi", true},
		{"(touch tests/e)", true},
		{"touch tests/*", true},
		// The forms issue #12 item 8 found the hand-written reader missing.
		{"echo x > /proc/self/cwd/tests/a", true},
		{"touch /proc/$$/cwd/tests/n", true},
		{`x=$(echo ")"); echo y > tests/a`, true},
		{"echo x > $'tests/a'", true},
		{"function f { touch tests/n; }; f", true},
		{"echo x 1>&tests/n", true},
		{"cat <(touch tests/n)", true},
		{"cat <<EOF\n$(touch tests/n)\nEOF", true},
		{"touch {src,tests}/n", true},
		{`touch "$PWD/tests/n"`, true},
		{"cd missing 2>/dev/null; touch tests/n", true},
		{"(cd src); touch tests/n", true},
		{"f() { touch n; }; cd tests && f", true},
		{"for i in 1 2; do touch n; cd tests 2>/dev/null; done; true", true},
		{"eval 'touch tests/n'", true},
		{"exec 3>tests/n", true},
		{"cd() { :; }; cd src && touch tests/n", true},
		{"shopt -s expand_aliases; alias cd=true\ncd src && touch tests/n", true},
		// Lines that leave tests/ alone.
		{"cat tests/a > out", false},
		{"echo x > tests2", false},
		{"echo x > testsuite", false},
		{"cp tests/a src/y", false},
		{"sed s/a/b/ tests/f > out", false},
		{"ls tests 2>&1 >/dev/null", false},
		{"wc -l < tests/f", false},
		{"echo 'rm tests/a' > note", false},
		{"cat <<EOF > out\nrm -r tests\nEOF", false},
		{"echo rm tests # touch tests/a", false},
		{"dd if=tests/f of=out status=none", false},
		{"cd src && touch tests", false},
		{"(cd tests); touch src/q", false},
		{"echo x 2>&tests/a; true", false},
		{"echo x 1>&2 3>&1 >/dev/fd/3 2>/proc/self/fd/1", false},
		{"cat <<'EOF' >out\n$(touch tests/n)\nEOF", false},
		{"echo ')' > out; echo \"a)b\" >> out", false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			wd := bashWorkdir(t)
			c, err := New(wd, []string{"tests"})
			if err != nil {
				t.Fatal(err)
			}
			d := c.CheckLine("bash", tt.line)
			before := snapshot(t, filepath.Join(wd, "tests"))
			cmd := exec.Command(bash, "-c", tt.line)
			cmd.Dir = wd
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("bash: %v: %s", err, out)
			}
			changed := diffSnap(before, snapshot(t, filepath.Join(wd, "tests")))
			switch {
			case tt.refuse && d == nil:
				t.Fatalf("allowed, but bash changed %v", changed)
			case !tt.refuse && d != nil:
				t.Fatalf("refused %+v", d)
			case !tt.refuse && len(changed) > 0:
				t.Fatalf("allowed and bash changed %v", changed)
			case tt.refuse:
				if !touches(changed, d.Path) {
					t.Fatalf("refused %q, but bash changed %v", d.Path, changed)
				}
			}
		})
	}
}

func bashWorkdir(t *testing.T) string {
	t.Helper()
	wd := t.TempDir()
	for _, d := range []string{"tests/d", "src"} {
		if err := os.MkdirAll(filepath.Join(wd, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"tests/a": "a\n", "tests/f": "a\n", "tests/a b": "", "src/x": "x\n"} {
		if err := os.WriteFile(filepath.Join(wd, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wd
}

// snapshot maps each path under root (relative to root's parent) to its
// mode, size, inode change time and content hash.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	parent := filepath.Dir(root)
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		sum := ""
		if e.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		rel, _ := filepath.Rel(parent, p)
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%o %d %d.%d %s", st.Mode, st.Size, st.Ctim.Sec, st.Ctim.Nsec, sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffSnap(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// touches reports whether a change is at p or beneath it.
func touches(changed []string, p string) bool {
	for _, c := range changed {
		if c == p || strings.HasPrefix(c, p+"/") {
			return true
		}
	}
	return false
}
