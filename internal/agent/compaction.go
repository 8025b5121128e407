package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Compactor runs a session's on-compaction hooks (spec 004 "Context
// compaction"; spec 000 compaction-event and replace-context). The loop
// calls it when a task's conversation reaches the threshold; the session
// implements it over its hooks.
type Compactor interface {
	// Active reports whether any hook is dispatched for on-compaction:
	// without one the threshold does nothing.
	Active() bool
	// Compact dispatches on-compaction. Committed is false when no hook
	// returned a replace-context its commit_policy takes; err is a
	// blocking compaction hook's failure, which is fatal to the task.
	Compact(ctx context.Context, ev CompactionEvent) (CompactionResult, error)
}

// CompactionEvent is what the on-compaction hooks are sent.
type CompactionEvent struct {
	TaskID   string
	Messages []TextMessage
	// SessionTokens is the conversation's size the threshold was checked
	// against: the provider's count of the last call plus the runtime's
	// count of what followed it.
	SessionTokens int64
	Threshold     float64
	// Model is inference.compaction.model (nil when unset); SystemPrompt
	// is inference.compaction.system_prompt or the file's text.
	Model        *string
	SystemPrompt *string
}

// CompactionResult is a committed replace-context.
type CompactionResult struct {
	Committed bool
	Hook      string
	Messages  []TextMessage
}

// CauseCompaction is task_failed's cause when the compaction hook fails.
const CauseCompaction = "compaction"

// compactionSummaries is the file dump_summaries appends to, in the
// records directory's out/.
const compactionSummaries = "compaction-summaries.jsonl"

// compactIfDue runs compaction when t's conversation has reached the
// threshold of the primary choice's input budget: it is checked once after
// each response (the tool calls the response made are answered first, so
// a replacement never strands a tool call). A replace-context a hook
// commits becomes the whole conversation and drops the held continuation,
// so the next turn is a full resend. A failed compaction hook ends the
// task: failed, or spend_ceiling_reached when the hook's run-inference
// was refused by a spend ceiling.
func (l *Loop) compactIfDue(ctx context.Context, t *task) *Outcome {
	if !t.responded {
		return nil
	}
	t.responded = false
	c := l.rt.Compactor
	if c == nil || !c.Active() {
		return nil
	}
	choice := l.plan.primary()
	if choice.Budget <= 0 {
		// No window: compaction does not run (spec 004).
		return nil
	}
	size := l.estimate(t)
	ev := l.compactionEvent(t, size)
	if float64(size) < ev.Threshold*float64(choice.Budget) {
		return nil
	}
	threshold, cp := ev.Threshold, l.plan.Inference.Compaction
	rec := map[string]any{
		"task_id": t.id, "turn": t.out.Turns, "session_tokens": size, "threshold": threshold,
		"input_budget": choice.Budget, "messages_before": len(t.conv.msgs),
	}
	before := l.latched()
	cctx := context.WithValue(context.WithValue(ctx, taskKey{}, t), compactionKey{}, true)
	res, err := c.Compact(cctx, ev)
	if err != nil {
		rec["error"] = firstLineOf(err.Error())
		l.emit("compaction", rec)
		if ref := l.latched(); before == nil && ref != nil {
			// The hook's call was refused and the hook gave up: the task
			// ends as the refusal does, not as a failure.
			t.out.Status, t.out.Cause, t.out.Reason, t.out.Code = ExitSpendCeiling, causeSpend, ref.Error(), codeTaskFailed
			return &t.out
		}
		if o := l.ctxOutcome(ctx, t); o != nil {
			return o
		}
		o := l.fail(t, CauseCompaction, "compaction failed: "+firstLineOf(err.Error())+"; a compaction hook's failure ends the task (logs/hook-<name>.log has the whole text)")
		return &o
	}
	if !res.Committed {
		// none: the session continues and the next turn's admission
		// decides.
		rec["committed"] = false
		l.emit("compaction", rec)
		return nil
	}
	msgs := make([]Message, 0, len(res.Messages))
	for i, m := range res.Messages {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			rec["hook"], rec["error"] = res.Hook, fmt.Sprintf("replace-context message %d has role %q", i, m.Role)
			l.emit("compaction", rec)
			o := l.fail(t, CauseCompaction, fmt.Sprintf("compaction failed: hook %s returned replace-context with message %d of role %q; each message must be user or assistant", res.Hook, i, m.Role))
			return &o
		}
		msgs = append(msgs, Message{Role: m.Role, Content: []Block{{Type: BlockText, Text: m.Content}}})
	}
	if len(msgs) == 0 {
		rec["hook"], rec["error"] = res.Hook, "replace-context with no messages"
		l.emit("compaction", rec)
		o := l.fail(t, CauseCompaction, fmt.Sprintf("compaction failed: hook %s returned replace-context with no messages, which would leave the model nothing to continue from", res.Hook))
		return &o
	}
	// The replacement is the conversation from here on; the durable
	// record keeps every message as it was said.
	conv := conversation{log: t.conv.log}
	if err := conv.seed(msgs, l.recorder); err != nil {
		o := l.fail(t, CauseCompaction, err.Error())
		return &o
	}
	t.conv = conv
	t.boundary = RefreshCompacted
	// Compaction always drops a held continuation (spec 000).
	l.cont = continuation{contextID: t.contextID}
	rec["committed"], rec["hook"], rec["messages_after"] = true, res.Hook, len(msgs)
	after := l.estimate(t)
	rec["tokens_after"] = after
	l.emit("compaction", rec)
	if cp != nil && cp.DumpSummaries != nil && *cp.DumpSummaries && l.rt.OutDir != "" {
		l.dumpSummary(t, res, size, after)
	}
	return nil
}

