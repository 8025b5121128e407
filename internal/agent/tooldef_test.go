package agent

import (
	"encoding/json"
	"testing"

	"github.com/murmur/mur/internal/infer"
)

// TestToolDefWireIsContract holds the loop's ToolDef to the contract's: a
// driver decodes the tool array the loop marshals into []infer.ToolDef, so
// every field must survive the trip and Kind must not be sent.
func TestToolDefWireIsContract(t *testing.T) {
	in := ToolDef{
		Name: "read", Description: "reads", Kind: KindSkill,
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		ProviderTool: json.RawMessage(`{"type":"web_search"}`),
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out infer.ToolDef
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	back, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != string(b) {
		t.Fatalf("loop ToolDef %s, contract ToolDef %s", b, back)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	if _, ok := keys["kind"]; ok || len(keys) != 4 {
		t.Fatalf("tool entry keys %v, want name, description, input_schema, provider_tool", keys)
	}
}
