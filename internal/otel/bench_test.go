package otel_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/otel"
)

// BenchmarkEmitOverhead is what OTel adds to each event on the session's
// path (Emit on the stream's goroutine), with a live OTLP/HTTP receiver
// taking the exports: p50 and p99 per event over b.N events of the usual
// shapes. Goal (issue #15): p50 ≤ 5 µs.
func BenchmarkEmitOverhead(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var s event.Stream
	x, err := otel.New(otel.Options{Endpoint: srv.URL, QueueSize: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	s.Add(x)
	s.Emit(event.Event{Type: "session_start", Fields: map[string]any{"session_id": "ses_b", "capsule": "bench", "model": "m", "tools": []string{"a", "b"}}})
	s.Emit(event.Event{Type: "task_start", Fields: map[string]any{"task_id": "tsk_b", "origin": "cli"}})
	shapes := []event.Event{
		{Type: "inference", Fields: map[string]any{"task_id": "tsk_b", "turn": 1, "model": "m", "input_tokens": 1200, "output_tokens": 80, "duration_ms": int64(900), "stop_reason": "tool_use", "charged": 1280}},
		{Type: "tool_call", Fields: map[string]any{"task_id": "tsk_b", "turn": 1, "tool": "read", "call_id": "c1", "status": "passed", "duration_ms": int64(3), "state_effect": "read"}},
		{Type: "tool_call", Fields: map[string]any{"task_id": "tsk_b", "turn": 1, "tool": "write", "call_id": "c2", "status": "passed", "duration_ms": int64(4), "state_effect": "mutate"}},
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		e := shapes[i%len(shapes)]
		t0 := time.Now()
		x.Emit(e)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	s.Emit(event.Event{Type: "task_end", Fields: map[string]any{"task_id": "tsk_b", "exit_status": "ok"}})
	s.Emit(event.Event{Type: "session_end", Fields: map[string]any{"session_id": "ses_b", "exit_status": "ok"}})
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns/event")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns/event")
	b.ReportMetric(float64(x.Dropped()), "dropped")
}

// BenchmarkSessionEndpointDown is a real session's wall time (open, two
// turns with a tool call, close) without OTel, with otel_endpoint set to
// a port nothing listens on (refused at once), set to a blackholed one
// (its connections are never answered) and set to a working receiver,
// interleaved, each model call
// taking MUR_BENCH_TURN_MS (default 100 ms, a fast model; 0 shows the
// absolute cost). Goal (issue #15): down changes wall time by ≤ 1%.
func BenchmarkSessionEndpointDown(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	hole := otel.Blackhole(b)
	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer up.Close()
	turn := 100 * time.Millisecond
	if v := os.Getenv("MUR_BENCH_TURN_MS"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		turn = time.Duration(ms) * time.Millisecond
	}
	// Rotate the four so the machine's load falls on all alike.
	eps := []string{"", down, hole, up.URL}
	walls := make([][]time.Duration, len(eps))
	for i := range b.N {
		for j := range eps {
			k := (i + j) % len(eps)
			t0 := time.Now()
			runSessionModel(b, eps[k], "bench", turn)
			walls[k] = append(walls[k], time.Since(t0))
		}
	}
	p50 := make([]time.Duration, len(eps))
	for k := range walls {
		slices.Sort(walls[k])
		p50[k] = walls[k][len(walls[k])/2]
	}
	mo := p50[0]
	b.ReportMetric(float64(mo.Microseconds()), "off-p50-µs")
	for k, name := range []string{"", "refused", "blackholed", "working"} {
		if k == 0 {
			continue
		}
		b.ReportMetric(float64(p50[k].Microseconds()), name+"-p50-µs")
		b.ReportMetric(100*(float64(p50[k])-float64(mo))/float64(mo), name+"-%")
	}
}
