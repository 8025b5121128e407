package driver

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkEvents parses a streamed answer of 1,000 delta events, the
// shape of a long provider response.
func BenchmarkEvents(b *testing.B) {
	var sb strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&sb, "event: delta\ndata: {\"text\":\"token %d \"}\n\n", i)
	}
	stream := sb.String()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		n := 0
		for _, err := range Events(strings.NewReader(stream)) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1000 {
			b.Fatalf("%d events", n)
		}
	}
}
