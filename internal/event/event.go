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
}

// Sink receives events in emission order. Emit must not retain Fields after
// it returns unless it copies them; it must be safe for concurrent use.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Emit calls f.
func (f SinkFunc) Emit(e Event) { f(e) }

// Stream fans events out to its sinks in the order they were added. The
// zero value is ready to use and drops events until a sink is added.
type Stream struct {
	mu    sync.Mutex
	sinks []Sink
	now   func() time.Time
}

// Add attaches a sink.
func (s *Stream) Add(k Sink) {
	s.mu.Lock()
	s.sinks = append(s.sinks, k)
	s.mu.Unlock()
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
		k.Emit(e)
	}
}

// Discard is a Sink that drops every event.
var Discard Sink = SinkFunc(func(Event) {})
