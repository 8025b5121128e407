package infer

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp"
	"github.com/murmur/mur/sdk/go/wasihttp/nethttp"
)

// rt is an http.RoundTripper from a function: the unit tests answer
// requests in-process and keep what was sent.
type rt func(*http.Request) (*http.Response, error)

func (f rt) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func answer(status int, ctype, body string, header ...string) rt {
	return func(r *http.Request) (*http.Response, error) {
		h := http.Header{"Content-Type": {ctype}}
		for i := 0; i+1 < len(header); i += 2 {
			h.Set(header[i], header[i+1])
		}
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
}

func meta(r tool.Result, k string) string {
	for _, kv := range r.Metadata {
		if kv[0] == k {
			return kv[1]
		}
	}
	return ""
}

func summary(r tool.Result) string {
	if r.Summary == nil {
		return ""
	}
	return *r.Summary
}

func input(v any) tool.Input {
	b, _ := json.Marshal(v)
	s := string(b)
	return tool.Input{Data: &s}
}

func req(extra map[string]any) map[string]any {
	r := map[string]any{
		"format": Format, "model": "m-1", "system": "sys",
		"messages":   []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}},
		"tools":      []any{},
		"max_tokens": 100,
	}
	for k, v := range extra {
		r[k] = v
	}
	return r
}

// capture serves one request with f and returns the decoded body sent.
func capture(t *testing.T, p Provider, env Env, in map[string]any, reply rt) (tool.Result, map[string]any, http.Header) {
	t.Helper()
	var sent map[string]any
	var hdr http.Header
	env.Send = nethttp.FromClient(&http.Client{Transport: rt(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &sent); err != nil {
			t.Fatalf("request body %s: %v", b, err)
		}
		hdr = r.Header
		return reply(r)
	})})
	if env.Endpoint == "" {
		env.Endpoint = "http://127.0.0.1:9"
	}
	res := Serve(context.Background(), p, &Conversations{}, env, input(in))
	return res, sent, hdr
}

func TestAnthropicRequestShape(t *testing.T) {
	in := req(map[string]any{
		"config": map[string]any{"temperature": 0.5, "top_p": 0.9, "stop_sequences": []string{"END"}, "unknown_key": 1},
		"tools": []any{
			map[string]any{"name": "computer", "description": "d", "input_schema": map[string]any{"type": "object"},
				"provider_tool": map[string]any{"kind": "computer", "display_width": 1024, "display_height": 768}},
			map[string]any{"name": "read", "description": "r", "input_schema": map[string]any{"type": "object"}},
		},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": ""}, map[string]any{"type": "text", "text": "go"}}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "read"}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "text": "boom", "is_error": true}}},
		},
	})
	env := Env{ArtifactConfig: `{"prompt_cache":"enabled","prompt_cache_ttl":"1h"}`}
	res, body, hdr := capture(t, Anthropic{}, env, in, answer(200, "application/json", `{"type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`))
	if res.Status != tool.StatusPassed {
		t.Fatalf("%s %q", res.Status, summary(res))
	}
	if hdr.Get("anthropic-beta") != computerBeta || hdr.Get("anthropic-version") != AnthropicVersion {
		t.Fatalf("headers %v", hdr)
	}
	b, _ := json.Marshal(body)
	for _, want := range []string{
		`"type":"computer_20250124"`, `"display_width_px":1024`,
		`"system":[{"cache_control":{"ttl":"1h","type":"ephemeral"},"text":"sys","type":"text"}]`,
		`"temperature":0.5`, `"top_p":0.9`, `"stop_sequences":["END"]`,
		`"input":{}`, `"is_error":true`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("body lacks %s: %s", want, b)
		}
	}
	msgs := body["messages"].([]any)
	first := msgs[0].(map[string]any)["content"].([]any)
	if len(first) != 1 {
		t.Errorf("an empty text block was sent: %v", first)
	}
	last := msgs[2].(map[string]any)["content"].([]any)
	if _, ok := last[0].(map[string]any)["cache_control"]; !ok {
		t.Errorf("the last block carries no cache breakpoint: %v", last)
	}
	tools := body["tools"].([]any)
	if _, ok := tools[1].(map[string]any)["cache_control"]; !ok {
		t.Errorf("the last tool carries no cache breakpoint: %v", tools)
	}
}

