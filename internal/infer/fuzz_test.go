package infer

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp/nethttp"
)

// checkDecoded holds whatever a decoder accepted to the contract: a known
// stop reason and tool calls with JSON object inputs; a call of an answer
// cut at the cap, which may have been cut anywhere, also has its id and
// name.
func checkDecoded(t *testing.T, r Response, err error) {
	t.Helper()
	if err != nil {
		return
	}
	switch r.StopReason {
	case StopEndTurn, StopToolUse, StopMaxTokens, StopStopSequence, StopRefusal:
	default:
		t.Fatalf("stop_reason %q accepted", r.StopReason)
	}
	for _, c := range r.ToolCalls {
		if !json.Valid(c.Input) {
			t.Fatalf("tool call input %q is not JSON", c.Input)
		}
		if r.StopReason == StopMaxTokens && (c.ID == "" || c.Name == "") {
			t.Fatalf("capped answer kept a call without id or name: %+v", c)
		}
	}
}

func FuzzAnthropicStream(f *testing.F) {
	f.Add("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n" +
		"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"data: {\"type\":\"message_stop\"}\n\n")
	// A cut at the cap inside a tool_use block's input.
	f.Add("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\\\"lo\"}}\n\n" +
		"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"}}\n\n" +
		"data: {\"type\":\"message_stop\"}\n\n")
	f.Add("data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n")
	f.Add("data: {\"type\":\"message_stop\"}\n\n")
	f.Add(": ping\r\n\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		r, _, err := Anthropic{}.DecodeStream(strings.NewReader(s), func(string) {})
		checkDecoded(t, r, err)
		r, _, err = Anthropic{}.Decode([]byte(s))
		checkDecoded(t, r, err)
	})
}

func FuzzOpenAIStream(f *testing.F) {
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1,\"prompt_tokens_details\":{\"cached_tokens\":9}}}\n\n" +
		"data: [DONE]\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3}]},\"finish_reason\":\"length\"}]}\n\n")
	// A cut at the cap inside a call's arguments, streamed and whole.
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\\\"lo\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
	f.Add(`{"choices":[{"message":{"content":"x","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{\"a\":"}}]},"finish_reason":"length"}]}`)
	f.Add("data: {\"error\":{\"message\":\"x\"}}\n\n")
	f.Add(`{"choices":[{"message":{"content":"x","refusal":"no"},"finish_reason":"stop"}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		r, meta, err := OpenAI{}.DecodeStream(strings.NewReader(s), func(string) {})
		checkDecoded(t, r, err)
		for _, kv := range meta {
			if strings.HasPrefix(kv[1], "-") {
				t.Fatalf("negative count %v", meta)
			}
		}
		r, _, err = OpenAI{}.Decode([]byte(s))
		checkDecoded(t, r, err)
	})
}

// FuzzServe feeds arbitrary request data and provider answers through the
// whole call: it must always return a result, and a passed one must hold a
// response the runtime's parser accepts.
func FuzzServe(f *testing.F) {
	f.Add(`{"format":"murmur.inference/v1","model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[],"max_tokens":5}`,
		`{"type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}`, false)
	f.Add(`{"format":"murmur.inference/v1","config":{"continuation":true,"stream":false}}`,
		`{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}]}`, true)
	f.Add(`{"format":"murmur.inference/v1","continuation_id":"mcont_1"}`, `data: [DONE]`+"\n\n", true)
	f.Add(`{"format":"murmur.inference/v1","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","text":"t"},{"type":"image","tool_use_id":"c1","media_type":"image/png","data":"iVBORw0KGgo="},{"type":"image","media_type":"image/gif","data":"R0lGODlh"}]}]}`,
		`{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}]}`, true)
	f.Fuzz(func(t *testing.T, data, body string, openai bool) {
		var p Provider = Anthropic{}
		if openai {
			p = OpenAI{}
		}
		ctype := "application/json"
		if strings.HasPrefix(body, "data:") || strings.HasPrefix(body, "event:") {
			ctype = "text/event-stream"
		}
		env := Env{Endpoint: "http://127.0.0.1:9", Send: nethttp.FromClient(&http.Client{Transport: answer(200, ctype, body)})}
		res := Serve(context.Background(), p, &Conversations{}, env, tool.Input{Data: &data})
		if res.Status != tool.StatusPassed {
			return
		}
		var r Response
		if err := json.Unmarshal([]byte(*res.Data), &r); err != nil {
			t.Fatalf("passed with data %q: %v", *res.Data, err)
		}
		checkDecoded(t, r, nil)
	})
}
