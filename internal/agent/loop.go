package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/images"
	"github.com/murmur/mur/internal/spend"
	"github.com/murmur/mur/internal/tokens"
	"github.com/murmur/mur/internal/trace"
)

// Exit statuses of a task and a session (task_end and session_end
// exit_status, the status mur run prints).
const (
	ExitOK              = "ok"
	ExitFailed          = "failed"
	ExitMaxTurns        = "max_turns_reached"
	ExitSpendCeiling    = "spend_ceiling_reached"
	ExitDeadline        = "deadline"
	ExitCanceled        = "canceled"
	causeOutputCap      = "output_cap"
	causeInference      = "inference"
	causeCredential     = "credential_rejected"
	causeSpend          = "spend_ceiling"
	causeDeadline       = "deadline"
	causeCanceled       = "canceled"
	causeEnded          = "session_ended"
	codeTaskFailed      = diag.RunTaskFailed
	codeCredential      = diag.RunCredentialRejected
	codeFragment        = diag.RunFragment
	emptyCappedToFail   = 2
	maxToolOutputInLine = 64 << 10
)

// Outcome is how a task ended.
type Outcome struct {
	TaskID string
	Status string
	// Answer is the last text the model gave.
	Answer string
	// Fragment marks an answer cut at the output cap.
	Fragment bool
	// Reason is the failure or refusal text (with the retry suffix).
	Reason string
	Cause  string
	Code   diag.Code
	Turns  int
	// Tokens charged across the task's calls.
	InputTokens, OutputTokens int64
	Continuations             int
	DoneCheckRuns             int
	DoneCheckReopens          int
	DoneCheckMet              *bool
	// Phase is where a canceled or deadline-ended task was: inference or
	// tool.
	Phase string
}

// Loop runs a session's tasks, one at a time, from its Plan: a capsule
// session (internal/capsule) starts it with NewLoop and calls RunTask once
// per task. It reads the plan and the Runtime it was given, never the
// session's folders, exit codes or door; what it keeps between tasks is
// the session's own state (spend ceilings and their latch, the held
// continuation, the deadline notice, the per-session request parts).
type Loop struct {
	plan     *Plan
	rt       Runtime
	prompt   Prompt
	recorder trace.Recorder
	rand     *rand.Rand
	// session is inference.max_session_tokens, nil when unset; ceilings
	// holds it and the machine meter, every ceiling in effect.
	session  *spend.SessionCeiling
	ceilings []spend.Admitter
	// deadline is the session's --deadline (zero: none); noticeAt is when
	// the agent is told, zero for no notice.
	deadline time.Time
	noticeAt time.Time

	noticeSent bool
	// latch is the session's first spend refusal: every later call and
	// task is refused without reaching the provider, whichever ceiling
	// refused first.
	latch *spend.Refusal
	// mu guards latch and rand, which an async hook's run-inference
	// (Infer) reaches from its own goroutine.
	mu          sync.Mutex
	cont        continuation
	fixedTokens int64
	fixedDone   bool
	toolsJSON   json.RawMessage
	systemSHA   string
	toolsSHA    string
	prepared    bool
	// offeredGen is the inventory generation the tool array was built
	// from; offered its tool names.
	offeredGen uint64
	offered    []string
}

// continuation is spec 000's held continuation id.
type continuation struct {
	id        string
	contextID string
	acked     int
}

func (l *Loop) now() time.Time {
	if l.rt.Now != nil {
		return l.rt.Now()
	}
	return time.Now()
}

func (l *Loop) sleep(ctx context.Context, d time.Duration) error {
	if l.rt.Sleep != nil {
		return l.rt.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (l *Loop) emit(typ string, f map[string]any) {
	if l.rt.Events != nil {
		l.rt.Events.Emit(event.Event{Type: typ, Fields: f})
	}
}

// prepare computes what every call of the session shares: the tool array
// and system prompt, their token counts and hashes.
func (l *Loop) prepare() error {
	if l.prepared {
		return nil
	}
	if l.rand == nil {
		l.rand = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x6d7572))
	}
	defs, gen := []ToolDef{}, uint64(0)
	if l.plan.Tools != nil {
		defs, gen, _ = l.plan.Tools.snapshot()
	}
	if err := l.offer(defs, gen); err != nil {
		return err
	}
	if l.prompt.Set {
		sha, err := l.recorder.Hash([]byte(l.prompt.Text))
		if err != nil {
			return err
		}
		l.systemSHA = sha
	}
	l.prepared = true
	return nil
}