// compactionEvent is the on-compaction event for t's conversation of size
// tokens.
func (l *Loop) compactionEvent(t *task, size int64) CompactionEvent {
	ev := CompactionEvent{TaskID: t.id, Messages: flatten(t.conv.msgs), SessionTokens: size, Threshold: 0.98}
	if cp := l.plan.Inference.Compaction; cp != nil {
		if cp.Threshold != nil {
			ev.Threshold = *cp.Threshold
		}
		if cp.Model != "" {
			m := cp.Model
			ev.Model = &m
		}
		ev.SystemPrompt = l.plan.CompactionPrompt
	}
	return ev
}

// CompactHistory runs compaction over a context's history outside any
// task (mur run --resume … --resume-mode compact): the compactor's hooks
// get the history as a compaction-event, their run-inference calls are
// compaction calls charged to the session and counted against no task,
// and a committed replace-context is returned as the new history (ok
// true). A compaction record is written with resume: true. A hook's
// failure is the error; the history is returned unchanged with ok false
// when nothing was committed.
func (l *Loop) CompactHistory(ctx context.Context, c Compactor, contextID string, history []Message) ([]Message, bool, error) {
	out, ok, err := l.compactOutside(ctx, c, "", history, map[string]any{"context_id": contextID, "resume": true})
	if ok && l.cont.contextID == contextID {
		// A continuation held for this context is void once its history
		// is replaced.
		l.cont = continuation{}
	}
	return out, ok, err
}

// compactResumed is a task's CompactHistory: the history through the
// compactor before the task's first turn. It returns the task's failed
// outcome when there is no compactor, it fails, or nothing committed.
func (l *Loop) compactResumed(ctx context.Context, t *task, history []Message) ([]Message, *Outcome) {
	c := l.rt.Compactor
	if c == nil || !c.Active() {
		o := l.fail(t, CauseCompaction, "--resume-mode compact: no hook serves on-compaction (a hook bound to it must export it); resume with --resume-mode full")
		return nil, &o
	}
	out, ok, err := l.CompactHistory(ctx, c, t.contextID, history)
	switch {
	case err != nil:
		if o := l.ctxOutcome(ctx, t); o != nil {
			return nil, o
		}
		o := l.fail(t, CauseCompaction, "--resume-mode compact: compaction failed: "+firstLineOf(err.Error()))
		return nil, &o
	case !ok:
		o := l.fail(t, CauseCompaction, "--resume-mode compact: no on-compaction hook committed a replace-context for the resumed history (commit_policy: replace-context); resume with --resume-mode full")
		return nil, &o
	}
	return out, nil
}

