package door

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/lifecycle"
)

// BenchmarkFirstEvent measures SendStreamingMessage → the first SSE event
// over loopback, the runtime side only: the backend answers at once. It
// reports the p50 and p90 of the iterations.
func BenchmarkFirstEvent(b *testing.B) {
	d, hc := benchDoor(b)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendStreamingMessage","params":{"message":{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"go"}]}}}`, i, i)
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, d.URL()+"/", strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				b.Fatalf("stream ended before an event: %v", err)
			}
			if strings.HasPrefix(line, "data: ") {
				break
			}
		}
		lat = append(lat, time.Since(start))
		// Drain the rest of the stream so the connection is reused.
		_, _ = io.Copy(io.Discard, br)
		resp.Body.Close()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
}

// BenchmarkSequentialTasks sends b.N tasks one after another through a
// queue + sleep door whose backend answers at once: the door's per-task
// overhead (p50) and how much live heap the tasks after the first 100
// leave behind.
func BenchmarkSequentialTasks(b *testing.B) {
	d, hc := benchDoor(b)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	lat := make([]time.Duration, 0, b.N)
	var after100 uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i == 100 {
			b.StopTimer()
			after100 = heap()
			b.StartTimer()
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"go"}]}}}`, i, i)
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, d.URL()+"/", strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(raw), "TASK_STATE_COMPLETED") {
			b.Fatalf("task %d: %s", i, raw)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	if b.N > 100 {
		grown := int64(heap()) - int64(after100)
		b.ReportMetric(float64(grown)/float64(1<<20), "heap-growth-MB")
	}
}

// benchDoor starts a queue + sleep door whose backend answers at once, and
// a client that keeps its connections; both end with the benchmark.
func benchDoor(b *testing.B) (*Door, *http.Client) {
	b.Helper()
	d, err := New(Config{Name: "bench", Queue: lifecycle.New(lifecycle.Policy{Acceptance: lifecycle.AcceptQueue, AfterTask: lifecycle.AfterSleep, QueueDepth: 1}, false),
		Backend: instant{}})
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Listen("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	d.Start()
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	b.Cleanup(func() {
		tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Stop(ctx)
		_ = d.Close(ctx)
	})
	return d, &http.Client{Transport: tr}
}
