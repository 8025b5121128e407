package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// ErrNoDispatch means Invoke was called outside a tool call the loop made:
// there is no task whose dispatch path the call could go through.
var ErrNoDispatch = errors.New("no tool call of a task is in progress")

// ErrInvokeCycle means a tool asked to invoke a tool already on its call
// chain (itself included): the callee is busy serving the chain, so the
// call could only wait for itself.
var ErrInvokeCycle = errors.New("the tool is already on the call chain")

// dispatchKey carries, into a tool's call, the loop and task that made it,
// so a tool's own calls to other tools take the same dispatch path.
type dispatchKey struct{}

type dispatch struct {
	loop  *Loop
	task  *task
	call  ToolCall
	chain []string // the tools called so far, outermost first, this one last
	calls atomic.Int64
}

// next numbers the calls this tool makes, for their call ids.
func (d *dispatch) next() int64 { return d.calls.Add(1) }

func withDispatch(ctx context.Context, l *Loop, t *task, c ToolCall, chain []string) context.Context {
	return context.WithValue(ctx, dispatchKey{}, &dispatch{loop: l, task: t, call: c, chain: append(slices.Clip(chain), c.Name)})
}

// Invoke runs the tool name with input for the tool whose call ctx
// belongs to (murmur:tool-registry/invoke): through the task's dispatch
// path, with the callee's own grants, the same input check and a tool_call
// record naming the caller. The error is for a call that could not be
// made at all; a tool that ran and failed is a Result.
func Invoke(ctx context.Context, name string, input json.RawMessage) (Result, error) {
	d, _ := ctx.Value(dispatchKey{}).(*dispatch)
	if d == nil {
		return Result{}, ErrNoDispatch
	}
	if slices.Contains(d.chain, name) {
		return Result{}, fmt.Errorf("%w: %s calls %s", ErrInvokeCycle, strings.Join(d.chain, " → "), name)
	}
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	c := ToolCall{ID: fmt.Sprintf("%s.%d", d.call.ID, d.next()), Name: name, Input: input}
	return d.loop.run(ctx, d.task, c, d.chain), nil
}
