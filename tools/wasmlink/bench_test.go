package main

import (
	"bytes"
	"testing"
)

// BenchmarkLink post-links a module the size of a Go guest's data (2.5
// MiB of segments around the arena header).
func BenchmarkLink(b *testing.B) {
	t := &testing.T{}
	segs := map[uint32][]byte{4096: bytes.Repeat([]byte{1}, 1<<20), 2 << 20: descriptor(6<<20, 1<<20), 4 << 20: bytes.Repeat([]byte{2}, 3<<19)}
	mod := module(t, []string{"noop"}, segs)
	b.SetBytes(int64(len(mod)))
	for b.Loop() {
		if _, err := Link(mod); err != nil {
			b.Fatal(err)
		}
	}
}