func TestAnthropicArtifactConfigRefused(t *testing.T) {
	for _, ac := range []string{`{"prompt_cache":"yes"}`, `{"prompt_cache_ttl":"2h"}`, `not json`} {
		res := Serve(context.Background(), Anthropic{}, &Conversations{}, Env{Endpoint: "http://127.0.0.1:9", ArtifactConfig: ac,
			Send: nethttp.FromClient(&http.Client{Transport: rt(func(*http.Request) (*http.Response, error) { t.Fatal("sent"); return nil, nil })})}, input(req(nil)))
		if res.Status != tool.StatusFailed || !strings.Contains(summary(res), "MURMUR_ARTIFACT_CONFIG") || meta(res, MetaTransient) != "false" {
			t.Errorf("%s: %s %q", ac, res.Status, summary(res))
		}
	}
}

func TestOpenAIRequestShape(t *testing.T) {
	in := req(map[string]any{
		"config": map[string]any{"max_tokens_field": "max_tokens", "stop_sequences": []string{"END"}},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "read", "input": map[string]any{"p": "x"}}}},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "t1", "text": "", "is_error": true},
				map[string]any{"type": "text", "text": "and then?"}}},
		},
	})
	_, body, hdr := capture(t, OpenAI{}, Env{}, in, answer(200, "application/json", `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}]}`))
	if hdr.Get("Authorization") != "" {
		t.Fatalf("the driver set a credential: %v", hdr)
	}
	if body["max_tokens"] != float64(100) || body["max_completion_tokens"] != nil {
		t.Fatalf("cap field: %v", body)
	}
	msgs := body["messages"].([]any)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	// The tool message follows the assistant's call, before the user's text.
	if !reflect.DeepEqual(roles, []string{"system", "user", "assistant", "tool", "user"}) {
		t.Fatalf("roles %v", roles)
	}
	if msgs[2].(map[string]any)["content"] != nil || msgs[3].(map[string]any)["content"] != "error" {
		t.Fatalf("messages %v", msgs)
	}
	res, _, _ := capture(t, OpenAI{}, Env{}, req(map[string]any{"config": map[string]any{"max_tokens_field": "tokens"}}), answer(200, "application/json", `{}`))
	if res.Status != tool.StatusFailed {
		// capture fails the test itself if a request is sent without a body
		t.Fatalf("a bad max_tokens_field passed")
	}
}

func TestStopReasons(t *testing.T) {
	for in, want := range map[string]string{"end_turn": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens", "stop_sequence": "stop_sequence",
		"refusal": "refusal", "pause_turn": "end_turn", "model_context_window_exceeded": "max_tokens", "weird": ""} {
		got, err := anthropicStop(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("anthropic %q = %q, %v", in, got, err)
		}
	}
	for _, c := range []struct {
		in    string
		calls int
		want  string
	}{{"stop", 0, "end_turn"}, {"stop", 1, "tool_use"}, {"", 0, "end_turn"}, {"length", 0, "max_tokens"}, {"tool_calls", 1, "tool_use"},
		{"function_call", 1, "tool_use"}, {"content_filter", 0, "refusal"}, {"odd", 0, ""}} {
		got, err := openAIStop(c.in, c.calls)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("openai %q/%d = %q, %v", c.in, c.calls, got, err)
		}
	}
}

