package door

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/murmur/mur/internal/manifest"
)

// Sender is the sending side of murmur:message/send: it posts a
// SendMessage to another capsule's door, stamped x-murmur-task-origin: peer
// (which the sending guest cannot set) and, when the session traces to
// OTel, a W3C traceparent. The peer's immediate answer is the result: its
// task id, context id and state (submitted, rejected, …).
type Sender struct {
	// Allow is capabilities.network.allow: a peer outside it is refused
	// before any connection is made.
	Allow []string
	// Traceparent returns the W3C traceparent of the calling span, or "".
	Traceparent func(context.Context) string
	// Client carries the request; nil is a client with a 30 s timeout.
	Client *http.Client
}

// PeerResult is the peer's immediate answer.
type PeerResult struct {
	TaskID, ContextID, State string
}

// PeerMessage is what the guest sends.
type PeerMessage struct {
	MessageID string
	ContextID string
	Text      string
}

// peerURL reads the guest's peer-url: a bare host:port ("localhost:52322")
// is http.
func peerURL(raw string) (*url.URL, error) {
	s := raw
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("peer url %q is not host:port or an http(s) URL", raw)
	}
	return u, nil
}

// allowed reports whether capabilities.network.allow reaches u.
func (s *Sender) allowed(u *url.URL) bool {
	dest, err := manifest.ParseNetEntry(u.Scheme + "://" + u.Host)
	if err != nil {
		return false
	}
	for _, a := range s.Allow {
		e, err := manifest.ParseNetEntry(a)
		if err == nil && e.Covers(dest) {
			return true
		}
	}
	return false
}

// stamp adds the headers the sending runtime owns to every request.
type stamp struct {
	base        http.RoundTripper
	traceparent string
}

func (t stamp) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(OriginHeader, string(OriginPeer))
	if t.traceparent != "" {
		r.Header.Set("traceparent", t.traceparent)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	// The door's refusals are not JSON-RPC answers: say what they are
	// rather than let the client report a decoding error.
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, &refusedError{status: resp.StatusCode, body: strings.TrimSpace(string(body))}
	}
	return resp, nil
}

type refusedError struct {
	status int
	body   string
}

func (e *refusedError) Error() string {
	if e.status == http.StatusUnauthorized {
		return "the peer's door requires a token (401): murmur:message/send presents none"
	}
	return fmt.Sprintf("the peer refused the task (%d): %s", e.status, e.body)
}

// Send posts m to the door at rawURL. The error text is what the guest
// reads.
func (s *Sender) Send(ctx context.Context, rawURL string, m PeerMessage) (PeerResult, error) {
	u, err := peerURL(rawURL)
	if err != nil {
		return PeerResult{}, err
	}
	if !s.allowed(u) {
		return PeerResult{}, fmt.Errorf("network policy: '%s' not in capabilities.network.allow", rawURL)
	}
	base := http.DefaultTransport
	timeout := 30 * time.Second
	if s.Client != nil {
		if s.Client.Transport != nil {
			base = s.Client.Transport
		}
		timeout = s.Client.Timeout
	}
	tp := ""
	if s.Traceparent != nil {
		tp = s.Traceparent(ctx)
	}
	hc := &http.Client{Transport: stamp{base: base, traceparent: tp}, Timeout: timeout}
	endpoint := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}).String()
	client, err := a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{{
		URL: endpoint, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version,
	}}, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		return PeerResult{}, fmt.Errorf("message/send to %s: %w", rawURL, err)
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(m.Text))
	if m.MessageID != "" {
		msg.ID = m.MessageID
	}
	msg.ContextID = m.ContextID
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		var refused *refusedError
		if errors.As(err, &refused) {
			return PeerResult{}, refused
		}
		return PeerResult{}, fmt.Errorf("message/send to %s: %w", rawURL, err)
	}
	switch r := res.(type) {
	case *a2a.Task:
		return PeerResult{TaskID: string(r.ID), ContextID: r.ContextID, State: shortState(r.Status.State)}, nil
	case *a2a.Message:
		return PeerResult{TaskID: string(r.TaskID), ContextID: r.ContextID, State: "completed"}, nil
	}
	return PeerResult{}, fmt.Errorf("message/send to %s: the peer answered %T", rawURL, res)
}

// shortState is the spec 000 spelling of a task state: "submitted",
// "rejected", "working", "completed", "failed", ….
func shortState(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}