// offer makes defs, of inventory generation gen, the tool array every
// call sends.
func (l *Loop) offer(defs []ToolDef, gen uint64) error {
	if defs == nil {
		defs = []ToolDef{}
	}
	b, err := json.Marshal(defs)
	if err != nil {
		return fmt.Errorf("tool array: %w", err)
	}
	sha, err := l.recorder.Hash(b)
	if err != nil {
		return err
	}
	l.toolsJSON, l.toolsSHA, l.offeredGen, l.fixedDone = b, sha, gen, false
	l.offered = l.offered[:0]
	for _, d := range defs {
		l.offered = append(l.offered, d.Name)
	}
	return nil
}

// Tool-refresh triggers: what made the next call carry a changed list.
const (
	RefreshAgent     = "agent"      // the model's own pull-artifact or remove-artifact
	RefreshImmediate = "immediate"  // inference.tool_refresh: immediate
	RefreshTaskStart = "task_start" // the first call of a task
	RefreshCompacted = "compaction" // the first call after a compaction replaced the context
)

// refreshTools rebuilds the tool array before a call when the installed
// set changed since it was built and the change is due (spec 004 Tool
// refresh): the model's own change always; any other at the boundary
// inference.tool_refresh names — the next call (immediate), or the first
// call of a task or after a compaction (compaction, the default).
// boundary is RefreshTaskStart, RefreshCompacted or "" for any other call.
func (l *Loop) refreshTools(t *task, boundary string) error {
	if l.plan.Tools == nil {
		return nil
	}
	defs, gen, agentGen := l.plan.Tools.snapshot()
	if gen == l.offeredGen {
		return nil
	}
	var trigger string
	switch {
	case agentGen > l.offeredGen:
		trigger = RefreshAgent
	case l.plan.Inference != nil && l.plan.Inference.ToolRefresh == RefreshImmediate:
		trigger = RefreshImmediate
	case boundary != "":
		trigger = boundary
	default:
		return nil
	}
	before := map[string]bool{}
	for _, n := range l.offered {
		before[n] = true
	}
	if err := l.offer(defs, gen); err != nil {
		return err
	}
	added, removed := []string{}, []string{}
	for _, n := range l.offered {
		if !before[n] {
			added = append(added, n)
		}
		delete(before, n)
	}
	for n := range before {
		removed = append(removed, n)
	}
	slices.Sort(removed)
	f := map[string]any{"task_id": t.id, "turn": t.out.Turns + 1, "trigger": trigger, "added": added, "removed": removed, "tools": len(defs)}
	if l.recorder.Hashes() {
		f["tools_sha"] = l.toolsSHA
	}
	l.emit("tools_refreshed", f)
	return nil
}

// estimate is the runtime's input_tokens for t's next request.
func (l *Loop) estimate(t *task) int64 {
	if !l.fixedDone {
		l.fixedTokens = int64(tokens.CountBytes(l.toolsJSON)) + int64(tokens.Count(l.prompt.Text))
		l.fixedDone = true
	}
	return t.conv.estimate(l.fixedTokens)
}

// task is one running task's state.
type task struct {
	id        string
	contextID string
	// maxTurns is this attempt's turn cap; 0 is none.
	maxTurns  int
	conv      conversation
	out       Outcome
	emptyCaps int
	// responded is set by each response and cleared by the compaction
	// check that follows it.
	responded bool
	// boundary is the tool-refresh boundary the next call is at
	// (RefreshTaskStart, RefreshCompacted), "" for none.
	boundary string
}

// Task is one task for the loop: its ids, where it came from, and the
// user's text.
type Task struct {
	ID        string
	ContextID string
	Origin    Origin
	Text      string
	// Images are the images the task's message carried (an A2A
	// message's image parts), sent after Text.
	Images []images.Image
	// History is what the task starts from before Text: its context's
	// earlier messages (lifecycle.conversation: threaded, mur run
	// --resume); none for a fresh conversation.
	History []Message
	// Seed is what an on-task-start hook's seed-context put before Text,
	// after History (docs/hooks.md): context for this task only, so it is
	// sent but not written to Log.
	Seed []Message
	// Log receives every message the task adds, as it is made; nil keeps
	// no record.
	Log MessageLog
	// MaxTurns, when > 0 and below inference.max_turns, is this attempt's
	// turn cap: a reopened task is handed only the turns it has left.
	MaxTurns int
	// CompactHistory is mur run --resume-mode compact: History goes
	// through the on-compaction hooks (CompactHistory) after task_start,
	// and the task starts from their replace-context; the record keeps
	// every message. No hook committing, or a hook failing, fails the
	// task as a compaction failure.
	CompactHistory bool
}

// Origin is where a task came from, recorded in task_start.
type Origin string

