package drivertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/providertest"
)

// double starts the scripted provider; the gateway's endpoint is its URL
// plus the wire's base path.
func double(t *testing.T, w wire, steps ...providertest.Step) (*providertest.Server, string) {
	srv := providertest.Start(t, steps...)
	return srv, srv.URL + w.base
}

func TestTextAnswerStreamsInOrder(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			text := "Hello from the provider double: a few deltas, in order, ünïcode ✓."
			srv, up := double(t, w, providertest.Step{Text: text, InputTokens: 40, OutputTokens: 12, CachedTokens: 8})
			in := start(t, w, setup{Upstream: up, Key: testKey})
			o := in.call(request(w.model, "Say hello."))
			r := o.response(t)
			if r.Text != text || r.StopReason != "end_turn" || len(r.ToolCalls) != 0 {
				t.Fatalf("response %+v", r)
			}
			// The text reached the host as several chunks, in order, before
			// the result.
			if len(o.chunks) < 3 || strings.Join(o.chunks, "") != text {
				t.Fatalf("chunks %q", o.chunks)
			}
			for k, want := range map[string]string{"input_tokens": "40", "output_tokens": "12", "cached_tokens": "8"} {
				if got := o.meta(k); got != want {
					t.Errorf("%s = %q, want %q (metadata %v)", k, got, want, o.res.Metadata)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d upstream requests", len(reqs))
			}
			got := reqs[0]
			if got.Body["stream"] != true || got.Body["model"] != w.model {
				t.Fatalf("upstream body %s", got.Raw)
			}
			switch w.name {
			case "driver-anthropic":
				if got.Path != "/v1/messages" || got.Body["system"] != "You are terse." || got.Body["max_tokens"] != float64(256) ||
					got.Header.Get("anthropic-version") == "" || got.Header.Get("x-api-key") != testKey {
					t.Fatalf("upstream request %s %v %s", got.Path, got.Header, got.Raw)
				}
				if _, ok := got.Body["tools"]; ok {
					t.Fatalf("an empty tool array was sent: %s", got.Raw)
				}
			case "driver-openai":
				msgs, _ := got.Body["messages"].([]any)
				first, _ := msgs[0].(map[string]any)
				if got.Path != "/v1/chat/completions" || len(msgs) != 2 || first["role"] != "system" || first["content"] != "You are terse." ||
					got.Body["max_completion_tokens"] != float64(256) || got.Header.Get("Authorization") != "Bearer "+testKey {
					t.Fatalf("upstream request %s %v %s", got.Path, got.Header, got.Raw)
				}
			}
		})
	}
}

func TestNoSystemPromptSendsNone(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv, up := double(t, w, providertest.Step{Text: "ok"})
			in := start(t, w, setup{Upstream: up, Key: testKey})
			req := request(w.model, "hi")
			delete(req, "system")
			in.call(req).response(t)
			raw := string(srv.Requests()[0].Raw)
			if strings.Contains(raw, `"system"`) {
				t.Fatalf("a system parameter was sent: %s", raw)
			}
		})
	}
}

var readFile = map[string]any{
	"name": "read_file", "description": "Read a file.",
	"input_schema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}},
}

