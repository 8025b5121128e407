package otel

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/murmur/mur/internal/event"
)

// state decides each event's span ids and parent in the order the stream
// emits them, so the worker only builds what is already settled.
type state struct {
	mu      sync.Mutex
	session trace.SpanContext
	tasks   map[string]*task
}

// task is one open task span and its open turn.
type task struct {
	sc   trace.SpanContext
	turn trace.SpanContext
	n    any // the open turn's number, as the event carried it
}

func (s *state) init() { s.tasks = map[string]*task{} }

// place returns the worker's item for e: its kind, ids, parent and the
// scopes it closes. ok is false for an event that makes no span.
func (s *state) place(e event.Event) (it item, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it.e = event.Event{Type: e.Type, Time: e.Time}
	taskID, _ := e.Fields["task_id"].(string)
	t := s.tasks[taskID]
	switch e.Type {
	case "session_start":
		it.kind = kindSessionStart
		s.session = newSpan(trace.SpanContext{})
		it.sc = s.session
		return it, true
	case "session_end":
		it.kind = kindSessionEnd
		it.sc = s.session
		for id, t := range s.tasks {
			if t.turn.IsValid() {
				it.closes = append(it.closes, t.turn.SpanID())
			}
			it.closes = append(it.closes, t.sc.SpanID())
			forget(id)
		}
		s.tasks = map[string]*task{}
		return it, s.session.IsValid()
	case "task_start":
		it.kind = kindTaskStart
		parent := s.session
		if remote, ok := adopted(taskID); ok {
			// The task continues another capsule's trace; the session
			// it runs in is a link.
			parent, it.link = remote, s.session
		}
		if t != nil {
			// A task id seen twice: the old scope ends here.
			if t.turn.IsValid() {
				it.closes = append(it.closes, t.turn.SpanID())
			}
			it.closes = append(it.closes, t.sc.SpanID())
		}
		it.parent = parent
		it.sc = newSpan(parent)
		s.tasks[taskID] = &task{sc: it.sc}
		publish(taskID, it.sc)
		return it, true
	case "task_end":
		if t == nil {
			break
		}
		it.kind = kindTaskEnd
		it.sc = t.sc
		if t.turn.IsValid() {
			it.closes = append(it.closes, t.turn.SpanID())
		}
		delete(s.tasks, taskID)
		forget(taskID)
		return it, true
	case "inference":
		if t == nil {
			break
		}
		it.kind = kindTurn
		if t.turn.IsValid() {
			it.closes = append(it.closes, t.turn.SpanID())
		}
		it.parent = t.sc
		it.sc = newSpan(t.sc)
		t.turn, t.n = it.sc, e.Fields["turn"]
		publish(taskID, it.sc)
		return it, true
	}
	// A record of its own: under its task's open turn when it belongs to
	// that turn (a tool call), else under its task, else the session.
	it.kind = kindLeaf
	switch {
	case t != nil && t.turn.IsValid() && e.Fields["turn"] != nil && fmt.Sprint(e.Fields["turn"]) == fmt.Sprint(t.n):
		it.parent = t.turn
	case t != nil:
		it.parent = t.sc
	default:
		it.parent = s.session
	}
	it.sc = newSpan(it.parent)
	return it, true
}

// newSpan is a fresh span id in parent's trace, or a new trace.
func newSpan(parent trace.SpanContext) trace.SpanContext {
	cfg := trace.SpanContextConfig{TraceFlags: trace.FlagsSampled}
	if parent.IsValid() {
		cfg.TraceID = parent.TraceID()
	} else {
		for !cfg.TraceID.IsValid() {
			binary.BigEndian.PutUint64(cfg.TraceID[:8], rand.Uint64())
			binary.BigEndian.PutUint64(cfg.TraceID[8:], rand.Uint64())
		}
	}
	for !cfg.SpanID.IsValid() {
		binary.BigEndian.PutUint64(cfg.SpanID[:], rand.Uint64())
	}
	return trace.NewSpanContext(cfg)
}

// The process's tasks, across sessions: traceparents adopted for tasks
// not yet started, and the innermost open span of each running task.
var (
	regMu   sync.Mutex
	pending = map[string]trace.SpanContext{}
	running = map[string]trace.SpanContext{}
)

// maxPending bounds adopted traceparents whose task never started.
const maxPending = 4096

// ErrTraceparent is Adopt's error for a header that is not a valid W3C
// traceparent.
var ErrTraceparent = errors.New("otel: not a valid W3C traceparent")

// Adopt makes the task with this id, when it starts, a child of the span
// a W3C traceparent header names (and tracestate, "" for none), so a task
// that crossed capsules is one trace. Call it before the session runs the
// task (capsule.Session.RunTask with Task.ID set to taskID); a session
// without an otel_endpoint ignores it. A task adopts at most once: the
// entry is consumed at its task_start.
func Adopt(taskID, traceparent, tracestate string) error {
	carrier := propagation.MapCarrier{"traceparent": traceparent}
	if tracestate != "" {
		carrier["tracestate"] = tracestate
	}
	sc := trace.SpanContextFromContext(traceContext.Extract(context.Background(), carrier))
	if !sc.IsValid() || taskID == "" {
		return ErrTraceparent
	}
	regMu.Lock()
	defer regMu.Unlock()
	if len(pending) >= maxPending {
		clear(pending)
	}
	pending[taskID] = sc
	return nil
}

// Traceparent is the W3C traceparent header naming the innermost open span
// of a running task (its turn while a model call's tool calls run, else
// the task), for a message the task sends to another capsule; "" when the
// task is not running in a session that exports spans.
func Traceparent(taskID string) string {
	regMu.Lock()
	sc, ok := running[taskID]
	regMu.Unlock()
	if !ok {
		return ""
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
	return carrier["traceparent"]
}

func adopted(taskID string) (trace.SpanContext, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	sc, ok := pending[taskID]
	delete(pending, taskID)
	return sc, ok
}

func publish(taskID string, sc trace.SpanContext) {
	regMu.Lock()
	running[taskID] = sc
	regMu.Unlock()
}

func forget(taskID string) {
	regMu.Lock()
	delete(running, taskID)
	regMu.Unlock()
}
