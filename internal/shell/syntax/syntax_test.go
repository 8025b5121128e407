package syntax

import (
	"os/exec"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	r := func(op string, fd int, target string) Redirect { return Redirect{Op: op, FD: fd, Target: target} }
	tests := []struct {
		name string
		line string
		want []Command
	}{
		{"simple", "echo hi there", []Command{{Words: []string{"echo", "hi", "there"}}}},
		{"single quotes", "echo 'a b' c", []Command{{Words: []string{"echo", "a b", "c"}}}},
		{"double quotes", `echo "a \"b\" \$x"`, []Command{{Words: []string{"echo", `a "b" $x`}}}},
		{"backslash", `rm a\ b`, []Command{{Words: []string{"rm", "a b"}}}},
		{"adjacent quotes", `rm te"st"s/'a'`, []Command{{Words: []string{"rm", "tests/a"}}}},
		{"semicolon", "a; b", []Command{{Words: []string{"a"}}, {Words: []string{"b"}}}},
		{"and or pipe bg", "a && b || c | d & e |& f", []Command{
			{Words: []string{"a"}}, {Words: []string{"b"}}, {Words: []string{"c"}},
			{Words: []string{"d"}}, {Words: []string{"e"}}, {Words: []string{"f"}}}},
		{"newline", "a\nb", []Command{{Words: []string{"a"}}, {Words: []string{"b"}}}},
		{"subshell", "(cd x; rm y)", []Command{{Words: []string{"cd", "x"}}, {Words: []string{"rm", "y"}}}},
		{"comment", "echo a # rm tests\nrm b", []Command{{Words: []string{"echo", "a"}}, {Words: []string{"rm", "b"}}}},
		{"hash inside word", "echo a#b", []Command{{Words: []string{"echo", "a#b"}}}},
		{"redirect >", "echo x > out", []Command{{Words: []string{"echo", "x"}, Redirs: []Redirect{r(">", -1, "out")}}}},
		{"redirect attached", "echo x >out", []Command{{Words: []string{"echo", "x"}, Redirs: []Redirect{r(">", -1, "out")}}}},
		{"redirect >>", "echo x >>out", []Command{{Words: []string{"echo", "x"}, Redirs: []Redirect{r(">>", -1, "out")}}}},
		{"redirect >|", "echo x >| out", []Command{{Words: []string{"echo", "x"}, Redirs: []Redirect{r(">|", -1, "out")}}}},
		{"redirect &>", "cmd &> out", []Command{{Words: []string{"cmd"}, Redirs: []Redirect{r("&>", -1, "out")}}}},
		{"redirect &>>", "cmd &>>out", []Command{{Words: []string{"cmd"}, Redirs: []Redirect{r("&>>", -1, "out")}}}},
		{"redirect N>", "cmd 2>err", []Command{{Words: []string{"cmd"}, Redirs: []Redirect{r(">", 2, "err")}}}},
		{"redirect N>>", "cmd 2>> err", []Command{{Words: []string{"cmd"}, Redirs: []Redirect{r(">>", 2, "err")}}}},
		{"redirect >&word", "cmd >&out", []Command{{Words: []string{"cmd"}, Redirs: []Redirect{r("&>", -1, "out")}}}},
		{"dup is not a file", "cmd 2>&1 >&2 1>&-", []Command{{Words: []string{"cmd"}}}},
		{"quoted digit is a word", `echo "2">x`, []Command{{Words: []string{"echo", "2"}, Redirs: []Redirect{r(">", -1, "x")}}}},
		{"input", "cmd < in <<< str", []Command{{Words: []string{"cmd"}, Redirs: []Redirect{r("<", -1, "in"), r("<<<", -1, "str")}}}},
		{"heredoc body skipped", "cat <<EOF > out\nrm tests\nEOF\nls", []Command{
			{Words: []string{"cat"}, Redirs: []Redirect{r("<<", -1, "EOF"), r(">", -1, "out")}},
			{Words: []string{"ls"}}}},
		{"heredoc dash", "cat <<-'E'\n\trm x\n\tE\nls", []Command{
			{Words: []string{"cat"}, Redirs: []Redirect{r("<<-", -1, "E")}}, {Words: []string{"ls"}}}},
		{"command substitution opaque", "echo $(rm tests; echo >x) y", []Command{{Words: []string{"echo", "$(rm tests; echo >x)", "y"}}}},
		{"backticks opaque", "echo `rm tests` y", []Command{{Words: []string{"echo", "`rm tests`", "y"}}}},
		{"param expansion", "echo ${a:-b c}", []Command{{Words: []string{"echo", "${a:-b c}"}}}},
		{"process substitution", "tee >(cat >x) y", []Command{{Words: []string{"tee", ">(cat >x)", "y"}}}},
		{"continuation", "rm \\\n tests", []Command{{Words: []string{"rm", "tests"}}}},
		{"unterminated quote", "echo 'abc", []Command{{Words: []string{"echo", "abc"}}}},
		{"dangling redirect", "echo >", []Command{{Words: []string{"echo"}}}},
		{"redirect before separator dropped", "echo > ; ls", []Command{{Words: []string{"echo"}}, {Words: []string{"ls"}}}},
		{"empty", "  \n ; ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse(tt.line)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q)\n got %#v\nwant %#v", tt.line, got, tt.want)
			}
		})
	}
}