func TestFailures(t *testing.T) {
	cases := []struct {
		name      string
		p         Provider
		reply     rt
		summary   string
		meta      map[string]string
		noMetaKey string
	}{
		{"anthropic overloaded in stream", Anthropic{}, answer(200, "text/event-stream",
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"),
			"overloaded_error: Overloaded", map[string]string{MetaTransient: "true"}, MetaHTTPStatus},
		{"anthropic invalid request in stream", Anthropic{}, answer(200, "text/event-stream",
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n"),
			"invalid_request_error: bad", map[string]string{MetaTransient: "false"}, ""},
		{"anthropic truncated stream", Anthropic{}, answer(200, "text/event-stream", "event: message_start\ndata: {\"type\":\"message_start\"}\n\n"),
			"broke", map[string]string{MetaTransient: "true"}, MetaFailure},
		{"openai error chunk", OpenAI{}, answer(200, "text/event-stream", "data: {\"error\":{\"message\":\"model crashed\"}}\n\n"),
			"model crashed", map[string]string{MetaTransient: "true"}, ""},
		{"openai bad arguments", OpenAI{}, answer(200, "application/json", `{"choices":[{"message":{"tool_calls":[{"id":"x","function":{"name":"f","arguments":"{oops"}}]},"finish_reason":"tool_calls"}]}`),
			"not JSON", map[string]string{MetaTransient: "false"}, ""},
		{"500 text body", OpenAI{}, answer(500, "text/plain", "upstream exploded"), "upstream exploded",
			map[string]string{MetaHTTPStatus: "500", MetaTransient: "true"}, MetaFailure},
		{"501 not transient", OpenAI{}, answer(501, "application/json", ""), "provider answered Not Implemented",
			map[string]string{MetaHTTPStatus: "501", MetaTransient: "false"}, ""},
		{"ollama string error", OpenAI{}, answer(404, "application/json", `{"error":"model 'x' not found"}`), "model 'x' not found",
			map[string]string{MetaHTTPStatus: "404", MetaTransient: "false"}, ""},
		{"408", Anthropic{}, answer(408, "application/json", `{"error":{"message":"timeout"}}`, "retry-after", "2"), "timeout",
			map[string]string{MetaHTTPStatus: "408", MetaTransient: "true", MetaRetryAfter: "2"}, MetaRetryAfterMs},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, _, _ := capture(t, c.p, Env{}, req(nil), c.reply)
			if res.Status != tool.StatusFailed || !strings.Contains(summary(res), c.summary) {
				t.Fatalf("%s %q", res.Status, summary(res))
			}
			for k, v := range c.meta {
				if got := meta(res, k); got != v {
					t.Errorf("%s = %q, want %q (%v)", k, got, v, res.Metadata)
				}
			}
			if c.noMetaKey != "" && meta(res, c.noMetaKey) != "" {
				t.Errorf("%s set: %v", c.noMetaKey, res.Metadata)
			}
		})
	}
}

func TestConnFailure(t *testing.T) {
	for msg, want := range map[string]string{
		"wasi:http request failed: send: connection-refused":    FailureConnection,
		"wasi:http request failed: send: DNS-error":             FailureConnection,
		"wasi:http request failed: send: HTTP-request-denied":   FailureConnection,
		"wasi:http request failed: read: connection-terminated": FailureConnectionBroken,
		"wasi:http request failed: HTTP-response-incomplete":    FailureConnectionBroken,
		"dial tcp 127.0.0.1:1: connect: connection refused":     FailureConnection,
		"read: connection reset by peer":                        FailureConnectionBroken,
	} {
		if got := meta(connFailure("d", errors.New(msg)), MetaFailure); got != want {
			t.Errorf("%q: %s, want %s", msg, got, want)
		}
	}
}

func TestServeRefusals(t *testing.T) {
	never := nethttp.FromClient(&http.Client{Transport: rt(func(*http.Request) (*http.Response, error) { t.Fatal("sent"); return nil, nil })})
	for name, c := range map[string]struct {
		env  Env
		data string
		want string
	}{
		"not json":     {Env{Endpoint: "http://127.0.0.1:9"}, `{`, "not JSON"},
		"format":       {Env{Endpoint: "http://127.0.0.1:9"}, `{"format":"x"}`, `unsupported inference format "x"`},
		"config":       {Env{Endpoint: "http://127.0.0.1:9"}, `{"format":"murmur.inference/v1","config":[1]}`, "inference.driver.config"},
		"no endpoint":  {Env{}, `{"format":"murmur.inference/v1"}`, "MURMUR_INFERENCE_ENDPOINT"},
		"unknown cont": {Env{Endpoint: "http://127.0.0.1:9"}, `{"format":"murmur.inference/v1","continuation_id":"mcont_9"}`, "not held"},
		"bad block":    {Env{Endpoint: "http://127.0.0.1:9"}, `{"format":"murmur.inference/v1","messages":[{"role":"user","content":[{"type":"video"}]}]}`, `"video"`},
		"empty image":  {Env{Endpoint: "http://127.0.0.1:9"}, `{"format":"murmur.inference/v1","messages":[{"role":"user","content":[{"type":"image","media_type":"image/png"}]}]}`, "image block has no data"},
		"image type":   {Env{Endpoint: "http://127.0.0.1:9"}, `{"format":"murmur.inference/v1","messages":[{"role":"user","content":[{"type":"image","media_type":"image/svg+xml","data":"PHN2Zy8+"}]}]}`, `"image/svg+xml" is not`},
	} {
		t.Run(name, func(t *testing.T) {
			c.env.Send = never
			d := c.data
			for _, p := range []Provider{Anthropic{}, OpenAI{}} {
				res := Serve(context.Background(), p, &Conversations{}, c.env, tool.Input{Data: &d})
				if res.Status != tool.StatusFailed || !strings.Contains(summary(res), c.want) || meta(res, MetaTransient) != "false" {
					t.Errorf("%s: %s %q %v", p.Name(), res.Status, summary(res), res.Metadata)
				}
			}
		})
	}
}

