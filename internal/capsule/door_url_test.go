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

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/door"

	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
)

// TestShellPolicyCapsuleURL: a session that serves a door gives its shell
// commands MURMUR_CAPSULE_URL among the identity rows (spec 004, process
// environment row 2); one without a door gives none.
func TestShellPolicyCapsuleURL(t *testing.T) {
	c := &manifest.Capsule{Name: "cap", Version: "1.0.0", Inference: &manifest.Inference{}}
	d := session.Dirs{ID: "ses_x"}
	find := func(p [][2]string) string {
		for _, kv := range p {
			if kv[0] == "MURMUR_CAPSULE_URL" {
				return kv[1]
			}
		}
		return ""
	}
	if got := find(shellPolicy(c, d, "http://127.0.0.1:4100").Identity); got != "http://127.0.0.1:4100" {
		t.Fatalf("MURMUR_CAPSULE_URL = %q", got)
	}
	if got := find(shellPolicy(c, d, "").Identity); got != "" {
		t.Fatalf("MURMUR_CAPSULE_URL = %q without a door", got)
	}
}

// TestPeerSender: a component's murmur:message/send reaches a peer door
// inside capabilities.network.allow, stamped as a peer task, and is
// refused outside it.
func TestPeerSender(t *testing.T) {
	var origin atomic.Value
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin.Store(r.Header.Get(door.OriginHeader))
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
	c := &manifest.Capsule{Capabilities: &manifest.Capabilities{Network: &manifest.NetworkCap{Allow: []string{host}}}}
	cid := "c1"
	r, err := peerSender(c).Send(context.Background(), host, component.PeerMessage{MessageID: "m", ContextID: &cid, Text: "hi"})
	if err != nil || r.TaskID != "t1" || r.State != "submitted" || origin.Load() != "peer" {
		t.Fatalf("send: %+v %v (origin %v)", r, err, origin.Load())
	}
	if _, err := peerSender(&manifest.Capsule{}).Send(context.Background(), host, component.PeerMessage{Text: "hi"}); err == nil || !strings.Contains(err.Error(), "not in capabilities.network.allow") {
		t.Fatalf("send outside network.allow: %v", err)
	}
}
