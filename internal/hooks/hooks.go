// Package hooks runs a session's lifecycle hooks (spec 004 "Hook
// artifacts", "Hook contract fields", "Async hook execution", "Hook
// capabilities"; spec 000 murmur:hook/lifecycle@0.5.0): it dispatches each
// event to the hooks bound to it in declaration order, applies the one
// arm each handler honours where the hook's commit_policy takes it, asks
// policy hooks before the call they gate, gives every call its deadline,
// runs async hooks on their own ordered bounded queues, and reports every
// fault loudly and without ending the session: a line in the hook's log
// (logs/hook-<name>.log) and, where the spec says so, a
// hook_dispatch_error record.
//
// The session builds one Set from its hook entries and calls Dispatch and
// Gate at the points the spec names; the component that answers each call
// is a Caller (Component runs the hook's WebAssembly component under its
// own grant).
package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/event"
)

// Commit policies of the hook contract fields.
const (
	PolicyNone           = "none"
	PolicyWriteManifests = "write-manifests"
	PolicyReplaceContext = "replace-context"
	PolicyReopenTask     = "reopen-task"
	PolicySeedContext    = "seed-context"
	PolicyDeny           = "deny"
)

// DefaultDeadline is a hook lifecycle call's wall-clock budget when neither
// the hook's entry nor the capsule sets capabilities.limits.deadline_seconds.
const DefaultDeadline = 30 * time.Second

// DefaultQueue is an async hook's job queue length.
const DefaultQueue = 256

// DefaultDrain is how long the session's end waits for its async hooks'
// queues to empty before it abandons the rest.
const DefaultDrain = 10 * time.Second

// Honoured is the one hook-output arm each handler commits (spec 000,
// "Honored hook-output arm per event"); every other non-none arm is a
// fault.
var Honoured = map[string]string{
	component.OnStage:        component.OutWriteManifests,
	component.OnSessionStart: "",
	component.OnTaskStart:    "",
	component.OnInference:    component.OutArtifact,
	component.OnToolCall:     "",
	component.OnShell:        "",
	component.OnCompaction:   component.OutReplaceContext,
	component.OnTaskEnd:      component.OutReopenTask,
	component.OnSessionEnd:   "",
}

// SeedArm is the arm an on-task-start hook whose commit_policy is
// seed-context answers with its seed. murmur:hook/lifecycle@0.5.0 has no
// seed-context arm (spec 004 names the policy, spec 000's variant lacks
// it), so, as err(reason) is a 0.5.0 policy hook's deny, the list of
// messages in replace-context is a 0.5.0 seed hook's seed
// (docs/hooks.md "Seeding a task's context"). From any other hook, or any
// other handler, it is what it always was.
const SeedArm = component.OutReplaceContext

// policyArm is the arm a commit_policy lets the runtime commit. on-inference's
// artifact has no commit_policy spelling, so any hook's is committed.
var policyArm = map[string]string{
	PolicyWriteManifests: component.OutWriteManifests,
	PolicyReplaceContext: component.OutReplaceContext,
	PolicyReopenTask:     component.OutReopenTask,
}

// Spec is one hook as the session runs it: the contract fields from the
// hook artifact's own murmur.yaml and the operator's settings from the
// capsule's entry.
type Spec struct {
	// Name is the artifact name (scope/name).
	Name string
	// Entry is the capsule's artifacts[i] path, for messages that name the
	// field to change.
	Entry string
	// Binding is the one event the hook is dispatched for; "" is every
	// event.
	Binding string
	Async   bool
	Policy  string
	// Block is on_overflow: block; false drops (and counts) an event an
	// async hook's full queue cannot take.
	Block bool
	// Deadline bounds each lifecycle call; 0 is DefaultDeadline.
	Deadline time.Duration
	// DeadlineField names where the deadline was set, for the message of
	// a call that runs past it.
	DeadlineField string
	// Queue is an async hook's queue length; 0 is DefaultQueue.
	Queue int
}

// Caller answers one lifecycle call of a hook. An error that is a
// *component.HookError is the hook's own err(string); any other error is a
// fault of the call (a trap, a deadline, a limit).
type Caller interface {
	Call(ctx context.Context, handler string, event any) (component.HookOutput, error)
	// Has reports whether the hook exports handler (on-task-start and
	// on-task-end are optional).
	Has(handler string) bool
	Close() error
}

// Commit is an arm a hook returned that the runtime commits.
type Commit struct {
	Hook   string
	Output component.HookOutput
}

