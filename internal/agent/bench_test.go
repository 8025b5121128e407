package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/tokens"
	"github.com/murmur/mur/internal/trace"
)

// benchLoop is a loop whose driver answers at once from memory, so what is
// measured is the runtime's own work per turn: building and marshalling the
// request, counting and hashing, parsing the reply, dispatching the tool
// and writing trace lines to a real trace.jsonl.
func benchLoop(b *testing.B, turns int) (*Loop, func()) {
	dir := b.TempDir()
	tw, err := trace.Create(filepath.Join(dir, trace.FileName))
	if err != nil {
		b.Fatal(err)
	}
	var ev event.Stream
	ev.Add(tw)
	n := 0
	call := passed(`{"text":"Reading the next file.","tool_calls":[{"id":"c","name":"style","input":{}}],"stop_reason":"tool_use"}`, MetaInputTokens, "900", MetaOutputTokens, "20")
	done := passed(`{"text":"All done.","stop_reason":"end_turn"}`, MetaInputTokens, "900", MetaOutputTokens, "5")
	drv := DriverFunc(func(context.Context, []byte) (Result, error) {
		n++
		if n%turns == 0 {
			return done, nil
		}
		return call, nil
	})
	tools := []Tool{NewSkill("style", "House style.", "# Style\nKeep functions short; name things for what they are.")}
	prompt := "You are a careful engineer."
	l := testLoop(b, 4096, tools, Runtime{Driver: drv, Events: &ev}, func(c *manifest.Capsule) { c.Inference.SystemPrompt = &prompt })
	return l, func() { tw.Close() }
}

// BenchmarkTurnOverhead reports the runtime's overhead per turn, excluding
// the provider, averaged over tasks of 20 and of 100 turns (what grows with
// the conversation is the request's JSON encoding).
func BenchmarkTurnOverhead(b *testing.B) {
	for _, turns := range []int{20, 100} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			tokens.Count("warm the vocabulary")
			l, done := benchLoop(b, turns)
			defer done()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out := l.RunTask(context.Background(), Task{ID: fmt.Sprint("t", i), Text: "Read every file and summarise it."})
				if out.Status != ExitOK || out.Turns != turns {
					b.Fatalf("%+v", out)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns)/1e6, "ms/turn")
		})
	}
}

// BenchmarkIdleSessionMemory reports the heap one idle session object
// holds (its loop, inventory, prompt, trace writer and event stream),
// measured across 1000 of them so per-object noise averages out.
func BenchmarkIdleSessionMemory(b *testing.B) {
	tokens.Count("warm")
	const n = 1000
	for i := 0; i < b.N; i++ {
		keep := make([]*Loop, 0, n)
		closers := make([]func(), 0, n)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for j := 0; j < n; j++ {
			l, c := benchLoop(b, 2)
			if err := l.prepare(); err != nil {
				b.Fatal(err)
			}
			keep = append(keep, l)
			closers = append(closers, c)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/session")
		runtime.KeepAlive(keep)
		for _, c := range closers {
			c()
		}
	}
}

// BenchmarkTokenizerResident reports the heap the shared BPE vocabulary
// adds once per process.
func BenchmarkTokenizerResident(b *testing.B) {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	tokens.Count("load")
	var m2 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m2)
	b.ReportMetric(float64(int64(m2.HeapAlloc)-int64(m.HeapAlloc))/(1<<20), "MiB")
}
