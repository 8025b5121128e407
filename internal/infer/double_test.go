// The double's test is an external test package: providertest imports
// internal/agent, which imports this package for the contract's types.
package infer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/infer"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp/nethttp"
)

func TestServeAgainstTheDouble(t *testing.T) {
	for _, c := range []struct {
		p    infer.Provider
		base string
	}{{infer.Anthropic{}, ""}, {infer.OpenAI{}, "/v1"}} {
		for _, stream := range []bool{true, false} {
			t.Run(c.p.Name(), func(t *testing.T) {
				srv := providertest.Start(t, providertest.Step{Text: "answer text here", Calls: []providertest.Call{{ID: "c1", Name: "f", Input: `{"a":1}`}}, InputTokens: 9, OutputTokens: 4})
				var chunks []string
				env := infer.Env{Endpoint: srv.URL + c.base, Send: nethttp.FromClient(http.DefaultClient), Emit: func(s string) error { chunks = append(chunks, s); return nil }}
				b, err := json.Marshal(map[string]any{
					"format": infer.Format, "model": "m-1", "system": "sys",
					"messages":   []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}},
					"tools":      []any{},
					"max_tokens": 100,
					"config":     map[string]any{"stream": stream},
				})
				if err != nil {
					t.Fatal(err)
				}
				data := string(b)
				res := infer.Serve(context.Background(), c.p, &infer.Conversations{}, env, tool.Input{Data: &data})
				if res.Status != tool.StatusPassed {
					t.Fatalf("%s %v", res.Status, res.Metadata)
				}
				var r infer.Response
				if err := json.Unmarshal([]byte(*res.Data), &r); err != nil {
					t.Fatal(err)
				}
				if r.Text != "answer text here" || r.StopReason != infer.StopToolUse || len(r.ToolCalls) != 1 || string(r.ToolCalls[0].Input) != `{"a":1}` {
					t.Fatalf("response %+v", r)
				}
				if strings.Join(chunks, "") != "answer text here" || (stream && len(chunks) < 2) {
					t.Fatalf("chunks %q", chunks)
				}
				got := map[string]string{}
				for _, kv := range res.Metadata {
					got[kv[0]] = kv[1]
				}
				if got[infer.MetaInputTokens] != "9" || got[infer.MetaOutputTokens] != "4" {
					t.Fatalf("usage %v", res.Metadata)
				}
			})
		}
	}
}

// A turn the provider cut at the output cap inside a tool call's input is
// a capped answer, not a malformed one (spec 004, When a turn hits the
// cap): the call keeps its id and name with an empty input, since the
// runtime drops it unrun. Without the cap the same unfinished input still
// fails the call as malformed.
func TestServeCutToolCallAgainstTheDouble(t *testing.T) {
	cut := []providertest.Call{{ID: "c1", Name: "write_file", Input: `{"path":"n.md","content":"The note go`}}
	for _, c := range []struct {
		p    infer.Provider
		base string
	}{{infer.Anthropic{}, ""}, {infer.OpenAI{}, "/v1"}} {
		for _, stream := range []bool{true, false} {
			t.Run(c.p.Name()+"/stream="+map[bool]string{true: "true", false: "false"}[stream], func(t *testing.T) {
				srv := providertest.Start(t,
					providertest.Step{Text: "The note begins", Calls: cut, Stop: infer.StopMaxTokens, InputTokens: 9, OutputTokens: 64},
					providertest.Step{Text: "The note begins", Calls: cut, Stop: infer.StopToolUse, InputTokens: 9, OutputTokens: 20})
				env := infer.Env{Endpoint: srv.URL + c.base, Send: nethttp.FromClient(http.DefaultClient)}
				b, err := json.Marshal(map[string]any{
					"format": infer.Format, "model": "m-1",
					"messages":   []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Write a long note."}}}},
					"tools":      []any{},
					"max_tokens": 64,
					"config":     map[string]any{"stream": stream},
				})
				if err != nil {
					t.Fatal(err)
				}
				data := string(b)
				res := infer.Serve(context.Background(), c.p, &infer.Conversations{}, env, tool.Input{Data: &data})
				if res.Status != tool.StatusPassed {
					t.Fatalf("capped answer: %s %q %v", res.Status, *res.Summary, res.Metadata)
				}
				var r infer.Response
				if err := json.Unmarshal([]byte(*res.Data), &r); err != nil {
					t.Fatal(err)
				}
				if r.StopReason != infer.StopMaxTokens || r.Text != "The note begins" || len(r.ToolCalls) != 1 ||
					r.ToolCalls[0].ID != "c1" || r.ToolCalls[0].Name != "write_file" || string(r.ToolCalls[0].Input) != `{}` {
					t.Fatalf("capped response %+v", r)
				}
				res = infer.Serve(context.Background(), c.p, &infer.Conversations{}, env, tool.Input{Data: &data})
				if stream || c.p.Name() == "driver-openai" {
					// A whole Anthropic answer cannot carry unfinished
					// input; the stream and OpenAI's argument string can.
					if res.Status != tool.StatusFailed || !strings.Contains(*res.Summary, "not JSON") {
						t.Fatalf("uncapped unfinished input: %s %v", res.Status, res.Metadata)
					}
				}
			})
		}
	}
}
