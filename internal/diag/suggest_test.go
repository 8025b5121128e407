package diag

import "testing"

func TestSuggest(t *testing.T) {
	keys := []string{"artifacts", "capabilities", "inference", "lifecycle", "network"}
	for _, c := range []struct {
		word  string
		cands []string
		want  string
	}{
		{"capabilites", keys, "capabilities"},
		{"artefacts", keys, "artifacts"},
		{"infrence", keys, "inference"},
		{"netwrok", keys, "network"}, // a swap of neighbours is one edit
		{"zzz", keys, ""},
		{"colour", keys, ""},
		{"ana/helo", []string{"ana/hello", "bob/hello"}, "ana/hello"},
		{"ab", []string{"ac", "xy"}, "ac"},
		{"ab", []string{"xy"}, ""},
		{"network", keys, ""}, // the word itself is not a suggestion
	} {
		if got := Suggest(c.word, c.cands); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}

func FuzzEditDistance(f *testing.F) {
	f.Add("kitten", "sitting")
	f.Add("", "abc")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := editDistance(a, b)
		if d != editDistance(b, a) {
			t.Fatalf("not symmetric: %q %q", a, b)
		}
		if (d == 0) != (string([]rune(a)) == string([]rune(b))) {
			t.Fatalf("distance %d for %q %q", d, a, b)
		}
		if ra, rb := len([]rune(a)), len([]rune(b)); d > max(ra, rb) {
			t.Fatalf("distance %d above the longer length for %q %q", d, a, b)
		}
	})
}