// Result is what one Dispatch did: the commits, in declaration order, and
// the blocking hooks' errors (surfaced to the caller, which decides
// whether one is fatal: only compaction's are).
type Result struct {
	Commits []Commit
	Errs    []error
}

// Hook is one running hook.
type Hook struct {
	Spec
	c Caller

	// async
	q       chan job
	dropped atomic.Int64
	done    chan struct{}
	stop    context.CancelFunc
	wctx    context.Context
	sendMu  sync.RWMutex // held for reading while enqueuing; Close takes it to close q
	closedQ bool
}

type job struct {
	handler string
	event   any
	at      map[string]any
}

// Set is a session's hooks, in declaration order.
type Set struct {
	hooks  []*Hook
	events event.Sink
	logs   string
	now    func() time.Time

	mu     sync.Mutex // guards ended and the log files
	ended  bool
	closed bool
}

// Options build a Set.
type Options struct {
	// Events receives the hooks' records (hook_call, hook_dispatch_error,
	// hook_denied, hook_drain).
	Events event.Sink
	// Logs is the session records directory's logs/.
	Logs string
	Now  func() time.Time
}

// New starts a Set over hooks already instantiated: an async hook's
// worker starts here.
func New(o Options, specs []Spec, callers []Caller) *Set {
	s := &Set{events: o.Events, logs: o.Logs, now: o.Now}
	if s.now == nil {
		s.now = time.Now
	}
	for i, sp := range specs {
		if sp.Policy == "" {
			sp.Policy = PolicyNone
		}
		if sp.Deadline <= 0 {
			sp.Deadline = DefaultDeadline
		}
		h := &Hook{Spec: sp, c: callers[i]}
		if sp.Async {
			n := sp.Queue
			if n <= 0 {
				n = DefaultQueue
			}
			h.q = make(chan job, n)
			h.done = make(chan struct{})
			h.wctx, h.stop = context.WithCancel(context.Background())
			go s.work(h)
		}
		s.hooks = append(s.hooks, h)
	}
	return s
}

// Len is the number of hooks.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.hooks)
}

// bound reports whether h is dispatched for handler.
func (h *Hook) bound(handler string) bool { return h.Binding == "" || h.Binding == handler }

// Dispatch sends handler's event to every hook bound to it, in declaration
// order: a blocking hook is called and waited for (within its deadline);
// an async hook gets the event queued. Policy hooks (commit_policy: deny)
// are asked through Gate, before the call, and are not dispatched here.
// at holds record fields that place the event (task_id).
func (s *Set) Dispatch(ctx context.Context, handler string, ev any, at map[string]any) Result {
	var r Result
	if s == nil {
		return r
	}
	for _, h := range s.hooks {
		if !h.bound(handler) || h.Policy == PolicyDeny || !h.c.Has(handler) {
			continue
		}
		if h.Async {
			s.enqueue(h, job{handler, ev, at})
			continue
		}
		out, err := s.call(ctx, h, handler, ev, at)
		if err != nil {
			r.Errs = append(r.Errs, err)
			continue
		}
		if arm, ok := s.judge(h, handler, out, at, true); ok {
			r.Commits = append(r.Commits, Commit{Hook: h.Name, Output: arm})
		}
	}
	return r
}

// Denial is a policy hook's refusal of a call.
type Denial struct {
	Hook   string
	Reason string
}

// Gate asks the policy hooks of handler (on-tool-call or on-shell), in
// declaration order, whether the call ev describes may run. The first
// refusal wins and later hooks are not asked. A policy hook fails closed:
// its err(reason) is its deny, and a trap, a deadline or a broken answer
// denies too, so a call runs only when every policy hook answered none.
func (s *Set) Gate(ctx context.Context, handler string, ev any, at map[string]any) *Denial {
	if s == nil {
		return nil
	}
	for _, h := range s.hooks {
		if h.Policy != PolicyDeny || h.Binding != handler || !h.c.Has(handler) {
			continue
		}
		out, err := s.call(ctx, h, handler, ev, at)
		var reason string
		var he *component.HookError
		switch {
		case errors.As(err, &he):
			reason = he.Msg
		case err != nil:
			// Fail closed: a policy hook that could not answer has not
			// allowed the call.
			reason = "the policy hook failed, so the call is denied: " + firstLine(err.Error())
		case out.Case != component.OutNone:
			reason = fmt.Sprintf("the policy hook answered %s, not none or err(reason), so the call is denied", out.Case)
		default:
			continue
		}
		f := s.fields(h, handler, at)
		f["reason"] = reason
		s.record("hook_denied", f)
		return &Denial{Hook: h.Name, Reason: reason}
	}
	return nil
}

