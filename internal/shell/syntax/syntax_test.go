package syntax

import (
	"os/exec"
	"reflect"
	"testing"
)

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

func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{"-r .", `'a b' "c d" e\ f`, `"a\"b"`, "'", "\\", `"open`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, err := SplitArgs(s)
		if err != nil && args != nil {
			t.Fatalf("SplitArgs(%q) = %q and %v", s, args, err)
		}
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
