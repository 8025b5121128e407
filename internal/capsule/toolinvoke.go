package capsule

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/agent/wasmtool"
	"github.com/murmur/mur/internal/component"
)

// toolInvoker serves murmur:tool-registry/invoke to tool components: the
// named tool of the capsule runs through the task's one dispatch path
// (agent.Invoke), under that tool's own grants, and its tool_call record
// names the tool that asked.
type toolInvoker struct{}

func (toolInvoker) Invoke(ctx context.Context, name string, in component.ToolInput) (component.ToolResult, error) {
	var input json.RawMessage
	if in.Data != nil {
		input = json.RawMessage(*in.Data)
	}
	if len(input) > 0 && !json.Valid(input) {
		return component.ToolResult{}, errInvokeInput
	}
	r, err := agent.Invoke(ctx, name, input)
	if err != nil {
		return component.ToolResult{}, err
	}
	return wasmtool.ToolResult(r), nil
}

// errInvokeInput refuses an invoke whose tool-input.data is not JSON: a
// tool's input is the JSON the model would have written.
var errInvokeInput = errors.New("tool-registry/invoke: tool-input.data is not JSON; pass the callee's input as a JSON object")