// errDeadline wraps a call that ran past its hook's deadline.
var errDeadline = errors.New("hook call ran past its deadline")

// call runs one lifecycle call of h with its deadline and writes its
// hook_call record; a failed call is logged and, for an async hook,
// recorded as hook_dispatch_error.
func (s *Set) call(ctx context.Context, h *Hook, handler string, ev any, at map[string]any) (component.HookOutput, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, h.Deadline)
	defer cancel()
	start := s.now()
	out, err := h.c.Call(ctx, handler, ev)
	dur := s.now().Sub(start)
	rec := s.fields(h, handler, at)
	rec["duration_ms"] = dur.Milliseconds()
	if err != nil {
		var he *component.HookError
		kind := "error"
		switch {
		case errors.As(err, &he):
		case ctx.Err() == context.DeadlineExceeded && parent.Err() == nil:
			kind = "deadline"
			err = fmt.Errorf("%w: hook %s %s ran past %s (%s); raise it on this entry or make the handler shorter: %v", errDeadline, h.Name, handler, h.DeadlineField, h.Deadline, err)
		default:
			// The component's error already names the hook and handler.
			kind = "fault"
		}
		rec["outcome"], rec["error"], rec["fault"] = "error", firstLine(err.Error()), kind
		s.record("hook_call", rec)
		s.fault(h, handler, kind, err, at)
		return out, err
	}
	rec["outcome"] = out.Case
	s.record("hook_call", rec)
	return out, nil
}

// judge decides what becomes of a successful answer: none is silent; the
// handler's honoured arm is committed when the hook's commit_policy takes
// it; any other arm is discarded and reported (spec 000: a loud, non-fatal
// fault: the hook's log, and hook_dispatch_error for a blocking hook
// outside on-stage).
func (s *Set) judge(h *Hook, handler string, out component.HookOutput, at map[string]any, blocking bool) (component.HookOutput, bool) {
	if out.Case == component.OutNone || out.Case == "" {
		return out, false
	}
	honoured := Honoured[handler]
	seed := handler == component.OnTaskStart && h.Policy == PolicySeedContext
	if seed {
		honoured = SeedArm
	}
	if out.Case == honoured && (seed || honoured == component.OutArtifact || policyArm[h.Policy] == honoured) {
		return out, true
	}
	why := fmt.Sprintf("hook %s: %s returned %s, which %s does not honour; the arm was discarded", h.Name, handler, out.Case, handler)
	if out.Case == honoured {
		why = fmt.Sprintf("hook %s: %s returned %s, but the hook's commit_policy is %s; the arm was discarded", h.Name, handler, out.Case, h.Policy)
	}
	s.log(h, why)
	if blocking && handler != component.OnStage {
		f := s.fields(h, handler, at)
		f["fault"], f["error"], f["arm"] = "unsupported_arm", why, out.Case
		s.record("hook_dispatch_error", f)
	}
	return out, false
}

// fault reports a failed call: a line in the hook's log, and for an async
// hook a hook_dispatch_error record (its log is otherwise the only place
// the failure shows).
func (s *Set) fault(h *Hook, handler, kind string, err error, at map[string]any) {
	s.log(h, fmt.Sprintf("%s %s: %v", handler, kind, err))
	if h.Async {
		f := s.fields(h, handler, at)
		f["fault"], f["error"] = kind, firstLine(err.Error())
		s.record("hook_dispatch_error", f)
	}
}

func (s *Set) fields(h *Hook, handler string, at map[string]any) map[string]any {
	f := map[string]any{"hook": h.Name, "handler": handler, "mode": "blocking"}
	if h.Async {
		f["mode"] = "async"
	}
	for k, v := range at {
		f[k] = v
	}
	return f
}

// record emits a record unless the session has ended (an abandoned async
// call finishing late must not write past session_end). on-stage runs
// before session_start, which opens the trace: its calls and faults are
// in the hook's log only (spec 000).
func (s *Set) record(typ string, f map[string]any) {
	if f["handler"] == component.OnStage {
		return
	}
	s.mu.Lock()
	ended := s.ended
	s.mu.Unlock()
	if ended || s.events == nil {
		return
	}
	s.events.Emit(event.Event{Type: typ, Fields: f})
}

// LogPath is a hook's log file in the session's logs/: the artifact name
// with "/" made "-" (logs/hook-murmur-hook-debug.log for murmur/hook-debug).
func LogPath(logs, name string) string {
	return filepath.Join(logs, "hook-"+strings.ReplaceAll(name, "/", "-")+".log")
}