func TestServeWithoutSend(t *testing.T) {
	res := Serve(context.Background(), OpenAI{}, &Conversations{}, Env{Endpoint: "http://127.0.0.1:9"}, input(req(nil)))
	if res.Status != tool.StatusFailed || !strings.Contains(summary(res), "Env.Send is nil") || meta(res, MetaTransient) != "false" {
		t.Fatalf("%s %q %v", res.Status, summary(res), res.Metadata)
	}
}

func TestEnvFrom(t *testing.T) {
	env := map[string]string{"MURMUR_GATEWAY_ENDPOINT": "http://127.0.0.1:9/v1/", "MURMUR_INFERENCE_MODEL": "m", "MURMUR_ARTIFACT_CONFIG": "{}"}
	e := EnvFrom(func(k string) string { return env[k] }, nil, nil)
	if e.Endpoint != "http://127.0.0.1:9/v1" || e.Model != "m" || e.ArtifactConfig != "{}" {
		t.Fatalf("%+v", e)
	}
	env["MURMUR_INFERENCE_ENDPOINT"] = "http://127.0.0.1:9/x"
	if e := EnvFrom(func(k string) string { return env[k] }, nil, nil); e.Endpoint != "http://127.0.0.1:9/x" {
		t.Fatalf("inference endpoint not preferred: %+v", e)
	}
}

func TestConversations(t *testing.T) {
	var c Conversations
	a := c.Put("ctx", []Message{{Role: "user"}})
	b := c.Put("ctx", []Message{{Role: "user"}, {Role: "assistant"}})
	other := c.Put("other", nil)
	if _, ok := c.Get(a, "ctx"); ok {
		t.Fatal("an older id of the context is still held")
	}
	if m, ok := c.Get(b, "ctx"); !ok || len(m) != 2 {
		t.Fatalf("latest id: %v %v", m, ok)
	}
	if _, ok := c.Get(b, "other"); ok {
		t.Fatal("an id crossed contexts")
	}
	if _, ok := c.Get(other, "other"); !ok {
		t.Fatal("another context's id was dropped")
	}
	for i := range maxHeld + 10 {
		c.Put(strings.Repeat("x", i+1), nil)
	}
	if len(c.held) > maxHeld || len(c.order) != len(c.held) {
		t.Fatalf("held %d, order %d", len(c.held), len(c.order))
	}
}

func TestContinuationResendsHistory(t *testing.T) {
	var sent []map[string]any
	send := nethttp.FromClient(&http.Client{Transport: rt(func(r *http.Request) (*http.Response, error) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		sent = append(sent, b)
		return answer(200, "application/json", `{"choices":[{"message":{"content":"reply"},"finish_reason":"stop"}]}`)(r)
	})})
	conv := &Conversations{}
	env := Env{Endpoint: "http://127.0.0.1:9/v1", Send: send}
	first := Serve(context.Background(), OpenAI{}, conv, env, input(req(map[string]any{"config": map[string]any{"continuation": true}})))
	id := meta(first, "continuation_id")
	if id == "" {
		t.Fatalf("no id: %v", first.Metadata)
	}
	next := req(map[string]any{"config": map[string]any{"continuation": true}, "continuation_id": id,
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "more"}}}}})
	second := Serve(context.Background(), OpenAI{}, conv, env, input(next))
	if second.Status != tool.StatusPassed {
		t.Fatalf("%q", summary(second))
	}
	msgs := sent[1]["messages"].([]any)
	if len(msgs) != 4 { // system, hi, reply, more
		t.Fatalf("resent %v", msgs)
	}
}

