package hooks

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/murmur/mur/internal/component"
)

func p50(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

// BenchmarkBlockingDispatch: what Dispatch adds to a blocking hook's own
// call (the goal is p50 ≤ 50 µs an event). The hook is hook-probe-go with
// nothing to do; "own" is the same component called directly.
func BenchmarkBlockingDispatch(b *testing.B) {
	f := newSet(b, []Spec{{Name: "b/blocking"}}, []string{`{}`})
	h := f.set.Hooks()[0]
	ctx := context.Background()
	ev := toolEvent(1)
	// Warm the instance.
	for range 100 {
		f.set.Dispatch(ctx, component.OnToolCall, ev, nil)
	}
	own := make([]time.Duration, 0, b.N)
	full := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := h.c.Call(ctx, component.OnToolCall, ev); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		f.set.Dispatch(ctx, component.OnToolCall, ev, map[string]any{"task_id": "tsk_x"})
		t2 := time.Now()
		own = append(own, t1.Sub(t0))
		full = append(full, t2.Sub(t1))
	}
	b.StopTimer()
	po, pf := p50(own), p50(full)
	b.ReportMetric(float64(po.Nanoseconds())/1e3, "own-p50-µs")
	b.ReportMetric(float64(pf.Nanoseconds())/1e3, "dispatch-p50-µs")
	b.ReportMetric(float64((pf-po).Nanoseconds())/1e3, "overhead-p50-µs")
}

// BenchmarkAsync10k: 10,000 events a second offered to an async hook
// with a 64-event queue under on_overflow: drop. Dispatch must never wait
// (its slowest call is reported) and handled + dropped must equal what
// was offered.
func BenchmarkAsync10k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		f := newSet(b, []Spec{{Name: "b/async", Async: true, Queue: 64}}, []string{`{"log":"events.jsonl"}`})
		const n = 10000
		tick := time.Second / n
		took := make([]time.Duration, 0, n)
		start := time.Now()
		for j := 1; j <= n; j++ {
			t0 := time.Now()
			f.set.Dispatch(context.Background(), component.OnToolCall, toolEvent(j), nil)
			took = append(took, time.Since(t0))
			if wait := time.Until(start.Add(time.Duration(j) * tick)); wait > 0 {
				time.Sleep(wait)
			}
		}
		f.set.Drain(time.Minute)
		handled := int64(len(f.lines(b, 0)))
		dropped := f.set.Hooks()[0].Dropped()
		if handled+dropped != n {
			b.Fatalf("handled %d + dropped %d != %d", handled, dropped, n)
		}
		sort.Slice(took, func(a, c int) bool { return took[a] < took[c] })
		b.ReportMetric(float64(took[n/2].Nanoseconds())/1e3, "dispatch-p50-µs")
		b.ReportMetric(float64(took[n*99/100].Nanoseconds())/1e3, "dispatch-p99-µs")
		b.ReportMetric(float64(took[n-1].Nanoseconds())/1e3, "dispatch-max-µs")
		b.ReportMetric(float64(dropped), "dropped")
		b.ReportMetric(float64(handled), "handled")
		f.set.Close()
	}
}
