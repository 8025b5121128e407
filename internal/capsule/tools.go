package capsule

import (
	"context"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/images"
	"github.com/murmur/mur/internal/mcp"
)

// ToolDefs is the session's tool list, as the model is offered it.
func (s *Session) ToolDefs() []agent.ToolDef {
	if s.plan.Tools == nil {
		return nil
	}
	return s.plan.Tools.Defs()
}

// CallTool runs one call an MCP client makes (the loopback tool server,
// mur mcp) through the loop's one dispatch path: the same input check,
// grants, sandbox, limits and tool_call record as the model's own calls.
// A call made while a task runs (a harness's, under transport: process)
// is recorded under that task. It returns
// what a model would read back and whether the call failed. Calls must
// not overlap each other (internal/mcp runs them one at a time), and the
// tool server must stop calling before Close.
func (s *Session) CallTool(ctx context.Context, c agent.ToolCall) (text string, isError bool) {
	if s.isClosed() {
		return ErrClosed.Error(), true
	}
	ctx, stop := mergeCancel(ctx, s.ctx)
	defer stop()
	var by agent.ToolCaller
	if id := s.running.Load(); id != nil {
		by.TaskID = *id
	}
	return s.loop.CallTool(ctx, by, c)
}

// CallToolImages is CallTool that also returns the images the tool
// attached to its result, for internal/mcp to serve as image items.
func (s *Session) CallToolImages(ctx context.Context, c agent.ToolCall) (text string, isError bool, imgs []images.Image) {
	if s.isClosed() {
		return ErrClosed.Error(), true, nil
	}
	ctx, stop := mergeCancel(ctx, s.ctx)
	defer stop()
	var by agent.ToolCaller
	if id := s.running.Load(); id != nil {
		by.TaskID = *id
	}
	return s.loop.CallToolImages(ctx, by, c)
}

// Capsule is the capsule's name and version, as murmur.yaml declares
// them; empty for a session opened from parts.
func (s *Session) Capsule() (name, version string) {
	if s.l == nil || s.l.c == nil {
		return "", ""
	}
	return s.l.c.Name, s.l.c.Version
}

// CallToolImages is the harness's call with its images, reported as
// harness activity like CallTool.
func (t touchingTools) CallToolImages(ctx context.Context, c agent.ToolCall) (string, bool, []images.Image) {
	t.touch()
	defer t.touch()
	return t.s.CallToolImages(ctx, c)
}

// The session and the harness's view of it both serve images as MCP
// image items.
var (
	_ mcp.ImageTools = (*Session)(nil)
	_ mcp.ImageTools = touchingTools{}
)