func TestRedirectWrites(t *testing.T) {
	for op, want := range map[string]bool{">": true, ">>": true, ">|": true, "&>": true, "&>>": true, "<": false, "<<": false, "<<<": false, "<>": false} {
		if got := (Redirect{Op: op}).Writes(); got != want {
			t.Errorf("%q.Writes() = %v, want %v", op, got, want)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"-r .", []string{"-r", "."}, false},
		{`'a b' "c d" e\ f`, []string{"a b", "c d", "e f"}, false},
		{`'' x`, []string{"", "x"}, false},
		{"a > b | c", []string{"a", ">", "b", "|", "c"}, false},
		{`"a\"b"`, []string{`a"b`}, false},
		{"'open", nil, true},
		{`"open`, nil, true},
		{"", nil, false},
	}
	for _, tt := range tests {
		got, err := SplitArgs(tt.in)
		if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"echo hi > out", "cat <<EOF\nx\nEOF\n", "a $(b) `c` ${d} >(e) <(f)", "rm 'a\\' \"b\\\"\" c\\ d",
		"2>&1 &>> x >| y", "((((", "$((1+2))", "\"$(\")\"", "'", "\\", "<<-",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cmds := Parse(s)
		for _, c := range cmds {
			if len(c.Words) == 0 && len(c.Redirs) == 0 {
				t.Fatalf("empty command from %q", s)
			}
			for _, r := range c.Redirs {
				if r.Op == "" || r.Op == "<dup>" {
					t.Fatalf("bad redirect %+v from %q", r, s)
				}
			}
		}
		_, _ = SplitArgs(s)
	})
}

// TestSplitArgsMatchesBash checks that a non-interpreter's arguments split
// the way bash splits the same words (quote removal, no expansion).
func TestSplitArgsMatchesBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, line := range []string{
		`-r .`, `'a b' "c d" e\ f`, `'' x`, `"a\"b" 'c\d' "e\\f" "g\h"`, `a"b"'c'd`, `--opt=' spaced '`,
		"tab\tsep  multiple   spaces", `"mixed 'quotes'" 'and "these"'`, `back\\slash`, `"new
line"`,
	} {
		want, err := exec.Command(bash, "-fc", `eval "set -- $1"; printf '%s\0' "$@"`, "_", line).Output()
		if err != nil {
			t.Fatalf("bash %q: %v", line, err)
		}
		got, err := SplitArgs(line)
		if err != nil {
			t.Fatalf("SplitArgs(%q): %v", line, err)
		}
		var joined string
		for _, g := range got {
			joined += g + "\x00"
		}
		if joined != string(want) {
			t.Errorf("SplitArgs(%q) = %q, bash gives %q", line, joined, want)
		}
	}
}
