package providertest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/agent"
)

// body answers every request with one event-stream body and keeps the
// last request's headers.
type body struct {
	s    string
	seen http.Header
}

func (b *body) RoundTrip(r *http.Request) (*http.Response, error) {
	b.seen = r.Header.Clone()
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(b.s)), Request: r}, nil
}

func request(t testing.TB) []byte {
	t.Helper()
	b, err := json.Marshal(agent.Request{Format: agent.Format, Model: "m",
		Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockText, Text: "hi"}}}}, MaxTokens: 10})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzStreams feeds arbitrary event streams through the double, which is
// the components' own stream readers: a passed answer must be a valid
// contract response with an input on every tool call.
func FuzzStreams(f *testing.F) {
	f.Add("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"b\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":2,\"id\":\"x\"}]}}]}\n\ndata: [DONE]\n\n")
	req := request(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, wire := range []string{Anthropic, OpenAI} {
			d := &Driver{Wire: wire, Endpoint: "http://double.invalid", Stream: true, Client: &http.Client{Transport: &body{s: s}}}
			res, err := d.Run(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != agent.StatusPassed {
				continue
			}
			var out agent.Response
			if err := json.Unmarshal([]byte(res.Data), &out); err != nil {
				t.Fatalf("passed answer %q is not JSON: %v", res.Data, err)
			}
			for _, c := range out.ToolCalls {
				if !json.Valid(c.Input) {
					t.Fatalf("tool call input %q", c.Input)
				}
			}
		}
	})
}

// A stream cut before its last event is a failure the driver marks
// transient itself, on both wires.
func TestStreamCutIsTransient(t *testing.T) {
	for wire, s := range map[string]string{
		Anthropic: "event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
		OpenAI:    "data: {\"choices\":[]}\n\n",
	} {
		d := &Driver{Wire: wire, Endpoint: "http://double.invalid", Stream: true, Client: &http.Client{Transport: &body{s: s}}}
		res, err := d.Run(context.Background(), request(t))
		if err != nil {
			t.Fatal(err)
		}
		if tr, _ := res.Meta(agent.MetaTransient); res.Status != agent.StatusFailed || tr != "true" {
			t.Fatalf("%s: a cut stream gave %s %v", wire, res.Status, res.Metadata)
		}
	}
}

// The double adds the key as the credential gateway would, in the wire's
// own header, and sends the Stream switch as the driver config's stream.
func TestGatewayKeyAndStreamSwitch(t *testing.T) {
	for _, c := range []struct{ wire, header, want string }{
		{Anthropic, "x-api-key", "sk-1"},
		{OpenAI, "Authorization", "Bearer sk-1"},
	} {
		for _, stream := range []bool{true, false} {
			srv := Start(t, Step{Text: "hello"})
			var chunks []string
			d := &Driver{Wire: c.wire, Endpoint: srv.URL, APIKey: "sk-1", Stream: stream, OnText: func(s string) { chunks = append(chunks, s) }}
			res, err := d.Run(context.Background(), request(t))
			if err != nil || res.Status != agent.StatusPassed {
				t.Fatalf("%s: %v %+v", c.wire, err, res)
			}
			got := srv.Requests()[0]
			if got.Header.Get(c.header) != c.want {
				t.Fatalf("%s: %s %q", c.wire, c.header, got.Header.Get(c.header))
			}
			if s, _ := got.Body["stream"].(bool); s != stream {
				t.Fatalf("%s: stream sent %v, want %v", c.wire, got.Body["stream"], stream)
			}
			if strings.Join(chunks, "") != "hello" {
				t.Fatalf("%s: chunks %q", c.wire, chunks)
			}
		}
	}
}