func TestToolCallAndResultRoundTrip(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv, up := double(t, w,
				providertest.Step{Text: "Reading.", Calls: []providertest.Call{
					{ID: "call_1", Name: "read_file", Input: `{"path":"main.go"}`},
					{ID: "call_2", Name: "read_file", Input: `{"path":"go.mod"}`}}},
				providertest.Step{Text: "Both read."})
			in := start(t, w, setup{Upstream: up, Key: testKey})
			req := request(w.model, "Read main.go and go.mod.")
			req["tools"] = []any{readFile}
			r := in.call(req).response(t)
			if r.StopReason != "tool_use" || r.Text != "Reading." || len(r.ToolCalls) != 2 ||
				r.ToolCalls[0].ID != "call_1" || r.ToolCalls[1].Name != "read_file" || string(r.ToolCalls[1].Input) != `{"path":"go.mod"}` {
				t.Fatalf("response %+v", r)
			}
			// The next turn carries the calls and their results back.
			req["messages"] = []any{
				userText("Read main.go and go.mod."),
				map[string]any{"role": "assistant", "content": []any{
					map[string]any{"type": "text", "text": "Reading."},
					map[string]any{"type": "tool_use", "id": "call_1", "name": "read_file", "input": map[string]any{"path": "main.go"}},
					map[string]any{"type": "tool_use", "id": "call_2", "name": "read_file", "input": map[string]any{"path": "go.mod"}}}},
				map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": "call_1", "text": "package main"},
					map[string]any{"type": "tool_result", "tool_use_id": "call_2", "text": "no such file", "is_error": true}}},
			}
			if r := in.call(req).response(t); r.Text != "Both read." || r.StopReason != "end_turn" {
				t.Fatalf("second response %+v", r)
			}
			first, second := srv.Requests()[0], srv.Requests()[1]
			tools, _ := first.Body["tools"].([]any)
			if len(tools) != 1 {
				t.Fatalf("tools sent: %s", first.Raw)
			}
			tool0, _ := json.Marshal(tools[0])
			switch w.name {
			case "driver-anthropic":
				if !strings.Contains(string(tool0), `"input_schema":{"properties"`) {
					t.Fatalf("tool %s", tool0)
				}
				msgs, _ := second.Body["messages"].([]any)
				last, _ := json.Marshal(msgs[2])
				if len(msgs) != 3 || !strings.Contains(string(last), `"tool_use_id":"call_2"`) || !strings.Contains(string(last), `"is_error":true`) {
					t.Fatalf("second request %s", second.Raw)
				}
			case "driver-openai":
				if !strings.Contains(string(tool0), `"type":"function"`) || !strings.Contains(string(tool0), `"parameters":{"properties"`) {
					t.Fatalf("tool %s", tool0)
				}
				msgs, _ := second.Body["messages"].([]any)
				// system, user, assistant with two calls, two tool messages.
				if len(msgs) != 5 {
					t.Fatalf("second request %s", second.Raw)
				}
				asst, _ := json.Marshal(msgs[2])
				tm, _ := msgs[4].(map[string]any)
				if !strings.Contains(string(asst), `"arguments":"{\"path\":\"main.go\"}"`) || tm["role"] != "tool" || tm["tool_call_id"] != "call_2" {
					t.Fatalf("second request %s", second.Raw)
				}
			}
		})
	}
}

func TestStopReasonsNormalised(t *testing.T) {
	for _, w := range wires {
		for _, stop := range []string{"max_tokens", "refusal", "end_turn"} {
			t.Run(w.name+"/"+stop, func(t *testing.T) {
				_, up := double(t, w, providertest.Step{Text: "cut her", Stop: stop})
				in := start(t, w, setup{Upstream: up, Key: testKey})
				if r := in.call(request(w.model, "Write a lot.")).response(t); r.StopReason != stop || r.Text != "cut her" {
					t.Fatalf("response %+v", r)
				}
			})
		}
	}
}

func TestNonStreamingConfig(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv, up := double(t, w, providertest.Step{Text: "whole answer", InputTokens: 3, OutputTokens: 2})
			in := start(t, w, setup{Upstream: up, Key: testKey})
			req := request(w.model, "hi")
			req["config"] = map[string]any{"stream": false, "temperature": 0.25}
			o := in.call(req)
			if r := o.response(t); r.Text != "whole answer" || o.meta("output_tokens") != "2" {
				t.Fatalf("response %+v %v", r, o.res.Metadata)
			}
			if strings.Join(o.chunks, "") != "whole answer" {
				t.Fatalf("chunks %q", o.chunks)
			}
			body := srv.Requests()[0].Body
			if _, ok := body["stream"]; ok || body["temperature"] != 0.25 {
				t.Fatalf("upstream body %s", srv.Requests()[0].Raw)
			}
		})
	}
}

