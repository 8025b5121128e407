package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/murmur/mur/internal/spend"
	"github.com/murmur/mur/internal/tokens"
)

// TextMessage is one message of murmur:runtime/inference's request and of
// the compaction event: a role and its text.
type TextMessage struct {
	Role    string
	Content string
}

// InferRequest is one completion a hook or a tool component asks for
// through murmur:runtime/inference@0.2.0 run-inference.
type InferRequest struct {
	// Origin is recorded on the call's inference line: "hook:<name>" or
	// "tool:<name>".
	Origin   string
	Messages []TextMessage
	// System nil sends no system prompt; Model nil is inference.model.
	System *string
	Model  *string
}

// InferResponse is run-inference's inference-response: the reply's text,
// the model the host sent, and the runtime's own token counts of the
// request and the response.
type InferResponse struct {
	Text                      string
	ModelUsed                 string
	InputTokens, OutputTokens int64
}

// ErrNoInference is run-inference under a loop with no driver to serve it
// (transport: process): nothing is sent, charged or recorded.
var ErrNoInference = errors.New("run-inference: inference is not available to hooks and tools under transport: process (the harness makes its own model calls); nothing was sent")

// taskKey carries, into a hook the loop calls itself (on-compaction), the
// task it serves, so the hook's run-inference counts against it.
type taskKey struct{}

// compactionKey marks a context as serving on-compaction: its
// run-inference calls send inference.compaction.max_tokens and
// inference.compaction.driver_config.
type compactionKey struct{}

// Infer makes one completion for a hook or a tool component through the
// same path as the loop's own turns: the request is built by the same
// marshalRequest, sent through attempts (the primary's driver, retries,
// the spend ceilings and their latch), and recorded as an inference line
// carrying origin and model. It never falls back to another model: a
// model the driver or provider rejects is the call's error.
//
// A call made while a task's loop waits for it — a tool's call, or a
// blocking hook the loop's own dispatch reached (on-inference, on-tool-call,
// on-shell, on-compaction) — is one of the task's counted turns: it is
// refused once inference.max_turns are spent, and its turn and tokens are
// the task's. A call from anywhere else (an async hook, on-task-start,
// on-task-end) is charged to the session's ceilings and recorded, and
// counted against no task.
func (l *Loop) Infer(ctx context.Context, r InferRequest) (InferResponse, error) {
	if l == nil || l.rt.Driver == nil || len(l.plan.Limits) == 0 {
		return InferResponse{}, ErrNoInference
	}
	t := taskOf(ctx)
	counted := t != nil
	if t == nil {
		t = &task{}
	}
	if counted {
		if n := t.maxTurns; n > 0 && t.out.Turns >= n {
			return InferResponse{}, fmt.Errorf("run-inference: the task has spent its inference.max_turns (%d) turns; nothing was sent", n)
		}
	}
	inf := l.plan.Inference
	model := inf.Model
	if r.Model != nil && *r.Model != "" {
		model = *r.Model
	}
	compaction := ctx.Value(compactionKey{}) != nil
	maxTokens := l.hookCap(model, compaction)
	config := l.plan.DriverConfig
	if compaction && l.plan.CompactionConfig != nil {
		config = l.plan.CompactionConfig
	}
	var conv conversation
	for _, m := range r.Messages {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return InferResponse{}, fmt.Errorf("run-inference: message role %q is not user or assistant; nothing was sent", m.Role)
		}
		conv.msgs = append(conv.msgs, Message{Role: m.Role, Content: []Block{{Type: BlockText, Text: m.Content}}})
	}
	req := Request{Format: Format, Model: model, Messages: conv.msgs, MaxTokens: maxTokens, Config: config}
	if r.System != nil {
		req.System = *r.System
	}
	data, err := marshalRequest(req, json.RawMessage(`[]`))
	if err != nil {
		return InferResponse{}, err
	}
	input := conv.estimate(int64(tokens.Count(req.System)))
	inputFn := func() int64 { return input }
	choice := l.plan.primary()
	line := map[string]any{
		"origin": r.Origin, "choice": choice.Choice, "driver": choice.Driver, "model": model,
		"max_tokens": maxTokens, "messages": len(conv.msgs),
	}
	if t.id != "" {
		line["task_id"] = t.id
	}
	if counted {
		line["turn"] = t.out.Turns + 1
	}
	if compaction {
		line["compaction"] = true
	}

	res, f, spent, attempts, stopped, resErr := l.attempts(ctx, t, data, inputFn, line, maxTokens)
	line["input_tokens"] = input
	if counted {
		t.out.InputTokens += spent.in
		t.out.OutputTokens += spent.out
	}
	if attempts > 1 {
		line["attempts"] = attempts
	}
	if stopped != "" {
		line["retry_stopped"] = stopped
	}
	if resErr != nil {
		if f != nil {
			l.failureLine(line, f, spent)
		}
		var ref *spend.Refusal
		if errors.As(resErr, &ref) {
			l.latchRefusal(t.id, ref)
			return InferResponse{}, fmt.Errorf("run-inference: %s", ref.Error())
		}
		return InferResponse{}, fmt.Errorf("run-inference: %w", resErr)
	}
	if f != nil {
		l.failureLine(line, f, spent)
		if counted {
			t.out.Turns++
		}
		return InferResponse{}, fmt.Errorf("run-inference: model %s: %s", model, f.reason()+suffix(attempts, stopped))
	}
	if counted {
		t.out.Turns++
		t.out.InputTokens += res.chargedIn
		t.out.OutputTokens += res.chargedOut
	}
	line["output_tokens"] = res.outTokens
	for k, v := range res.actual {
		line[k] = v
	}
	line["charged"] = res.chargedIn + res.chargedOut + spent.total()
	line["stop_reason"] = res.resp.StopReason
	line["duration_ms"] = res.dur.Milliseconds()
	l.emit("inference", line)
	return InferResponse{Text: res.resp.Text, ModelUsed: model, InputTokens: input, OutputTokens: res.outTokens}, nil
}

// hookCap is the output cap a hook's call sends (spec 004 "Output cap
// sent"): inference.compaction.max_tokens while it serves on-compaction,
// when set; otherwise the max_output_tokens the primary driver's models:
// table declares for the model called, else the primary choice's cap.
func (l *Loop) hookCap(model string, compaction bool) int64 {
	if compaction {
		if cp := l.plan.Inference.Compaction; cp != nil && cp.MaxTokens != nil {
			return *cp.MaxTokens
		}
	}
	if ml, ok := l.plan.Models[model]; ok && ml.MaxOutputTokens > 0 {
		return ml.MaxOutputTokens
	}
	return l.plan.primary().OutputCap
}

// taskOf is the task a call made under ctx counts against: the task of
// the tool call it serves, or the one the loop handed its own hook call;
// nil for neither.
func taskOf(ctx context.Context) *task {
	if d, ok := ctx.Value(dispatchKey{}).(*dispatch); ok && d != nil {
		return d.task
	}
	if t, ok := ctx.Value(taskKey{}).(*task); ok {
		return t
	}
	return nil
}
