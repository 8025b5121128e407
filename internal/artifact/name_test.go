package artifact

import (
	"errors"
	"strings"
	"testing"
)

func TestValidBareName(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"tool-git", true}, {"a", true}, {"a1-b2", true}, {strings.Repeat("a", 100), true},
		{"", false}, {"-a", false}, {"a-", false}, {"A", false}, {"a/b", false}, {"a_b", false}, {strings.Repeat("a", 101), false},
	} {
		if got := ValidBareName(tt.in); got != tt.ok {
			t.Errorf("ValidBareName(%q) = %v, want %v", tt.in, got, tt.ok)
		}
	}
}

func TestParseRef(t *testing.T) {
	r, err := ParseRef("ana/some-tool@1.2.3")
	if err != nil || r.Scope != "ana" || r.Name != "some-tool" || r.Version != "1.2.3" {
		t.Fatalf("ParseRef = %+v, %v", r, err)
	}
	for _, bad := range []string{"some-tool@1.0.0", "ana/x", "ana/x@", "ana/x@../1", "ana/x/y@1", "Ana/x@1", "ana/x@1/2"} {
		if _, err := ParseRef(bad); !errors.Is(err, ErrName) {
			t.Errorf("ParseRef(%q) err = %v, want ErrName", bad, err)
		}
	}
	_, err = ParseFullName("house-style")
	if err == nil || !strings.Contains(err.Error(), "'local/house-style'") {
		t.Fatalf("bare name hint missing: %v", err)
	}
}

func TestFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"Searches the web. Returns links.": "Searches the web.",
		"Version 1.2 of a tool! Yes":       "Version 1.2 of a tool!",
		"  multi\n line   text ":           "multi line text",
		"":                                 "",
	} {
		if got := FirstSentence(in); got != want {
			t.Errorf("FirstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScanWIT(t *testing.T) {
	b := []byte("\x00murmur:tool/run@0.1.0\x01xx murmur:runtime/inference@0.2.0 murmur:tool/run@0.1.0 murmur:bad")
	got := ScanWIT(b)
	if len(got) != 2 || got[0] != "murmur:runtime/inference@0.2.0" || got[1] != "murmur:tool/run@0.1.0" {
		t.Fatalf("ScanWIT = %v", got)
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"ana/tool@1.0.0", "a/b@v1", "tool@1", "a/b/c@1", "a/b@../x", "A/b@1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		if r.String() != s {
			t.Fatalf("ParseRef(%q).String() = %q", s, r.String())
		}
		if strings.ContainsAny(r.Version, "/\\") || r.Version == ".." || !ValidBareName(r.Scope) || !ValidBareName(r.Name) {
			t.Fatalf("ParseRef(%q) accepted %+v", s, r)
		}
	})
}
