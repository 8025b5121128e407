package tool

import (
	"strings"
	"testing"

	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

// BenchmarkRoundTrip lifts a 64 KiB input and lowers a result carrying it
// back with two metadata pairs: the guest-side ABI work of one tool call.
func BenchmarkRoundTrip(b *testing.B) {
	m := abitest.New(4 << 20)
	data := strings.Repeat("x", 64<<10)
	ptr := m.Put([]byte(data))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		in := liftInput(m, 1, ptr, uint32(len(data)), 0, 0, 0)
		lowerResult(m, Passed(*in.Data).Effect(EffectRead, "file:a"))
		m.Reset(ptr + uint32(len(data)))
	}
}
