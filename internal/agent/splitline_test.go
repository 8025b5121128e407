package agent

import "testing"

// A failure text past one line keeps its first line for the reason and is
// whole in the detail; a one-line text (or one with only a trailing line
// break) has no detail.
func TestSplitLine(t *testing.T) {
	for _, c := range []struct{ in, line, detail string }{
		{"HTTP 503: busy", "HTTP 503: busy", ""},
		{"busy\n", "busy", ""},
		{"wasm trap: unreachable\n    at m!boom (func 1)", "wasm trap: unreachable", "wasm trap: unreachable\n    at m!boom (func 1)"},
		{"driver failed:\r\nstack", "driver failed", "driver failed:\r\nstack"},
	} {
		line, detail := splitLine(c.in)
		if line != c.line || detail != c.detail {
			t.Errorf("%q: %q, %q", c.in, line, detail)
		}
	}
}
