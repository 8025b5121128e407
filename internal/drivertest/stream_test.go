package drivertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/component"
)

// gated serves a streamed answer whose first text delta is sent alone;
// the rest follows only once release is closed (or after a long wait).
func gated(t *testing.T, release <-chan struct{}, released chan<- bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(event, data string) {
			if event != "" {
				fmt.Fprintf(w, "event: %s\n", event)
			}
			fmt.Fprintf(w, "data: %s\n\n", data)
			w.(http.Flusher).Flush()
		}
		openai := strings.HasSuffix(r.URL.Path, "/chat/completions")
		delta := func(s string) {
			b, _ := json.Marshal(s)
			if openai {
				send("", fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%s}}]}`, b))
			} else {
				send("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}}`, b))
			}
		}
		if !openai {
			send("message_start", `{"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":1}}}`)
			send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		}
		delta("first ")
		select {
		case <-release:
			released <- true
		case <-time.After(20 * time.Second):
			released <- false
		}
		delta("second")
		if openai {
			send("", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
			send("", "[DONE]")
		} else {
			send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`)
			send("message_stop", `{"type":"message_stop"}`)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// The host receives the first delta while the provider is still holding
// the rest of the answer back: text is streamed as it arrives, not
// buffered until the response ends.
func TestChunksArriveBeforeTheAnswerEnds(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			release := make(chan struct{})
			released := make(chan bool, 1)
			in := start(t, w, setup{Upstream: gated(t, release, released) + w.base, Key: testKey})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			chunks := make(chan string, 16)
			in.inst.SetHost(&component.Host{Text: component.TextChan{Ctx: ctx, C: chunks}})
			data, _ := json.Marshal(request(w.model, "stream please"))
			s := string(data)
			type ran struct {
				res component.ToolResult
				err error
			}
			done := make(chan ran, 1)
			go func() {
				res, err := in.tool.Run(ctx, component.ToolInput{Data: &s})
				done <- ran{res, err}
			}()
			select {
			case c := <-chunks:
				if c != "first " {
					t.Fatalf("first chunk %q", c)
				}
			case r := <-done:
				t.Fatalf("the call ended before any chunk: %+v %v", r.res, r.err)
			case <-time.After(15 * time.Second):
				t.Fatal("no chunk while the provider held the answer back")
			}
			close(release)
			r := <-done
			if r.err != nil || r.res.Status != component.StatusPassed || !<-released {
				t.Fatalf("%+v %v", r.res, r.err)
			}
			if c := <-chunks; c != "second" {
				t.Fatalf("second chunk %q", c)
			}
			var resp response
			if err := json.Unmarshal([]byte(*r.res.Data), &resp); err != nil || resp.Text != "first second" {
				t.Fatalf("data %q: %v", *r.res.Data, err)
			}
		})
	}
}