func TestFailuresCarryTheirClass(t *testing.T) {
	type want struct {
		status, transient, failure, retryAfter, summary string
	}
	cases := []struct {
		name string
		step providertest.Step
		want want
	}{
		{"429 rate limited", providertest.Step{Status: 429, Body: providertest.ErrorBody("slow down"), Header: map[string]string{"retry-after": "7", "retry-after-ms": "6500"}},
			want{"429", "true", "", "7", "slow down"}},
		{"529 overloaded", providertest.Step{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			want{"529", "true", "", "", "Overloaded"}},
		{"503", providertest.Step{Status: 503, Body: providertest.ErrorBody("unavailable")}, want{"503", "true", "", "", "unavailable"}},
		{"401 passes back", providertest.Step{Status: 401, Body: providertest.ErrorBody("invalid x-api-key")},
			want{"401", "false", "credential_rejected", "", "invalid x-api-key"}},
		{"400 is not transient", providertest.Step{Status: 400, Body: providertest.ErrorBody("max_tokens: too large")},
			want{"400", "false", "", "", "max_tokens: too large"}},
		{"stream broke after 200", providertest.Step{Text: "a long answer that breaks", BreakAfter: 3},
			want{"", "true", "", "", ""}},
		{"connection dropped", providertest.Step{Drop: true}, want{"", "", "connection_broken", "", ""}},
	}
	for _, w := range wires {
		for _, c := range cases {
			t.Run(w.name+"/"+c.name, func(t *testing.T) {
				_, up := double(t, w, c.step)
				in := start(t, w, setup{Upstream: up, Key: testKey})
				o := in.call(request(w.model, "hi"))
				if o.res.Status != "failed" {
					t.Fatalf("status %s, want failed (%q %v)", o.res.Status, o.summary(), o.res.Metadata)
				}
				got := want{o.meta("http_status"), o.meta("transient"), o.meta("failure"), o.meta("retry-after"), ""}
				if c.want.summary != "" {
					got.summary = o.summary()
				}
				if got != c.want {
					t.Fatalf("got %+v, want %+v (summary %q, metadata %v)", got, c.want, o.summary(), o.res.Metadata)
				}
				if c.want.retryAfter != "" && o.meta("retry-after-ms") != "6500" {
					t.Fatalf("retry-after-ms missing: %v", o.res.Metadata)
				}
			})
		}
	}
}

func TestUnreachableUpstreamNeverSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			in := start(t, w, setup{Upstream: "http://" + addr + w.base, Key: testKey})
			o := in.call(request(w.model, "hi"))
			if o.res.Status != "failed" || o.meta("failure") != "connection_failed" {
				t.Fatalf("result %s %q %v", o.res.Status, o.summary(), o.res.Metadata)
			}
		})
	}
}

func TestMalformedRequestsRefused(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv, up := double(t, w)
			in := start(t, w, setup{Upstream: up, Key: testKey})
			bad := request(w.model, "hi")
			bad["format"] = "murmur.inference/v9"
			o := in.call(bad)
			if o.res.Status != "failed" || !strings.Contains(o.summary(), "murmur.inference/v9") || o.meta("transient") != "false" {
				t.Fatalf("result %s %q %v", o.res.Status, o.summary(), o.res.Metadata)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Fatalf("%d requests sent for a refused format", n)
			}
		})
	}
}

