package cm

import "testing"

func TestSemverMatch(t *testing.T) {
	tests := []struct {
		def, imp string
		want     bool
	}{
		{"wasi:io/streams@0.2.0", "wasi:io/streams@0.2.3", true},
		{"wasi:io/streams@0.2.6", "wasi:io/streams@0.2.0", true},
		{"wasi:io/streams@0.2.6", "wasi:io/streams@0.3.0", false},
		{"wasi:io/streams@1.0.0", "wasi:io/streams@1.4.2", true},
		{"wasi:io/streams@1.0.0", "wasi:io/streams@2.0.0", false},
		{"wasi:io/streams@0.2.0", "wasi:io/poll@0.2.0", false},
		{"wasi:io/streams@0.2.0-rc1", "wasi:io/streams@0.2.0", false},
		{"wasi:io/streams", "wasi:io/streams@0.2.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.def+"→"+tt.imp, func(t *testing.T) {
			_, got := bestMatch(tt.imp, []string{tt.def})
			if got != tt.want {
				t.Fatalf("match = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestSemverPicksHighest(t *testing.T) {
	var defined []string
	for _, v := range []string{"0.2.0", "0.2.6", "0.2.3", "0.3.0"} {
		defined = append(defined, "wasi:io/streams@"+v)
	}
	if got, _ := bestMatch("wasi:io/streams@0.2.1", defined); got != "wasi:io/streams@0.2.6" {
		t.Fatalf("match = %q, want the highest 0.2.x", got)
	}
}

// FuzzSemver checks that version parsing never panics and that a parsed
// version is compatible with itself.
func FuzzSemver(f *testing.F) {
	for _, s := range []string{"wasi:io/streams@0.2.3", "a@1.2.3-rc.1+build", "x@", "@1.2", "a@01.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, v, ok := splitVersion(s)
		if ok && v.pre == "" && !v.compatible(v) {
			t.Fatalf("%q is not compatible with itself", s)
		}
	})
}
