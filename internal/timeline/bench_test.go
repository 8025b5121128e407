package timeline

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// writeTrace writes a trace of n lines: one session, tasks of 10 turns,
// each turn an inference line and three tool calls.
func writeTrace(tb testing.TB, n int) string {
	path := filepath.Join(tb.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ts := func(i int) string { return t0.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano) }
	fmt.Fprintf(w, `{"event":"session_start","ts":"%s","capsule":"acme/bench","model":"m-1","session_id":"ses_b"}`+"\n", ts(0))
	i, task, turn := 1, 0, 0
	for i < n-1 {
		if turn == 0 {
			task++
			fmt.Fprintf(w, `{"event":"task_start","ts":"%s","origin":"door","task_id":"tsk_%d"}`+"\n", ts(i), task)
			i++
		}
		turn++
		fmt.Fprintf(w, `{"event":"inference","ts":"%s","charged":1300,"duration_ms":900,"input_tokens":1200,"message_shas":["aa","bb","cc"],"model":"m-1","output_tokens":80,"stop_reason":"tool_use","task_id":"tsk_%d","turn":%d}`+"\n", ts(i), task, turn)
		i++
		for c := 0; c < 3 && i < n-1; c++ {
			fmt.Fprintf(w, `{"event":"tool_call","ts":"%s","call_id":"c%d","duration_ms":3,"state_effect":"read","status":"passed","task_id":"tsk_%d","tool":"read_file","turn":%d}`+"\n", ts(i), c, task, turn)
			i++
		}
		if turn == 10 && i < n-1 {
			fmt.Fprintf(w, `{"event":"task_end","ts":"%s","exit_status":"ok","input_tokens":12000,"output_tokens":800,"task_id":"tsk_%d","turns":10}`+"\n", ts(i), task)
			i, turn = i+1, 0
		}
	}
	fmt.Fprintf(w, `{"event":"session_end","ts":"%s","duration_ms":%d,"exit_status":"ok","session_id":"ses_b","turns":%d}`+"\n", ts(i), i, task*10)
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return path
}

// BenchmarkRead100k reads a 100,000-line trace into its timeline, as mur
// trace show does. Goal (issue #15): ≤ 1 s and ≤ 100 MB. B/op is all it
// allocates; retained-MB what the timeline keeps.
func BenchmarkRead100k(b *testing.B) {
	path := writeTrace(b, 100_000)
	fi, _ := os.Stat(path)
	b.ReportAllocs()
	b.ResetTimer()
	var s *Session
	for range b.N {
		var err error
		if s, err = ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if s.Lines != 100_000 || s.ExitStatus != "ok" {
		b.Fatalf("read %d lines, status %q", s.Lines, s.ExitStatus)
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapInuse)/(1<<20), "retained-MB")
	b.ReportMetric(float64(fi.Size())/(1<<20), "file-MB")
	runtime.KeepAlive(s)
}
