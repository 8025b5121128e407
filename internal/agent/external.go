package agent

import (
	"context"

	"github.com/murmur/mur/internal/images"
)

// ToolCaller is who makes a tool call from outside the loop's own turns:
// an MCP client of the session's tool server. TaskID and Turn are the
// task and turn the call belongs to (a harness's call during a process
// task); empty for a client no task stands behind (mur mcp).
type ToolCaller struct {
	TaskID string
	Turn   int
}

// CallTool runs one call through the one dispatch path the model's calls
// take: the lookup, the required-input check, the tool with its own grants
// and limits, and the tool_call record. It returns what a model would read
// back and whether the call failed. Calls must not overlap each other or
// a task's own tool calls; the caller serializes them.
func (l *Loop) CallTool(ctx context.Context, by ToolCaller, c ToolCall) (text string, isError bool) {
	text, isError, _ = l.CallToolImages(ctx, by, c)
	return text, isError
}

// CallToolImages is CallTool that also returns the images the tool
// attached to its result (an MCP client reads them as image items).
func (l *Loop) CallToolImages(ctx context.Context, by ToolCaller, c ToolCall) (text string, isError bool, imgs []images.Image) {
	t := &task{id: by.TaskID, out: Outcome{TaskID: by.TaskID, Turns: by.Turn}}
	res := l.run(ctx, t, c, nil)
	return resultText(res), res.Status != StatusPassed, res.Images
}