// echo answers in either wire shape with a text that lists every request
// header the upstream received except the credential header, and the raw
// request body: whatever else the guest or the gateway put on the wire
// comes back into the guest's result.
func echo(t *testing.T, authHeader string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var b strings.Builder
		for k, v := range r.Header {
			if strings.EqualFold(k, authHeader) {
				fmt.Fprintf(&b, "%s: <%d values>\n", k, len(v))
				continue
			}
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(v, ","))
		}
		b.Write(body)
		text, _ := json.Marshal(b.String())
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}]}`, text)
			return
		}
		fmt.Fprintf(w, `{"type":"message","content":[{"type":"text","text":%s}],"stop_reason":"end_turn"}`, text)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func TestKeyNeverReachesTheGuest(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			auth := upstreamAuth(t, w.name)
			up := echo(t, auth.Header) + w.base
			in := start(t, w, setup{Upstream: up, Key: testKey})
			req := request(w.model, "Tell me your key.")
			req["config"] = map[string]any{"stream": false}
			o := in.call(req)
			r := o.response(t)
			// The echo proves the request went through: exactly one
			// credential header arrived, and the rest came back.
			if !strings.Contains(r.Text, "<1 values>") || !strings.Contains(r.Text, "Tell me your key.") {
				t.Fatalf("echo %q", r.Text)
			}
			if saw := in.guestSaw(o); strings.Contains(saw, testKey) || strings.Contains(saw, testKey[3:]) {
				t.Fatalf("the key reached the guest:\n%s", saw)
			}
		})
	}
}

func TestKeylessUpstream(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv, up := double(t, w, providertest.Step{Text: "local model"})
			in := start(t, w, setup{Upstream: up})
			if r := in.call(request(w.model, "hi")).response(t); r.Text != "local model" {
				t.Fatalf("response %+v", r)
			}
			h := srv.Requests()[0].Header
			if h.Get("x-api-key") != "" || h.Get("Authorization") != "" {
				t.Fatalf("a credential header reached a keyless upstream: %v", h)
			}
		})
	}
}

func TestContinuationOptIn(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv, up := double(t, w,
				providertest.Step{Text: "first answer"},
				providertest.Step{Text: "second answer"},
				providertest.Step{Text: "plain"})
			in := start(t, w, setup{Upstream: up, Key: testKey})
			req := request(w.model, "first question")
			req["config"] = map[string]any{"continuation": true}
			req["context_id"] = "ctx-1"
			o := in.call(req)
			o.response(t)
			id := o.meta("continuation_id")
			if id == "" {
				t.Fatalf("no continuation_id with continuation on: %v", o.res.Metadata)
			}
			// The runtime now sends only what was appended; the driver
			// resends the whole conversation upstream.
			req["messages"] = []any{userText("second question")}
			req["continuation_id"] = id
			o2 := in.call(req)
			if r := o2.response(t); r.Text != "second answer" || o2.meta("continuation_id") == "" || o2.meta("continuation_id") == id {
				t.Fatalf("second %+v %v", r, o2.res.Metadata)
			}
			raw := string(srv.Requests()[1].Raw)
			if !strings.Contains(raw, "first question") || !strings.Contains(raw, "first answer") || !strings.Contains(raw, "second question") {
				t.Fatalf("second upstream request lacks the held history: %s", raw)
			}
			// Another context never continues this one.
			req["context_id"] = "ctx-2"
			req["continuation_id"] = o2.meta("continuation_id")
			if o3 := in.call(req); o3.res.Status != "failed" || !strings.Contains(o3.summary(), "resend the full conversation") {
				t.Fatalf("cross-context continuation: %s %q", o3.res.Status, o3.summary())
			}
			// Off by default: no id.
			plain := request(w.model, "hi")
			if o4 := in.call(plain); o4.meta("continuation_id") != "" {
				t.Fatalf("continuation_id without opting in: %v", o4.res.Metadata)
			}
		})
	}
}

// A turn the provider cut at the output cap in the middle of a tool call's
// input (spec 004, When a turn hits the cap) is a capped answer, not a
// malformed one, through the built components: streamed on both wires,
// and whole on OpenAI's, whose arguments travel as a string a cut leaves
// unfinished. The call keeps its id and name with an empty input; the
// runtime drops it unrun.
func TestCutToolCallIsACappedAnswer(t *testing.T) {
	cut := []providertest.Call{{ID: "call_cut", Name: "read_file", Input: `{"path":"docs/a-very-long-na`}}
	for _, w := range wires {
		for _, stream := range []bool{true, false} {
			if !stream && w.name == "driver-anthropic" {
				// A whole Messages answer carries input parsed: no cut JSON.
				continue
			}
			t.Run(fmt.Sprintf("%s/stream=%v", w.name, stream), func(t *testing.T) {
				_, up := double(t, w, providertest.Step{Text: "Reading the", Calls: cut, Stop: "max_tokens", InputTokens: 20, OutputTokens: 256})
				in := start(t, w, setup{Upstream: up, Key: testKey})
				req := request(w.model, "Read the long file.")
				req["tools"] = []any{readFile}
				req["config"] = map[string]any{"stream": stream}
				o := in.call(req)
				r := o.response(t)
				if r.StopReason != "max_tokens" || r.Text != "Reading the" || len(r.ToolCalls) != 1 ||
					r.ToolCalls[0].ID != "call_cut" || r.ToolCalls[0].Name != "read_file" || string(r.ToolCalls[0].Input) != `{}` {
					t.Fatalf("response %+v", r)
				}
				if o.meta("output_tokens") != "256" {
					t.Fatalf("usage %v", o.res.Metadata)
				}
			})
		}
	}
}
