package providertest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestResponsesStream reads a streamed Responses API answer the way a
// client does: typed events in sequence, a function call with its
// namespace and arguments, and response.completed with the usage.
func TestResponsesStream(t *testing.T) {
	s := Start(t, Step{Text: "hello there", Calls: []Call{{ID: "c1", Name: "sh", Namespace: "mcp__murmur", Input: `{"command":"ls"}`}},
		InputTokens: 10, CachedTokens: 2, OutputTokens: 5})
	resp, err := http.Post(s.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var types []string
	var text, args string
	var final map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		if int(ev["sequence_number"].(float64)) != len(types) {
			t.Errorf("event %d has sequence_number %v", len(types), ev["sequence_number"])
		}
		typ := ev["type"].(string)
		types = append(types, typ)
		switch typ {
		case "response.output_text.delta":
			text += ev["delta"].(string)
		case "response.function_call_arguments.delta":
			args += ev["delta"].(string)
		case "response.output_item.added":
			if it := ev["item"].(map[string]any); it["type"] == "function_call" && (it["namespace"] != "mcp__murmur" || it["name"] != "sh" || it["call_id"] != "c1") {
				t.Errorf("function call added as %v", it)
			}
		case "response.completed":
			final = ev["response"].(map[string]any)
		}
	}
	if text != "hello there" || args != `{"command":"ls"}` {
		t.Errorf("text %q args %q", text, args)
	}
	if types[0] != "response.created" || types[len(types)-1] != "response.completed" || final == nil {
		t.Fatalf("events %v", types)
	}
	u := final["usage"].(map[string]any)
	if u["input_tokens"] != 12.0 || u["output_tokens"] != 5.0 || u["input_tokens_details"].(map[string]any)["cached_tokens"] != 2.0 {
		t.Errorf("usage %v", u)
	}
	if out := final["output"].([]any); len(out) != 2 {
		t.Errorf("output %v", out)
	}
}

func TestResponsesWholeAndIncomplete(t *testing.T) {
	s := Start(t, Step{Text: "cut", Stop: "max_tokens", NoUsage: true})
	resp, err := http.Post(s.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r["status"] != "incomplete" || r["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" || r["usage"] != nil {
		t.Errorf("reply %v", r)
	}
}
