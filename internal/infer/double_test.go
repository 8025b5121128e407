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