// SummarizeSeed hands the compactor's hooks an on-task-start seed that is
// past context.seed_budget and its overflow margin (spec 004: seed
// summarization): the same compaction-event, output cap, driver_config
// and charging as CompactHistory, before the task's loop runs. Its
// compaction record carries seed: true and the task's id. The held
// continuation stays: the seed is added after the context's history.
func (l *Loop) SummarizeSeed(ctx context.Context, c Compactor, taskID, contextID string, seed []Message) ([]Message, bool, error) {
	return l.compactOutside(ctx, c, taskID, seed, map[string]any{"task_id": taskID, "context_id": contextID, "seed": true})
}

// compactOutside dispatches on-compaction over msgs outside a task's loop
// and writes the compaction record rec starts.
func (l *Loop) compactOutside(ctx context.Context, c Compactor, taskID string, msgs []Message, rec map[string]any) ([]Message, bool, error) {
	t := &task{id: taskID}
	if err := t.conv.seed(msgs, l.recorder); err != nil {
		return msgs, false, err
	}
	size := l.estimate(t)
	ev := l.compactionEvent(t, size)
	rec["session_tokens"], rec["threshold"], rec["messages_before"] = size, ev.Threshold, len(msgs)
	res, err := c.Compact(context.WithValue(ctx, compactionKey{}, true), ev)
	if err != nil {
		rec["error"] = firstLineOf(err.Error())
		l.emit("compaction", rec)
		return msgs, false, err
	}
	if !res.Committed {
		rec["committed"] = false
		l.emit("compaction", rec)
		return msgs, false, nil
	}
	out := make([]Message, 0, len(res.Messages))
	for i, m := range res.Messages {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			err := fmt.Errorf("compaction failed: hook %s returned replace-context with message %d of role %q; each message must be user or assistant", res.Hook, i, m.Role)
			rec["hook"], rec["error"] = res.Hook, err.Error()
			l.emit("compaction", rec)
			return msgs, false, err
		}
		out = append(out, Message{Role: m.Role, Content: []Block{{Type: BlockText, Text: m.Content}}})
	}
	if len(out) == 0 {
		err := fmt.Errorf("compaction failed: hook %s returned replace-context with no messages", res.Hook)
		rec["hook"], rec["error"] = res.Hook, err.Error()
		l.emit("compaction", rec)
		return msgs, false, err
	}
	rec["committed"], rec["hook"], rec["messages_after"] = true, res.Hook, len(out)
	l.emit("compaction", rec)
	return out, true, nil
}

// dumpSummary appends one committed compaction to
// out/compaction-summaries.jsonl (inference.compaction.dump_summaries). A
// write that fails is reported in the trace; the task goes on.
func (l *Loop) dumpSummary(t *task, res CompactionResult, before, after int64) {
	var text strings.Builder
	for i, m := range res.Messages {
		if i > 0 {
			text.WriteString("\n\n")
		}
		text.WriteString(m.Content)
	}
	b, err := json.Marshal(map[string]any{
		"task_id": t.id, "turn": t.out.Turns, "hook": res.Hook, "summary": text.String(),
		"tokens_before": before, "tokens_after": after,
	})
	if err == nil {
		var f *os.File
		if f, err = os.OpenFile(filepath.Join(l.rt.OutDir, compactionSummaries), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err == nil {
			_, err = f.Write(append(b, '\n'))
			err = errors.Join(err, f.Close())
		}
	}
	if err != nil {
		l.emit("compaction_dump_failed", map[string]any{"task_id": t.id, "error": err.Error()})
	}
}

// flatten renders the conversation as role and text, what the
// compaction-event carries: a tool call and a tool result are written out
// as text in the message that holds them.
func flatten(msgs []Message) []TextMessage {
	out := make([]TextMessage, 0, len(msgs))
	for _, m := range msgs {
		var b strings.Builder
		for _, bl := range m.Content {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			switch bl.Type {
			case BlockToolUse:
				fmt.Fprintf(&b, "[tool call %s %s]", bl.Name, bl.Input)
			case BlockToolResult:
				fmt.Fprintf(&b, "[tool result]\n%s", bl.Text)
			default:
				b.WriteString(bl.Text)
			}
		}
		out = append(out, TextMessage{Role: m.Role, Content: b.String()})
	}
	return out
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
