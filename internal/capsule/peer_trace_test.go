package capsule

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/otel"
)

// TestPeerSenderCarriesTheTaskTraceparent: a component's
// murmur:message/send, sent while a task runs in a session that exports
// spans, carries that task's W3C traceparent (its open turn), so the peer's
// task joins the sender's trace; between tasks it carries none.
func TestPeerSenderCarriesTheTaskTraceparent(t *testing.T) {
	var got atomic.Value
	got.Store("")
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("traceparent"))
		var req struct {
			ID any `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		id, _ := json.Marshal(req.ID)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}}}`, id)
	}))
	defer peer.Close()
	host := strings.TrimPrefix(peer.URL, "http://")

	x, err := otel.New(otel.Options{Exporter: tracetest.NewInMemoryExporter()})
	if err != nil {
		t.Fatal(err)
	}
	var stream event.Stream
	stream.Add(x)
	stream.Emit(event.Event{Type: "session_start", Fields: map[string]any{"session_id": "ses_peer"}})
	stream.Emit(event.Event{Type: "task_start", Fields: map[string]any{"task_id": "tsk_peer"}})
	stream.Emit(event.Event{Type: "inference", Fields: map[string]any{"task_id": "tsk_peer", "turn": 1}})

	l := &launcher{c: &manifest.Capsule{Capabilities: &manifest.Capabilities{Network: &manifest.NetworkCap{Allow: []string{host}}}}}
	l.text.bind(nil, "tsk_peer")
	send := func() string {
		t.Helper()
		if _, err := l.peerSender().Send(context.Background(), host, component.PeerMessage{MessageID: "m1", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
		return got.Load().(string)
	}
	want := otel.Traceparent("tsk_peer")
	if want == "" {
		t.Fatal("the running task has no traceparent")
	}
	if tp := send(); tp != want {
		t.Fatalf("traceparent %q, want the task's open turn %q", tp, want)
	}

	stream.Emit(event.Event{Type: "task_end", Fields: map[string]any{"task_id": "tsk_peer", "exit_status": "ok"}})
	if tp := send(); tp != "" {
		t.Fatalf("traceparent %q after the task ended, want none", tp)
	}
	stream.Emit(event.Event{Type: "session_end", Fields: map[string]any{"session_id": "ses_peer", "exit_status": "ok"}})
}
