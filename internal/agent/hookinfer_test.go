package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
)

// recordSink keeps every record emitted.
type recordSink struct {
	mu  sync.Mutex
	evs []event.Event
}

func (s *recordSink) Emit(e event.Event) {
	s.mu.Lock()
	s.evs = append(s.evs, e)
	s.mu.Unlock()
}

func (s *recordSink) of(typ string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, e := range s.evs {
		if e.Type == typ {
			out = append(out, e.Fields)
		}
	}
	return out
}

// inferDriver answers every call with reply, or fails with status when set,
// keeping each request.
type inferDriver struct {
	mu     sync.Mutex
	reqs   []map[string]any
	reply  string
	status int
}

func (d *inferDriver) Run(_ context.Context, data []byte) (Result, error) {
	var req map[string]any
	json.Unmarshal(data, &req)
	d.mu.Lock()
	d.reqs = append(d.reqs, req)
	d.mu.Unlock()
	if d.status != 0 {
		return Result{Status: StatusFailed, Summary: "model_not_found: no such model", Metadata: [][2]string{{MetaHTTPStatus, "404"}}}, nil
	}
	b, _ := json.Marshal(Response{Text: d.reply, StopReason: StopEndTurn})
	return Result{Status: StatusPassed, Data: string(b)}, nil
}

// Infer builds the request with the loop's own builder (format, model,
// no tools, the output cap the spec sets for a hook's call), sends it
// through the driver and records one inference line with its origin; a
// model the table does not list gets the primary's cap.
func TestInferThroughTheLoopsPath(t *testing.T) {
	d := &inferDriver{reply: "a summary"}
	sink := &recordSink{}
	l := testLoop(t, 64, nil, Runtime{Driver: d, Events: sink}, nil)
	sys := "be brief"
	r, err := l.Infer(context.Background(), InferRequest{Origin: "hook:murmur/x", System: &sys,
		Messages: []TextMessage{{Role: RoleUser, Content: "summarise this"}}})
	if err != nil || r.Text != "a summary" || r.ModelUsed != "m" || r.InputTokens <= 0 || r.OutputTokens <= 0 {
		t.Fatalf("Infer = %+v, %v", r, err)
	}
	req := d.reqs[0]
	if req["format"] != Format || req["model"] != "m" || req["system"] != sys || req["max_tokens"] != float64(64) {
		t.Fatalf("request %v", req)
	}
	if tools, _ := req["tools"].([]any); tools == nil || len(tools) != 0 {
		t.Fatalf("tools %v", req["tools"])
	}
	lines := sink.of("inference")
	if len(lines) != 1 || lines[0]["origin"] != "hook:murmur/x" || lines[0]["model"] != "m" || lines[0]["turn"] != nil || lines[0]["charged"] == nil {
		t.Fatalf("inference lines %v", lines)
	}
	other := "m2"
	if _, err := l.Infer(context.Background(), InferRequest{Origin: "tool:t", Model: &other, Messages: []TextMessage{{Role: RoleUser, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if req := d.reqs[1]; req["model"] != "m2" || req["max_tokens"] != float64(64) {
		t.Fatalf("override request %v", req)
	}
	if _, err := l.Infer(context.Background(), InferRequest{Messages: []TextMessage{{Role: "system", Content: "x"}}}); err == nil || len(d.reqs) != 2 {
		t.Fatalf("a system-role message: %v, %d requests", err, len(d.reqs))
	}
}

// A model the provider rejects is the call's err: nothing else is tried.
func TestInferNoFallback(t *testing.T) {
	d := &inferDriver{status: 404}
	sink := &recordSink{}
	l := testLoop(t, 64, nil, Runtime{Driver: d, Events: sink}, nil)
	other := "gone"
	_, err := l.Infer(context.Background(), InferRequest{Origin: "hook:h", Model: &other, Messages: []TextMessage{{Role: RoleUser, Content: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "model_not_found") || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("err = %v", err)
	}
	if len(d.reqs) != 1 || d.reqs[0]["model"] != "gone" {
		t.Fatalf("requests %v", d.reqs)
	}
	if l := sink.of("inference"); len(l) != 1 || l[0]["error"] == nil {
		t.Fatalf("lines %v", l)
	}
}

// A call the task's loop waits for is one of its turns: counted, and
// refused without sending once inference.max_turns are spent.
func TestInferCountsTheTasksTurns(t *testing.T) {
	d := &inferDriver{reply: "ok"}
	l := testLoop(t, 64, nil, Runtime{Driver: d, Events: &recordSink{}}, func(c *manifest.Capsule) {
		n := int64(2)
		c.Inference.MaxTurns = &n
	})
	tk := &task{id: "tsk_1", maxTurns: 2}
	ctx := context.WithValue(context.Background(), taskKey{}, tk)
	msg := []TextMessage{{Role: RoleUser, Content: "x"}}
	for i := 0; i < 2; i++ {
		if _, err := l.Infer(ctx, InferRequest{Messages: msg}); err != nil {
			t.Fatal(err)
		}
	}
	if tk.out.Turns != 2 || tk.out.InputTokens <= 0 {
		t.Fatalf("task %+v", tk.out)
	}
	if _, err := l.Infer(ctx, InferRequest{Messages: msg}); err == nil || !strings.Contains(err.Error(), "max_turns") || len(d.reqs) != 2 {
		t.Fatalf("past the cap: %v, %d requests", err, len(d.reqs))
	}
}

// Async hooks call Infer from their own goroutines: concurrent calls share
// the session ceiling, the latch and the event stream (run with -race).
func TestInferConcurrent(t *testing.T) {
	d := &inferDriver{reply: "ok"}
	l := testLoop(t, 64, nil, Runtime{Driver: d, Events: &recordSink{}}, func(c *manifest.Capsule) {
		n := int64(100000)
		c.Inference.MaxSessionTokens = &n
	})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				l.Infer(context.Background(), InferRequest{Messages: []TextMessage{{Role: RoleUser, Content: "x"}}})
				l.latched()
			}
		}()
	}
	wg.Wait()
	if len(d.reqs) != 40 {
		t.Fatalf("%d requests", len(d.reqs))
	}
}
