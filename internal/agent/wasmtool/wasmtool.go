// Package wasmtool adapts components exporting murmur:tool/run@0.1.0 to
// the agent loop: a tool component becomes an agent.Tool and a driver
// component an agent.Driver. It is apart from package agent so the loop
// itself builds without cgo.
package wasmtool

import (
	"context"
	"encoding/json"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
)

// Runner is a component's run export (*component.Tool implements it).
type Runner interface {
	Run(ctx context.Context, in component.ToolInput) (component.ToolResult, error)
}

// Driver serves inference through a driver component: the request JSON
// goes in tool-input.data, the response comes back as the tool-result.
type Driver struct {
	R Runner
	// LogPath is handed to the driver as tool-input.log-path when set.
	LogPath string
}

// Run implements agent.Driver.
func (d Driver) Run(ctx context.Context, data []byte) (agent.Result, error) {
	return call(ctx, d.R, string(data), d.LogPath)
}

// Tool is a tool component offered to the model under def.
type Tool struct {
	D       agent.ToolDef
	R       Runner
	LogPath string
}

// Def implements agent.Tool.
func (t Tool) Def() agent.ToolDef { return t.D }

// Call implements agent.Tool: the model's input JSON is tool-input.data.
func (t Tool) Call(ctx context.Context, input json.RawMessage) (agent.Result, error) {
	return call(ctx, t.R, string(input), t.LogPath)
}

func call(ctx context.Context, r Runner, data, logPath string) (agent.Result, error) {
	in := component.ToolInput{Data: &data}
	if logPath != "" {
		in.LogPath = &logPath
	}
	res, err := r.Run(ctx, in)
	if err != nil {
		return agent.Result{}, err
	}
	return Result(res), nil
}

// Result converts a component tool-result to the loop's Result.
func Result(r component.ToolResult) agent.Result {
	out := agent.Result{Status: agent.Status(r.Status), Truncated: r.Truncated}
	if r.Summary != nil {
		out.Summary = *r.Summary
	}
	if r.Data != nil {
		out.Data = *r.Data
	}
	if r.DataPath != nil {
		out.DataPath = *r.DataPath
	}
	for _, p := range r.Metadata {
		out.Metadata = append(out.Metadata, [2]string{p[0], p[1]})
	}
	return out
}

// ToolResult converts the loop's Result to a component tool-result (what
// murmur:tool-registry/invoke hands the calling guest).
func ToolResult(r agent.Result) component.ToolResult {
	out := component.ToolResult{Status: component.Status(r.Status), Truncated: r.Truncated, Metadata: []component.Pair{}}
	if r.Summary != "" {
		out.Summary = &r.Summary
	}
	if r.Data != "" {
		out.Data = &r.Data
	}
	if r.DataPath != "" {
		out.DataPath = &r.DataPath
	}
	for _, p := range r.Metadata {
		out.Metadata = append(out.Metadata, component.Pair{p[0], p[1]})
	}
	return out
}