// A held conversation keeps a capped turn as the runtime does, its text
// without its tool calls: the call the cap cut is never answered, so the
// next request must not carry it.
func TestContinuationDropsCappedCalls(t *testing.T) {
	for _, p := range []Provider{Anthropic{}, OpenAI{}} {
		t.Run(p.Name(), func(t *testing.T) {
			var sent []string
			replies := []string{
				`{"choices":[{"message":{"content":"Writing","tool_calls":[{"id":"c1","type":"function","function":{"name":"write","arguments":"{\"path\":\"a"}}]},"finish_reason":"length"}]}`,
				`{"choices":[{"message":{"content":"done"},"finish_reason":"stop"}]}`,
			}
			if p.Name() == "driver-anthropic" {
				replies = []string{
					`{"type":"message","content":[{"type":"text","text":"Writing"},{"type":"tool_use","id":"c1","name":"write","input":{}}],"stop_reason":"max_tokens"}`,
					`{"type":"message","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn"}`,
				}
			}
			send := nethttp.FromClient(&http.Client{Transport: rt(func(r *http.Request) (*http.Response, error) {
				b, _ := io.ReadAll(r.Body)
				sent = append(sent, string(b))
				return answer(200, "application/json", replies[len(sent)-1])(r)
			})})
			conv := &Conversations{}
			env := Env{Endpoint: "http://127.0.0.1:9/v1", Send: send}
			cfg := map[string]any{"continuation": true, "stream": false}
			first := Serve(context.Background(), p, conv, env, input(req(map[string]any{"config": cfg})))
			id := meta(first, "continuation_id")
			if first.Status != tool.StatusPassed || id == "" {
				t.Fatalf("%s %q %v", first.Status, summary(first), first.Metadata)
			}
			next := req(map[string]any{"config": cfg, "continuation_id": id,
				"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "[murmur] cut off; go on"}}}}})
			if second := Serve(context.Background(), p, conv, env, input(next)); second.Status != tool.StatusPassed {
				t.Fatalf("%q", summary(second))
			}
			if !strings.Contains(sent[1], "Writing") || strings.Contains(sent[1], "c1") {
				t.Fatalf("the capped turn's call was held: %s", sent[1])
			}
		})
	}
}

// TestNewRequestFields checks the request as wasihttp.Send gets it in the
// component, where no net/http canonicalises or sizes it: the fields in
// order and a body whose length becomes content-length.
func TestNewRequestFields(t *testing.T) {
	var r Request
	if err := json.Unmarshal([]byte(*input(req(nil)).Data), &r); err != nil {
		t.Fatal(err)
	}
	r.Tools = []ToolDef{{Name: "computer", ProviderTool: json.RawMessage(`{"kind":"computer"}`)}}
	for _, c := range []struct {
		p      Provider
		stream bool
		url    string
		want   wasihttp.Header
	}{
		{Anthropic{}, true, "http://127.0.0.1:9/v1/messages", wasihttp.Header{{"content-type", "application/json"}, {"accept", "text/event-stream"},
			{"anthropic-version", AnthropicVersion}, {"anthropic-beta", computerBeta}}},
		{OpenAI{}, false, "http://127.0.0.1:9/chat/completions", wasihttp.Header{{"content-type", "application/json"}}},
	} {
		hreq, err := c.p.NewRequest(Env{Endpoint: "http://127.0.0.1:9"}, r, Config{}, c.stream)
		if err != nil {
			t.Fatal(err)
		}
		if hreq.Method != "POST" || hreq.URL != c.url || !reflect.DeepEqual(hreq.Header, c.want) {
			t.Errorf("%s: %s %s %v", c.p.Name(), hreq.Method, hreq.URL, hreq.Header)
		}
		sized, ok := hreq.Body.(interface{ Len() int })
		if !ok || sized.Len() == 0 {
			t.Errorf("%s: body %T has no length for content-length", c.p.Name(), hreq.Body)
		}
	}
}
