package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/trace"
)

// CauseScript is task_failed's cause for a script capsule whose run
// trapped or ran past a limit (docs/script-capsules.md).
const CauseScript = "script"

// NewScriptPlan builds the plan of a script capsule (spec 000, world
// capsule): no model and no driver, so its inference block is empty (the
// manifest engine refuses one, manifest.Capsule.Script); the tool inventory,
// the lifecycle and the capture level are the ones an agent capsule's plan
// holds, so its tools are dispatched exactly as an agent's are.
func NewScriptPlan(c *manifest.Capsule, tools []Tool) (*Plan, error) {
	if c.Inference != nil {
		return nil, errors.New("plan: a script capsule declares no inference block")
	}
	if c.Lifecycle == nil || c.Trace == nil {
		return nil, errUnresolved
	}
	capture, err := trace.ParseCapture(c.Trace.Capture)
	if err != nil {
		return nil, fmt.Errorf("plan: trace.capture: %w", err)
	}
	p := &Plan{Capsule: c.Name, Inference: &manifest.Inference{Driver: &manifest.DriverRef{}}, Lifecycle: c.Lifecycle, Capture: capture}
	if p.Tools, err = NewInventory(tools); err != nil {
		return nil, err
	}
	return p, nil
}

// ScriptRun is a script capsule's run: ctx carries the task's dispatch,
// so the component's murmur:tool-registry/invoke calls (Invoke) go through
// the loop's one dispatch path. answer is what the script wrote to its
// stdout; err is a trap, a limit or a deadline.
type ScriptRun func(ctx context.Context) (answer string, err error)

// RunScript runs one task of a script capsule named script: task_start,
// the script's run with every tool call it makes dispatched as the
// model's would be (lookup, input check, the callee's grants, limits and
// hooks, a tool_call record whose caller is script and whose call_id is
// <task id>.<n>), then task_end. A trap is a failed task (cause script);
// the session's deadline and a cancel end it as they end an agent's task.
func (l *Loop) RunScript(ctx context.Context, tk Task, script string, run ScriptRun) Outcome {
	t := &task{id: tk.ID, contextID: tk.ContextID, out: Outcome{TaskID: tk.ID}}
	start := map[string]any{"task_id": tk.ID, "context_id": tk.ContextID, "script": script}
	if tk.Origin != "" {
		start["origin"] = string(tk.Origin)
	}
	l.emit("task_start", start)
	answer, err := run(withScript(ctx, l, t, script))
	if o := l.ctxOutcome(ctx, t); o != nil {
		o.Phase = CauseScript
		return l.end(*o)
	}
	if err != nil {
		return l.end(l.fail(t, CauseScript, fmt.Sprintf("the script %s failed: %v", script, err)))
	}
	t.out.Status, t.out.Answer = ExitOK, answer
	return l.end(t.out)
}

// withScript is the dispatch a script's own calls are made under: the
// script is the caller at the head of every call chain, and its calls are
// numbered under the task's id.
func withScript(ctx context.Context, l *Loop, t *task, script string) context.Context {
	return withDispatch(ctx, l, t, ToolCall{ID: t.id, Name: script}, nil)
}