// Logf appends one line to the log of the hook named name: a fault its
// caller found in an answer the hook committed.
func (s *Set) Logf(name, format string, args ...any) {
	s.logName(name, fmt.Sprintf(format, args...))
}

// log appends one line to the hook's log.
func (s *Set) log(h *Hook, line string) { s.logName(h.Name, line) }

func (s *Set) logName(name, line string) {
	if s.logs == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(LogPath(s.logs, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%s %s\n", s.now().UTC().Format(time.RFC3339Nano), strings.TrimRight(line, "\n"))
	f.Close()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// enqueue hands an event to an async hook's worker: under on_overflow
// drop a full queue discards it and counts it; under block it waits for
// room.
func (s *Set) enqueue(h *Hook, j job) {
	h.sendMu.RLock()
	defer h.sendMu.RUnlock()
	if h.closedQ {
		h.dropped.Add(1)
		return
	}
	if h.Block {
		select {
		case h.q <- j:
		case <-h.wctx.Done():
			h.dropped.Add(1)
		}
		return
	}
	select {
	case h.q <- j:
	default:
		h.dropped.Add(1)
	}
}

// work is an async hook's worker: one call at a time, in queue order, on
// the one instance the hook has for the session.
func (s *Set) work(h *Hook) {
	defer close(h.done)
	for j := range h.q {
		if h.wctx.Err() != nil {
			continue // abandoned: what is left is not run
		}
		out, err := s.call(h.wctx, h, j.handler, j.event, j.at)
		if err == nil {
			// An async hook's output is always discarded; an arm the
			// handler does not honour is still the hook's fault, in its
			// log only.
			if out.Case != component.OutNone && out.Case != "" {
				s.judge(h, j.handler, out, j.at, false)
			}
		}
	}
}

// Dropped is the number of events h's full queue discarded so far.
func (h *Hook) Dropped() int64 { return h.dropped.Load() }

// Hooks lists the set's hooks in declaration order.
func (s *Set) Hooks() []*Hook {
	if s == nil {
		return nil
	}
	return s.hooks
}

// Drain closes every async hook's queue and waits, within budget for all
// of them together, for the queued calls and the one in flight; a hook
// still working when the budget runs out is abandoned (its in-flight call
// is interrupted and what is queued is not run) and reported as a fault.
// Each async hook gets one hook_drain record: drained or abandoned, and
// the events its full queue dropped. Call it after the last event
// (on-session-end) and before session_end.
func (s *Set) Drain(budget time.Duration) {
	if s == nil {
		return
	}
	if budget <= 0 {
		budget = DefaultDrain
	}
	deadline := time.NewTimer(budget)
	defer deadline.Stop()
	for _, h := range s.hooks {
		if !h.Async {
			continue
		}
		h.sendMu.Lock()
		if !h.closedQ {
			h.closedQ = true
			close(h.q)
		}
		h.sendMu.Unlock()
	}
	expired := false
	for _, h := range s.hooks {
		if !h.Async {
			continue
		}
		if !expired {
			select {
			case <-h.done:
			case <-deadline.C:
				expired = true
			}
		}
		abandoned := false
		if expired {
			select {
			case <-h.done:
			default:
				abandoned = true
			}
		}
		if abandoned {
			h.stop()
			err := fmt.Errorf("hook %s was still working when the session's drain budget (%s) ran out; its queued events were not run", h.Name, budget)
			s.fault(h, "drain", "abandoned", err, nil)
			<-h.done // the interrupted call returns at its next epoch check
		}
		s.record("hook_drain", map[string]any{"hook": h.Name, "abandoned": abandoned, "dropped": h.Dropped()})
	}
}

// Close ends the set: async workers are stopped (Drain first to let them
// finish), no record is written after it, and every hook's instance is
// released.
func (s *Set) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed, s.ended = true, true
	s.mu.Unlock()
	var errs []error
	for _, h := range s.hooks {
		if h.Async {
			h.stop()
			h.sendMu.Lock()
			if !h.closedQ {
				h.closedQ = true
				close(h.q)
			}
			h.sendMu.Unlock()
			<-h.done
		}
		errs = append(errs, h.c.Close())
	}
	return errors.Join(errs...)
}

// Record writes a record of the session's hooks (a committed artifact, a
// reopen not granted) unless the session has ended.
func (s *Set) Record(typ string, f map[string]any) {
	if s != nil {
		s.record(typ, f)
	}
}
