package door

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/murmur/mur/internal/manifest"
)

func hostPort(url string) string { return strings.TrimPrefix(url, "http://") }

// TestSendStampsOrigin: the sending runtime stamps x-murmur-task-origin:
// peer and the traceparent on the request; the receiving door that accepts
// peers runs the task with origin peer.
func TestSendStampsOrigin(t *testing.T) {
	var origin, traceparent atomic.Value
	f := open(t, queueSleep, func(c *Config) { c.PeerTasks = true })
	h := f.door.Handler()
	spy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin.Store(r.Header.Get(OriginHeader))
		traceparent.Store(r.Header.Get("traceparent"))
		h.ServeHTTP(w, r)
	}))
	defer spy.Close()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	s := &Sender{Allow: []string{hostPort(spy.URL)}, Traceparent: func(context.Context) string { return tp }}
	res, err := s.Send(context.Background(), hostPort(spy.URL), PeerMessage{MessageID: "m1", ContextID: "ctx-1", Text: "echo from a peer"})
	if err != nil {
		t.Fatal(err)
	}
	if res.TaskID == "" || res.ContextID != "ctx-1" || (res.State != "submitted" && res.State != "working" && res.State != "completed") {
		t.Fatalf("result %+v, want the peer's immediate answer", res)
	}
	if origin.Load() != "peer" || traceparent.Load() != tp {
		t.Fatalf("headers: origin %v traceparent %v", origin.Load(), traceparent.Load())
	}
	f.backend.mu.Lock()
	defer f.backend.mu.Unlock()
	found := false
	for _, r := range f.backend.records {
		found = found || strings.HasPrefix(r, string(RecordTaskReceived)+" "+res.TaskID)
	}
	if !found {
		t.Fatalf("the peer's task was not received: %v", f.backend.records)
	}
}

func TestSendRefusals(t *testing.T) {
	refusing := open(t, queueSleep, nil)
	auth, err := MintAuth(&manifest.Authentication{Scheme: "bearer"})
	if err != nil {
		t.Fatal(err)
	}
	locked := open(t, queueSleep, func(c *Config) { c.Auth = auth; c.PeerTasks = true })
	var hits atomic.Int64
	counted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer counted.Close()

	for _, tc := range []struct {
		name, url string
		allow     []string
		want      string
	}{
		{"not in network.allow", hostPort(counted.URL), []string{"example.com"}, "network policy: '" + hostPort(counted.URL) + "' not in capabilities.network.allow"},
		{"peer tasks refused", hostPort(refusing.door.URL()), []string{hostPort(refusing.door.URL())}, "peer_not_accepted"},
		{"door with authentication", hostPort(locked.door.URL()), []string{hostPort(locked.door.URL())}, "401"},
		{"not a URL", "ftp://x", []string{"x"}, "not host:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Sender{Allow: tc.allow}
			_, err := s.Send(context.Background(), tc.url, PeerMessage{Text: "echo hi"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
	if hits.Load() != 0 {
		t.Fatalf("a peer outside network.allow was contacted %d times", hits.Load())
	}
}
