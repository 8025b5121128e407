package readonly

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/diag"
)

// newChecker makes a workdir holding tests/a and bench/fixtures with
// read_only entries tests and bench/fixtures.
func newChecker(t *testing.T) (*Checker, string) {
	t.Helper()
	wd := t.TempDir()
	for _, d := range []string{"tests/a/b", "tests2", "testsuite/a", "build/tests", "bench/fixtures", "src"} {
		if err := os.MkdirAll(filepath.Join(wd, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c, err := New(wd, []string{"tests", " ", "bench/fixtures/"})
	if err != nil {
		t.Fatal(err)
	}
	return c, wd
}

func TestNewEntries(t *testing.T) {
	wd := t.TempDir()
	for _, bad := range []string{"/etc", "..", "../x", "a/../../x"} {
		if _, err := New(wd, []string{bad}); !errors.Is(err, ErrEntry) {
			t.Errorf("New(%q) err = %v, want ErrEntry", bad, err)
		}
	}
	c, err := New(wd, []string{"", "  ", "./tests/", "a/./b"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Entries(), ","); got != "tests,a/b" {
		t.Errorf("entries = %q", got)
	}
	empty, _ := New(wd, []string{" "})
	if empty.Active() {
		t.Error("whitespace-only entries left the checker active")
	}
}

func TestCovered(t *testing.T) {
	c, wd := newChecker(t)
	outside := t.TempDir()
	if err := os.Symlink(filepath.Join(wd, "tests"), filepath.Join(wd, "src", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(wd, "tests", "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(wd, "tests", "a"), filepath.Join(wd, "src", "deep")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../tests/new-target", filepath.Join(wd, "src", "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"loop2", "src/loop1"}, {"loop1", "src/loop2"}} {
		if err := os.Symlink(filepath.Join(wd, l[1]), filepath.Join(wd, "src", l[0])); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		p       string
		wantRel string
		want    bool
	}{
		{"tests", "tests", true},
		{"tests/a", "tests/a", true},
		{"tests/a/b", "tests/a/b", true},
		{"./tests/a", "tests/a", true},
		{filepath.Join(wd, "tests/a"), "tests/a", true},
		{"tests/new/file.txt", "tests/new/file.txt", true},
		{"src/link/a", "tests/a", true},
		{"src/../tests/x", "tests/x", true},
		{"src/deep/../x", "tests/x", true},         // .. climbs from the link's target
		{"src/deep/../../src", "", false},          // back out of the subtree
		{"src/dangling", "tests/new-target", true}, // writing creates the target
		{"src/./deep//b", "tests/a/b", true},
		{"src/loop1/x", "", false}, // a link loop ends, judged as written
		{"bench/fixtures/x", "bench/fixtures/x", true},
		{"tests2", "", false},
		{"testsuite/a", "", false},
		{"atests", "", false},
		{"build/tests", "", false},
		{"bench", "", false},
		{"tests/out/x", "", false}, // resolves outside the workdir
		{"/etc/passwd", "", false},
		{"../tests", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		rel, _, ok := c.Covered(tt.p, "")
		if ok != tt.want || rel != tt.wantRel {
			t.Errorf("Covered(%q) = %q, %v; want %q, %v", tt.p, rel, ok, tt.wantRel, tt.want)
		}
	}
}

func TestCheckLine(t *testing.T) {
	c, _ := newChecker(t)
	tests := []struct {
		name    string
		line    string
		path    string // "" means allowed
		ruleHas string
	}{
		{"redirect >", "echo x > tests/a.txt", "tests/a.txt", `">"`},
		{"redirect >>", "echo x >>tests/a.txt", "tests/a.txt", `">>"`},
		{"redirect >|", "echo x >| tests/a.txt", "tests/a.txt", `">|"`},
		{"redirect &>", "make &> tests/log", "tests/log", `"&>"`},
		{"redirect &>>", "make &>> tests/log", "tests/log", `"&>>"`},
		{"redirect N>", "make 2> tests/err", "tests/err", `"2>"`},
		{"redirect N>>", "make 2>>tests/err", "tests/err", `"2>>"`},
		{"redirect elsewhere", "echo x > out.txt 2>/dev/null", "", ""},
		{"input redirect is a read", "wc -l < tests/a", "", ""},
		{"dup is not a path", "ls tests 2>&1", "", ""},
		{"tee", "echo x | tee -a tests/x", "tests/x", `"tee"`},
		{"rm", "rm -rf tests", "tests", `"rm"`},
		{"rmdir", "rmdir tests/a/b", "tests/a/b", `"rmdir"`},
		{"unlink", "unlink tests/f", "tests/f", `"unlink"`},
		{"shred", "shred -u tests/f", "tests/f", `"shred"`},
		{"truncate", "truncate -s 0 tests/f", "tests/f", `"truncate"`},
		{"mkdir", "mkdir -p tests/new", "tests/new", `"mkdir"`},
		{"touch", "touch tests/f", "tests/f", `"touch"`},
		{"chmod", "chmod 600 tests/f", "tests/f", `"chmod"`},
		{"chown", "chown me tests/f", "tests/f", `"chown"`},
		{"patch", "patch tests/f fix.diff", "tests/f", `"patch"`},
		{"mv last", "mv src/x tests/x", "tests/x", `"mv"`},
		{"mv from protected is allowed by the table", "mv tests/x src/x", "", ""},
		{"cp last", "cp a b tests/", "tests", `"cp"`},
		{"cp source is a read", "cp tests/a src/a", "", ""},
		{"cp -t", "cp -t tests a b", "tests", `"cp"`},
		{"install last", "install -m 644 x tests/x", "tests/x", `"install"`},
		{"ln last", "ln -s ../x tests/x", "tests/x", `"ln"`},
		{"sed -i", "sed -i 's/a/b/' tests/f", "tests/f", `"sed"`},
		{"sed --in-place", "sed --in-place -e s/a/b/ tests/f", "tests/f", `"sed"`},
		{"sed -i.bak", "sed -i.bak s/a/b/ tests/f", "tests/f", `"sed"`},
		{"sed -Ei cluster", "sed -Ei s/a/b/ tests/f", "tests/f", `"sed"`},
		{"sed without -i is a read", "sed s/a/b/ tests/f", "", ""},
		{"sed script naming the path is not a file", "sed -i tests src/f", "", ""},
		{"dd of=", "dd if=/dev/zero of=tests/img bs=1 count=1", "tests/img", `"dd"`},
		{"dd if= is a read", "dd if=tests/img of=out", "", ""},
		{"cat is outside the table", "cat tests/a", "", ""},
		{"second command", "ls; rm tests/a", "tests/a", `"rm"`},
		{"after &&", "true && rm tests/a", "tests/a", `"rm"`},
		{"in a pipeline", "ls | tee tests/l", "tests/l", `"tee"`},
		{"in a subshell", "(rm tests/a)", "tests/a", `"rm"`},
		{"absolute path", "rm <WD>/tests/a", "tests/a", `"rm"`},
		{"full path binary", "/bin/rm tests/a", "tests/a", `"rm"`},
		{"assignment prefix", "LC_ALL=C rm tests/a", "tests/a", `"rm"`},
		{"wrapper sudo", "sudo -u root rm tests/a", "tests/a", `"rm"`},
		{"wrapper env", "env -i A=1 touch tests/a", "tests/a", `"touch"`},
		{"wrapper timeout", "timeout 5 rm tests/a", "tests/a", `"rm"`},
		{"keyword then", "if true; then rm tests/a; fi", "tests/a", `"rm"`},
		{"quoted path", `rm "tests/a b"`, "tests/a b", `"rm"`},
		{"glob", "rm test*", "tests", `"rm"`},
		{"cd then relative", "cd tests && rm a", "tests/a", `"rm"`},
		{"cd elsewhere then relative", "cd src && rm tests", "", ""},
		{"cd unknown then relative", "cd $X && rm tests", "", ""},
		{"cd unknown then absolute", "cd $X && rm <WD>/tests/a", "tests/a", `"rm"`},
		{"command substitution", "echo $(rm tests)", "tests", `"rm"`},
		{"literal eval", "eval 'rm tests'", "tests", `"rm"`},
		{"eval of an unknown word", "eval \"$CMD\"", "", ""},
		{"ANSI-C quoted target", "echo x > $'tests/a'", "tests/a", `">"`},
		{"ANSI-C escapes", `touch $'\x74ests/a'`, "tests/a", `"touch"`},
		{"a ) in quotes inside a substitution", `x=$(echo ")"); echo y > tests/a`, "tests/a", `">"`},
		{"function keyword body", "function f { touch tests/a; }", "tests/a", `"touch"`},
		{"dup to a file name", "echo x 1>&tests/a", "tests/a", `"1>&"`},
		{"bash's >&file", "echo x >&tests/a", "tests/a", `">&"`},
		{"dup to a descriptor", "echo x 1>&2 3>&- 4>&3-", "", ""},
		{"N>&file for N other than 1 is ambiguous", "echo x 2>&tests/a", "", ""},
		{"exec redirection", "exec 3> tests/a", "tests/a", `"3>"`},
		{"named descriptor", "exec {fd}> tests/a", "tests/a", `"{fd}>"`},
		{"/proc/self/cwd is the command's cwd", "echo x > /proc/self/cwd/tests/a", "tests/a", `">"`},
		{"/proc/thread-self/cwd", "touch /proc/thread-self/cwd/tests/a", "tests/a", `"touch"`},
		{"/proc/$$/cwd", "touch /proc/$$/cwd/tests/a", "tests/a", `"touch"`},
		{"/proc/<pid>/task/<tid>/cwd", "touch /proc/1/task/1/cwd/tests/a", "tests/a", `"touch"`},
		{"/proc/self/cwd after cd", "cd tests && touch /proc/self/cwd/b", "tests/b", `"touch"`},
		{"/proc/self/root", "rm /proc/self/root/<WD>/tests/a", "tests/a", `"rm"`},
		{"/proc/self/cwd after an unknown cd", "cd $X; touch /proc/self/cwd/tests/a", "tests/a", `"touch"`},
		{"a descriptor is the command's own", "echo x > /proc/self/fd/1 2>/dev/stderr >/dev/fd/1", "", ""},
		{"process substitution", "cat <(touch tests/a)", "tests/a", `"touch"`},
		{"process substitution as a target", "echo x > >(tee tests/a)", "tests/a", `"tee"`},
		{"heredoc body substitution", "cat <<EOF\n$(touch tests/a)\nEOF", "tests/a", `"touch"`},
		{"quoted heredoc body is data", "cat <<'EOF'\n$(touch tests/a)\nEOF", "", ""},
		{"here-string substitution", `cat <<< "$(rm tests/a)"`, "tests/a", `"rm"`},
		{"brace expansion", "touch {src,tests}/n", "tests/n", `"touch"`},
		{"$PWD", `touch "$PWD/tests/a"`, "tests/a", `"touch"`},
		{"unknown variable", "touch $F/a", "", ""},
		{"~ is the command's home", "touch ~/tests/a", "", ""},
		{"a failed cd leaves the shell where it was", "cd missing; touch tests/a", "tests/a", `"touch"`},
		{"cd || alternative", "cd src || touch tests/a", "tests/a", `"touch"`},
		{"cd in a subshell stays there", "(cd src); touch tests/a", "tests/a", `"touch"`},
		{"cd in a subshell, write elsewhere", "(cd tests); touch src/q", "", ""},
		{"cd in a pipeline stays there", "cd src | true; touch tests/a", "tests/a", `"touch"`},
		{"function called after cd", "f() { touch a; }; cd tests && f", "tests/a", `"touch"`},
		{"loop's second turn", "for i in 1 2; do touch a; cd tests; done", "tests/a", `"touch"`},
		{"a function named cd", "cd() { :; }; cd src && touch tests/a", "tests/a", `"touch"`},
		{"an alias for cd", "shopt -s expand_aliases; alias cd=true\ncd src && touch tests/a", "tests/a", `"touch"`},
		{"bash -c", "bash -c 'touch tests/a'", "tests/a", `"touch"`},
		{"case body", "case x in x) touch tests/a;; esac", "tests/a", `"touch"`},
		{"while condition", "while touch tests/a; do break; done", "tests/a", `"touch"`},
		{"coproc", "coproc touch tests/a", "tests/a", `"touch"`},
		{"time", "time touch tests/a", "tests/a", `"touch"`},
		{"negated", "! touch tests/a", "tests/a", `"touch"`},
		{"background", "touch tests/a &", "tests/a", `"touch"`},
		{"declare substitution", "declare x=$(touch tests/a)", "tests/a", `"touch"`},
		{"[[ ]] substitution", "[[ -n $(touch tests/a) ]]", "tests/a", `"touch"`},
		{"arithmetic substitution", "(( $(touch tests/a) + 1 ))", "tests/a", `"touch"`},
		{"statements before a syntax error run", "touch tests/a\nif then", "tests/a", `"touch"`},
		{"heredoc body is data", "cat <<EOF\nrm tests\nEOF", "", ""},
		{"comment", "ls # rm tests", "", ""},
		{"rm after --", "rm -- -x tests/y", "tests/y", `"rm"`},
		{"sibling prefix", "rm tests2 testsuite/a", "", ""},
		{"nested entry", "touch bench/fixtures/x", "bench/fixtures/x", `"touch"`},
		{"parent of nested entry", "touch bench/x", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := strings.ReplaceAll(tt.line, "<WD>", c.workdir)
			d := c.CheckLine("bash", line)
			if tt.path == "" {
				if d != nil {
					t.Fatalf("CheckLine(%q) refused: %v", line, d)
				}
				return
			}
			if d == nil {
				t.Fatalf("CheckLine(%q) allowed, want refusal of %q", line, tt.path)
			}
			if d.Path != tt.path || !strings.Contains(d.Rule, tt.ruleHas) || d.Tool != "bash" || d.Command != line {
				t.Errorf("CheckLine(%q) = %+v; want path %q rule containing %s", line, d, tt.path, tt.ruleHas)
			}
		})
	}
}

// TestGlobReadsOnlyForWrites: a glob is expanded against the filesystem
// only where the table names a write, so a read of a large tree (ls /*/*)
// costs the check no directory walk.
func TestGlobReadsOnlyForWrites(t *testing.T) {
	c, _ := newChecker(t)
	reads := 0
	readDir = func(name string) ([]os.DirEntry, error) { reads++; return os.ReadDir(name) }
	t.Cleanup(func() { readDir = os.ReadDir })
	for _, line := range []string{"ls tests/* /*/*", "cat t*/* > out.txt", "grep -r x */ 2>&1 | sort"} {
		if d := c.CheckLine("bash", line); d != nil || reads != 0 {
			t.Fatalf("CheckLine(%q) = %v after %d directory reads, want no refusal and no reads", line, d, reads)
		}
	}
	if d := c.CheckLine("bash", "rm t*/*"); d == nil || reads == 0 {
		t.Fatalf("rm t*/* = %v after %d reads, want a refusal read from the filesystem", d, reads)
	}
}

func TestCheckArgs(t *testing.T) {
	c, _ := newChecker(t)
	tests := []struct {
		binary string
		args   []string
		path   string
	}{
		{"rm", []string{"-r", "tests/a"}, "tests/a"},
		{"rm", []string{"src"}, ""},
		{"cp", []string{"x", "tests/y"}, "tests/y"},
		// A direct argv has no shell: ">" is an argument of echo.
		{"echo", []string{">", "tests/a"}, ""},
		{"bash", []string{"-c", "echo > tests/a"}, "tests/a"},
		{"sh", []string{"-ec", "rm tests"}, "tests"},
		{"bash", []string{"script.sh", "tests"}, ""},
		{"/usr/bin/touch", []string{"tests/t"}, "tests/t"},
	}
	for _, tt := range tests {
		d := c.CheckArgs(tt.binary, tt.args)
		got := ""
		if d != nil {
			got = d.Path
		}
		if got != tt.path {
			t.Errorf("CheckArgs(%q, %q) refused %q, want %q", tt.binary, tt.args, got, tt.path)
		}
	}
}

func TestInactiveCheckerAllowsEverything(t *testing.T) {
	var c *Checker
	if d := c.CheckLine("bash", "rm -rf /"); d != nil {
		t.Fatal(d)
	}
	if d, err := c.CheckInput("t", []byte(`{"dest":"x"}`), nil); d != nil || err != nil {
		t.Fatal(d, err)
	}
}

func TestDenialMessageAndEvent(t *testing.T) {
	c, _ := newChecker(t)
	d := c.CheckLine("bash", "rm tests/a")
	if d == nil {
		t.Fatal("not refused")
	}
	msg := d.Message()
	for _, want := range []string{`"tests/a"`, `"tests"`, "read_only", `"rm"`, "Nothing ran", "still readable"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if !errors.Is(d, ErrDenied) {
		t.Error("denial is not ErrDenied")
	}
	e := d.Event()
	if e.Type != "protected_path_denied" || e.Fields["path"] != "tests/a" || e.Fields["entry"] != "tests" ||
		e.Fields["tool"] != "bash" || e.Fields["command"] != "rm tests/a" {
		t.Errorf("event = %+v", e)
	}
}

func TestInterpreterWarnings(t *testing.T) {
	got := InterpreterWarnings([]string{"tests"}, []string{"jq", "bash", "python3.12", "git", "node"})
	if len(got) != 3 {
		t.Fatalf("got %v", got)
	}
	for i, b := range []string{"bash", "python3.12", "node"} {
		if got[i].Code != diag.SecReadOnlyInterpreter || !strings.Contains(got[i].Msg, b) {
			t.Errorf("warning %d = %v", i, got[i])
		}
	}
	if got := InterpreterWarnings(nil, []string{"bash"}); got != nil {
		t.Errorf("no read_only but warned: %v", got)
	}
	if got := InterpreterWarnings([]string{" "}, []string{"bash"}); got != nil {
		t.Errorf("blank read_only but warned: %v", got)
	}
}

func BenchmarkCheckLine(b *testing.B) {
	c, err := New(b.TempDir(), []string{"tests", "bench/fixtures"})
	if err != nil {
		b.Fatal(err)
	}
	line := `cd src && go test ./... 2>&1 | tee out.log; sed -i 's/a/b/' main.go && cp -r build dist/ > /dev/null`
	for b.Loop() {
		if d := c.CheckLine("bash", line); d != nil {
			b.Fatal(d)
		}
	}
}
