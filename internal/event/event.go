// Package event is a session's single stream of records. The trace writer
// (trace.jsonl), hooks and OpenTelemetry all read the same stream, so every
// producer (the agent loop, shell tools, the gateway, the sandbox) emits
// once and never knows who listens.
package event

import (
	"sync"
	"time"
)

// Event is one record. Type is the trace's event name (session_start,
// tool_call, shell_detached, …); Fields are its type-specific fields, written
// at the top level of the trace line beside "event" and "ts".
type Event struct {
	Type   string
	Time   time.Time
	Fields map[string]any
	// Live marks an event that only watchers follow (a text delta): it
	// is never a record, so Recorded drops it before the trace.
	Live bool
}

// Live event types: the model's text as it streams, the end of one model
// call's text (a watcher that prints ends its line there), and a tool
// call about to run (its tool_call record comes when it ends, so a
// watcher shows what is running meanwhile).
const (
	TextDelta = "text_delta" // fields: task_id, text
	TextEnd   = "text_end"   // fields: task_id
	ToolStart = "tool_start" // fields: task_id, turn, tool, call_id, input (the call's JSON text)
)

// Sink receives events in emission order. Emit must not retain Fields after
// it returns unless it copies them; it must be safe for concurrent use.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Emit calls f.
func (f SinkFunc) Emit(e Event) { f(e) }

// Recorded wraps a sink that keeps records (the trace writer) so it never
// sees live-only events.
func Recorded(k Sink) Sink {
	return SinkFunc(func(e Event) {
		if !e.Live {
			k.Emit(e)
		}
	})
}

// Stream fans events out to its sinks in the order they were added. The
// zero value is ready to use and drops events until a sink is added.
type Stream struct {
	mu    sync.Mutex
	sinks []*subscription
	now   func() time.Time
}

// subscription is one attached sink; its pointer identifies it for removal,
// since sinks themselves (funcs) need not be comparable.
type subscription struct{ sink Sink }

// Add attaches a sink for the life of the stream.
func (s *Stream) Add(k Sink) { s.Subscribe(k) }

// Subscribe attaches a sink and returns the function that detaches it. A
// detached sink receives nothing emitted after the call returns.
func (s *Stream) Subscribe(k Sink) (cancel func()) {
	sub := &subscription{sink: k}
	s.mu.Lock()
	s.sinks = append(s.sinks, sub)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, x := range s.sinks {
			if x == sub {
				// A new slice, so an Emit in progress elsewhere never sees
				// the backing array shift.
				s.sinks = append(s.sinks[:i:i], s.sinks[i+1:]...)
				return
			}
		}
	}
}

// Emit stamps e with the current time if it has none and delivers it to
// every sink. Delivery holds the stream's lock so all sinks see one order.
func (s *Stream) Emit(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Time.IsZero() {
		if s.now != nil {
			e.Time = s.now()
		} else {
			e.Time = time.Now().UTC()
		}
	}
	for _, k := range s.sinks {
		k.sink.Emit(e)
	}
}

// Discard is a Sink that drops every event.
var Discard Sink = SinkFunc(func(Event) {})
