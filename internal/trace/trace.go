// Package trace writes and reads a session's trace.jsonl: one JSON object per
// line, each with "event" (the event type), "ts" (RFC 3339, UTC, nanosecond)
// and the event's own fields at the top level. The writer is an event.Sink,
// so the trace sees exactly the stream hooks and OpenTelemetry see. The
// schema is documented in docs/trace.md.
package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/murmur/mur/internal/event"
)

// FileName is the trace's name inside a session's records directory.
const FileName = "trace.jsonl"

// ErrReservedField means an event's fields used a name the line itself
// owns ("event" or "ts").
var ErrReservedField = errors.New("reserved trace field")

// Writer appends events to trace.jsonl. Every line goes to the file in one
// write(2) with no user-space buffer, so a line is on disk (in the page
// cache) the moment Emit returns and a reader tailing the file, or a crash
// right after, never sees half a session's buffered lines.
type Writer struct {
	mu  sync.Mutex
	f   *os.File
	err error
}

// Create opens (creating or appending to) the trace file at path.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	return &Writer{f: f}, nil
}

// Emit writes e as one line. A write error is kept and reported by Err and
// Close; the session goes on, since a full disk must not end an agent's
// task mid-tool-call, but the launcher reports it at the end and mur exits
// non-zero (internal/cli closeSession), never 0 over a trace that stopped.
func (w *Writer) Emit(e event.Event) {
	line, err := Marshal(e)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return
	}
	if err == nil {
		_, err = w.f.Write(line)
	}
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("write trace %q event: %w", e.Type, err)
	}
}

// Err returns the first write error, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close syncs and closes the file; later events are dropped.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.err
	}
	serr := w.f.Sync()
	cerr := w.f.Close()
	w.f = nil
	return errors.Join(w.err, serr, cerr)
}

// Marshal renders e as one trace line with its trailing newline. "event"
// and "ts" come first so a human reading the file sees them at the left;
// the fields follow in sorted key order, as encoding/json writes maps.
func Marshal(e event.Event) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"event":`)
	t, _ := json.Marshal(e.Type)
	b.Write(t)
	b.WriteString(`,"ts":"`)
	b.WriteString(e.Time.UTC().Format(time.RFC3339Nano))
	b.WriteByte('"')
	if _, ok := e.Fields["event"]; ok {
		return nil, fmt.Errorf("trace %q event: field \"event\": %w", e.Type, ErrReservedField)
	}
	if _, ok := e.Fields["ts"]; ok {
		return nil, fmt.Errorf("trace %q event: field \"ts\": %w", e.Type, ErrReservedField)
	}
	if len(e.Fields) > 0 {
		rest, err := json.Marshal(e.Fields)
		if err != nil {
			return nil, fmt.Errorf("marshal trace %q event: %w", e.Type, err)
		}
		// rest is a JSON object; splice its members after ts.
		if len(rest) > 2 {
			b.WriteByte(',')
			b.Write(rest[1 : len(rest)-1])
		}
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}