// Task origins (spec 004: a door task, a peer's, a background command's
// completion, and mur run's own launch task).
const (
	OriginCLI        Origin = "cli"
	OriginDoor       Origin = "door"
	OriginPeer       Origin = "peer"
	OriginCompletion Origin = "completion"
)

// RunTask runs one task to its end.
func (l *Loop) RunTask(ctx context.Context, tk Task) Outcome {
	t := &task{id: tk.ID, contextID: tk.ContextID, out: Outcome{TaskID: tk.ID}, maxTurns: l.plan.maxTurns()}
	if tk.MaxTurns > 0 && (t.maxTurns == 0 || tk.MaxTurns < t.maxTurns) {
		t.maxTurns = tk.MaxTurns
	}
	t.conv.log = tk.Log
	if err := l.prepare(); err != nil {
		return l.fail(t, causeInference, err.Error())
	}
	start := map[string]any{"task_id": tk.ID, "context_id": tk.ContextID, "max_turns": t.maxTurns}
	if tk.Origin != "" {
		start["origin"] = string(tk.Origin)
	}
	if len(tk.History) > 0 {
		start["history_messages"] = len(tk.History)
	}
	if len(tk.Seed) > 0 {
		start["seed_messages"] = len(tk.Seed)
	}
	l.emit("task_start", start)
	text, contextID := tk.Text, tk.ContextID
	if contextID != l.cont.contextID {
		// A continuation never crosses into another context.
		l.cont = continuation{}
	}
	if tk.CompactHistory {
		h, o := l.compactResumed(ctx, t, tk.History)
		if o != nil {
			return l.end(*o)
		}
		tk.History = h
	}
	if err := t.conv.seed(append(tk.History[:len(tk.History):len(tk.History)], tk.Seed...), l.recorder); err != nil {
		return l.end(l.fail(t, causeInference, err.Error()))
	}
	if err := t.conv.add(Message{Role: RoleUser, Content: taskContent(text, tk.Images)}, l.recorder); err != nil {
		return l.end(l.fail(t, causeInference, err.Error()))
	}
	return l.end(l.loop(ctx, t))
}

func (l *Loop) loop(ctx context.Context, t *task) Outcome {
	maxTurns, keep, done := t.maxTurns, l.plan.Lifecycle.KeepWorking, l.plan.Lifecycle.DoneCheck
	t.boundary = RefreshTaskStart
	for {
		if maxTurns > 0 && t.out.Turns >= maxTurns {
			t.out.Status = ExitMaxTurns
			return t.out
		}
		if o := l.compactIfDue(ctx, t); o != nil {
			return *o
		}
		if maxTurns > 0 && t.out.Turns >= maxTurns {
			// The compaction hook's run-inference spent the last turn.
			t.out.Status = ExitMaxTurns
			return t.out
		}
		l.maybeNotice(t)
		if err := l.refreshTools(t, t.boundary); err != nil {
			return l.fail(t, causeInference, err.Error())
		}
		t.boundary = ""
		resp, stop := l.turn(ctx, t)
		if stop != nil {
			return *stop
		}
		t.responded = true
		last := maxTurns > 0 && t.out.Turns >= maxTurns
		if resp.StopReason == StopMaxTokens {
			if o, done := l.capped(t, resp, last); done {
				return o
			}
			continue
		}
		t.emptyCaps = 0
		if len(resp.ToolCalls) > 0 {
			if o, done := l.dispatch(ctx, t, resp.ToolCalls); done {
				return o
			}
			if last {
				t.out.Status = ExitMaxTurns
				return t.out
			}
			continue
		}
		t.out.Answer = resp.Text
		t.out.Fragment = false
		if last {
			t.out.Status = ExitOK
			return t.out
		}
		if keep != nil && int64(t.out.Continuations) < keep.Limit {
			t.out.Continuations++
			l.emit("keep_working", map[string]any{"task_id": t.id, "continuation": t.out.Continuations, "limit": keep.Limit})
			l.user(t, keep.Message)
			continue
		}
		if done != nil {
			if l.doneCheck(ctx, t) {
				continue
			}
		}
		t.out.Status = ExitOK
		return t.out
	}
}

