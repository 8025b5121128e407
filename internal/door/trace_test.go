package door

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestTraceContextReachesTheBackend: the W3C traceparent and tracestate a
// caller sends with SendMessage or SendStreamingMessage reach the backend
// with the task they start (the session adopts them, so the task's spans
// join the caller's trace); a request without them brings none.
func TestTraceContextReachesTheBackend(t *testing.T) {
	f := open(t, queueSleep, nil)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traced := client(t, f.door, map[string]string{"traceparent": tp, "tracestate": "vendor=1"})
	send(t, traced, text("echo one"))
	for ev, err := range traced.SendStreamingMessage(context.Background(), text("echo two")) {
		if err != nil {
			t.Fatal(err)
		}
		if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State.Terminal() {
			break
		}
	}
	send(t, client(t, f.door, nil), text("echo three"))

	f.backend.mu.Lock()
	defer f.backend.mu.Unlock()
	if len(f.backend.tasks) != 3 {
		t.Fatalf("%d tasks ran, want 3", len(f.backend.tasks))
	}
	for i, task := range f.backend.tasks[:2] {
		if task.Traceparent != tp || task.Tracestate != "vendor=1" {
			t.Errorf("task %d: traceparent %q tracestate %q", i, task.Traceparent, task.Tracestate)
		}
	}
	if last := f.backend.tasks[2]; last.Traceparent != "" || last.Tracestate != "" {
		t.Errorf("untraced task carries %q %q", last.Traceparent, last.Tracestate)
	}
}
