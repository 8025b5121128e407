package act

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// BenchmarkCallTool is one warm call of the kv fixture's echo through the
// host: schema check, JSON→CBOR, call-tool with std:session-id, CBOR→JSON
// of the result. The fixture's own time is a few stores; p50-ns is the
// median call. BenchmarkCallToolGuest is the bare call-tool through the
// binding, for the guest-and-ABI share.
func BenchmarkCallTool(b *testing.B) {
	_, tools := kvComponent(b, map[string]any{"namespace": "n"})
	in := json.RawMessage(`{"text":"hello","n":42}`)
	if r, err := tools["echo"].Call(context.Background(), in); err != nil || r.Data == "" {
		b.Fatal(r, err)
	}
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, err := tools["echo"].Call(context.Background(), in); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
	}
	reportP50(b, times)
}

func BenchmarkCallToolGuest(b *testing.B) {
	rt, c := kvRuntime(b)
	inst := kvInstance(b, rt, c)
	defer inst.Close()
	p, err := Bind(inst)
	if err != nil {
		b.Fatal(err)
	}
	args, _ := JSONToCBOR([]byte(`{"text":"hello","n":42}`))
	meta := Metadata{{Key: MetaSessionID, Value: []byte{0x64, 'k', 'v', '-', '1'}}}
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, err := p.CallTool(context.Background(), "echo", args, meta); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
	}
	reportP50(b, times)
}

func reportP50(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
}