// capped handles a turn the provider stopped at the output cap.
func (l *Loop) capped(t *task, resp Response, last bool) (Outcome, bool) {
	empty := resp.Text == "" && len(resp.ToolCalls) == 0
	if empty {
		t.emptyCaps++
	} else {
		t.emptyCaps = 0
	}
	if t.emptyCaps >= emptyCappedToFail {
		return l.fail(t, causeOutputCap, fmt.Sprintf("two turns in a row were cut at the output cap of %d tokens with no text and no tool call; raise inference.max_tokens", l.plan.primary().OutputCap)), true
	}
	if last {
		t.out.Answer, t.out.Fragment, t.out.Status = resp.Text, true, ExitOK
		return t.out, true
	}
	if resp.Text != "" {
		t.out.Answer, t.out.Fragment = resp.Text, true
	}
	dropped := ""
	if len(resp.ToolCalls) > 0 {
		names := make([]string, len(resp.ToolCalls))
		for i, c := range resp.ToolCalls {
			names[i] = c.Name
		}
		dropped = fmt.Sprintf(" Its tool calls (%s) were not run.", strings.Join(names, ", "))
	}
	l.user(t, fmt.Sprintf("[murmur] Your last reply was cut off at the output cap of %d tokens.%s Continue from where it was cut, in smaller steps.", l.plan.primary().OutputCap, dropped))
	return Outcome{}, false
}

// user appends a runtime-authored user message.
func (l *Loop) user(t *task, text string) {
	t.conv.add(Message{Role: RoleUser, Content: []Block{{Type: BlockText, Text: text}}}, l.recorder)
}

// maybeNotice tells the agent, once, that the deadline is near.
func (l *Loop) maybeNotice(t *task) {
	if l.noticeSent || l.noticeAt.IsZero() || l.now().Before(l.noticeAt) {
		return
	}
	l.noticeSent = true
	left := l.deadline.Sub(l.now()).Round(time.Second)
	if left < 0 {
		left = 0
	}
	l.emit("deadline_notice", map[string]any{"task_id": t.id, "deadline": l.deadline.UTC().Format(time.RFC3339), "seconds_left": int64(left / time.Second)})
	l.user(t, fmt.Sprintf("[murmur] This session ends at %s, in about %s (mur run --deadline). Finish the step you are on and give your answer now; work still running then is stopped.", l.deadline.UTC().Format(time.RFC3339), left))
}

// fail ends a task failed with cause and reason.
func (l *Loop) fail(t *task, cause, reason string) Outcome {
	t.out.Status, t.out.Cause, t.out.Reason = ExitFailed, cause, reason
	if t.out.Code == "" {
		t.out.Code = codeTaskFailed
	}
	return t.out
}

// end writes task_failed (when it failed) and task_end.
func (l *Loop) end(o Outcome) Outcome {
	if o.Status == ExitFailed {
		l.emit("task_failed", map[string]any{"task_id": o.TaskID, "cause": o.Cause, "reason": o.Reason, "code": string(o.Code)})
	}
	f := map[string]any{
		"task_id": o.TaskID, "exit_status": o.Status, "turns": o.Turns,
		"input_tokens": o.InputTokens, "output_tokens": o.OutputTokens,
	}
	if o.Fragment {
		f["fragment"] = true
	}
	if o.Reason != "" {
		f["reason"] = o.Reason
	}
	if o.Phase != "" {
		f["phase"] = o.Phase
	}
	if kw := l.plan.Lifecycle.KeepWorking; kw != nil {
		f["keep_working"] = map[string]any{"continuations": o.Continuations, "limit": kw.Limit}
	}
	if l.plan.Lifecycle.DoneCheck != nil {
		dc := map[string]any{"runs": o.DoneCheckRuns, "reopens": o.DoneCheckReopens}
		if o.DoneCheckMet != nil {
			dc["met"] = *o.DoneCheckMet
		}
		f["done_check"] = dc
	}
	l.emit("task_end", f)
	return o
}

// ctxOutcome maps a cancelled context to the task's end.
func (l *Loop) ctxOutcome(ctx context.Context, t *task) *Outcome {
	if ctx.Err() == nil {
		return nil
	}
	if t.out.Phase == "" {
		t.out.Phase = "inference"
	}
	// A session ended for a reason of its own (the sandbox's workdir
	// ceiling, E-RUN-013) fails the task with that reason and code.
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		t.out.Status, t.out.Cause, t.out.Reason = ExitFailed, causeEnded, cause.Error()
		var d diag.Diagnostic
		if errors.As(cause, &d) {
			t.out.Code, t.out.Reason = d.Code, d.Msg
		}
		return &t.out
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (!l.deadline.IsZero() && !l.now().Before(l.deadline)) {
		t.out.Status, t.out.Cause = ExitDeadline, causeDeadline
		t.out.Reason = "the session reached its --deadline at " + l.deadline.UTC().Format(time.RFC3339)
	} else {
		t.out.Status, t.out.Cause, t.out.Reason = ExitCanceled, causeCanceled, "the task was canceled"
	}
	return &t.out
}
