package door

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/lifecycle"
)

// FuzzRPCBody drives arbitrary bodies through the door's whole JSON-RPC
// path (the door's own checks, then the SDK) in process. Every answer must
// be a JSON-RPC envelope or an SSE stream, and the door must not panic.
func FuzzRPCBody(f *testing.F) {
	for _, seed := range []string{
		sendBody,
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":2,"pageToken":"MTA"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":""}}`,
		`{"jsonrpc":"2.0","id":null,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"a":1}}],"taskId":"t"}}}`,
		`{"jsonrpc":"2.0","id":[],"method":"SendMessage"}`,
		`[]`, `null`, `"x"`, `{`, "\xff",
	} {
		f.Add(seed)
	}
	d, err := New(Config{Name: "fuzz", Queue: lifecycle.New(lifecycle.Policy{Acceptance: lifecycle.AcceptQueue, AfterTask: lifecycle.AfterSleep, QueueDepth: 4}, false),
		Backend: instant{}, MaxBodyBytes: 8192, KeepAlive: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	d.url = "http://fuzz.invalid"
	h := d.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		if strings.Contains(body, "Streaming") || strings.Contains(body, "Subscribe") || strings.Contains(body, "murmur.") {
			// Streams stay open while their task lives; the stream path is
			// exercised by the client tests.
			return
		}
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		rec := httptest.NewRecorder()
		served := make(chan struct{})
		go func() { h.ServeHTTP(rec, req); close(served) }()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to %q in 10s", body)
		}
		var env rpcEnvelope
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
			t.Fatalf("answer to %q is not JSON: %q", body, rec.Body.String())
		}
		if env.JSONRPC != "2.0" || (env.Error == nil) == (env.Result == nil) {
			t.Fatalf("answer to %q is not a JSON-RPC response: %q", body, rec.Body.String())
		}
	})
}

// instant completes every task at once, so no fuzzed body can hold a
// blocking SendMessage open.
type instant struct{}

func (instant) RunTask(context.Context, Task, Updates) Outcome {
	return Outcome{State: Completed, Text: "done"}
}

func (instant) Record(RecordKind, Task) {}
