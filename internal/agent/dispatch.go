package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/images"
)

// dispatch runs the tool calls of one reply, in order, through the one
// dispatch path every kind of tool shares, and appends their results as
// one user message. A non-nil Outcome ends the task.
func (l *Loop) dispatch(ctx context.Context, t *task, calls []ToolCall) (Outcome, bool) {
	msg := Message{Role: RoleUser}
	// The images come after every tool_result: a provider reads a turn's
	// results first (Anthropic refuses a user message that starts
	// otherwise), and each image names its call.
	var imgs []Block
	turn := images.NewTurn(l.plan.imageLimits())
	for _, c := range calls {
		res := l.run(ctx, t, c, nil)
		text := resultText(res)
		blocks, refused := toolImages(turn, c.ID, res.Images)
		imgs = append(imgs, blocks...)
		msg.Content = append(msg.Content, Block{Type: BlockToolResult, ToolUseID: c.ID, Text: text + refused, IsError: res.Status != StatusPassed})
	}
	msg.Content = append(msg.Content, imgs...)
	t.conv.add(msg, l.recorder)
	if ctx.Err() != nil {
		t.out.Phase = "tool"
	}
	if o := l.ctxOutcome(ctx, t); o != nil {
		return *o, true
	}
	return Outcome{}, false
}

// run is the one dispatch path: lookup, the input pre-check, the call and
// its tool_call record, for the model's calls and a guest's invoke alike.
// A call a tool makes through murmur:tool-registry/invoke has its caller
// chain (outermost first) and is recorded with the tool that made it.
func (l *Loop) run(ctx context.Context, t *task, c ToolCall, chain []string) Result {
	line := map[string]any{"task_id": t.id, "turn": t.out.Turns, "tool": c.Name, "call_id": c.ID}
	if len(chain) > 0 {
		line["caller"] = chain[len(chain)-1]
	}
	tool, ok := l.plan.Tools.lookup(c.Name)
	if !ok {
		text := fmt.Sprintf("%s: no such tool. This call did not run. The tools you can call are the ones in your tool list.", c.Name)
		line["status"], line["error"], line["duration_ms"] = string(StatusError), "unknown tool", int64(0)
		l.emit("tool_call", line)
		return Result{Status: StatusError, Summary: text}
	}
	def := tool.Def()
	if missing := MissingRequired(def.InputSchema, c.Input); len(missing) > 0 {
		text := RefusalText(c.Name, requiredOf(def.InputSchema), missing)
		refused := map[string]any{"task_id": t.id, "turn": t.out.Turns, "tool": c.Name, "call_id": c.ID, "missing": missing}
		if len(chain) > 0 {
			refused["caller"] = chain[len(chain)-1]
		}
		l.emit("tool_input_refused", refused)
		line["status"], line["error"], line["duration_ms"] = string(StatusError), "missing required input", int64(0)
		l.emit("tool_call", line)
		return Result{Status: StatusError, Summary: text}
	}
	if l.rt.Events != nil {
		l.rt.Events.Emit(event.Event{Type: event.ToolStart, Live: true, Fields: map[string]any{
			"task_id": t.id, "turn": t.out.Turns, "tool": c.Name, "call_id": c.ID, "input": string(c.Input),
		}})
	}
	start := l.now()
	res, err := tool.Call(withDispatch(ctx, l, t, c, chain), c.Input)
	line["duration_ms"] = l.now().Sub(start).Milliseconds()
	if err != nil {
		res = Result{Status: StatusError, Summary: err.Error()}
	}
	if res.Status == "" {
		res.Status = StatusError
		res.Summary = "the tool returned no status"
	}
	line["status"] = string(res.Status)
	effect, _ := res.Meta(MetaStateEffect)
	if effect != "read" && effect != "mutate" {
		effect = "unknown"
	}
	line["state_effect"] = effect
	if rid, ok := res.Meta(MetaResourceID); ok && rid != "" {
		line["resource_id"] = rid
	}
	if res.Truncated {
		line["truncated"] = true
	}
	if l.recorder.Content() {
		out := resultText(res)
		if len(out) > maxToolOutputInLine {
			sha, _ := l.recorder.Hash([]byte(out))
			line["output_sha"] = sha
			out = out[:maxToolOutputInLine]
		}
		line["output"] = out
	}
	if err != nil {
		line["error"] = err.Error()
	}
	l.emit("tool_call", line)
	return res
}

// resultText is what the model reads back from a tool result.
func resultText(r Result) string {
	var b strings.Builder
	switch {
	case r.Data != "":
		b.WriteString(r.Data)
	case r.Summary != "":
		b.WriteString(r.Summary)
	case r.DataPath != "":
		b.WriteString("The output was written to " + r.DataPath + ".")
	}
	if r.Data != "" && r.Summary != "" && r.Status != StatusPassed {
		b.WriteString("\n" + r.Summary)
	}
	if r.Truncated {
		b.WriteString("\n[output truncated]")
	}
	return b.String()
}

// lookup is Lookup on a possibly empty inventory.
func (inv *Inventory) lookup(name string) (Tool, bool) {
	if inv == nil {
		return nil, false
	}
	return inv.Lookup(name)
}
