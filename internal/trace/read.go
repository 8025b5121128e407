package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// ErrMalformed means a trace line is not a JSON object with a string
// "event" and an RFC 3339 "ts".
var ErrMalformed = errors.New("malformed trace line")

// maxLine bounds one line; an inference line with many message hashes is a
// few KiB, so 16 MiB only guards against a file that is not a trace.
const maxLine = 16 << 20

// Line is one parsed trace line. Fields holds every member except "event"
// and "ts", undecoded, so a reader takes what it needs at its own types.
type Line struct {
	Event  string
	Time   time.Time
	Fields map[string]json.RawMessage
}

// Get decodes field name into v; it reports false when the field is absent.
func (l Line) Get(name string, v any) (bool, error) {
	raw, ok := l.Fields[name]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("trace %s field %q: %w", l.Event, name, err)
	}
	return true, nil
}

// String returns field name as a string, or "" when it is absent or not one.
func (l Line) String(name string) string {
	var s string
	if _, err := l.Get(name, &s); err != nil {
		return ""
	}
	return s
}

// Int returns field name as an int64, or 0 when absent or not a number.
func (l Line) Int(name string) int64 {
	var n int64
	if _, err := l.Get(name, &n); err != nil {
		return 0
	}
	return n
}

// ParseLine parses one line (without its newline).
func ParseLine(b []byte) (Line, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return Line{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if m == nil {
		return Line{}, fmt.Errorf("%w: not an object", ErrMalformed)
	}
	var l Line
	if err := json.Unmarshal(m["event"], &l.Event); err != nil || l.Event == "" {
		return Line{}, fmt.Errorf("%w: no \"event\" string", ErrMalformed)
	}
	var ts string
	if err := json.Unmarshal(m["ts"], &ts); err != nil {
		return Line{}, fmt.Errorf("%w: no \"ts\" string", ErrMalformed)
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return Line{}, fmt.Errorf("%w: \"ts\": %w", ErrMalformed, err)
	}
	l.Time = t
	delete(m, "event")
	delete(m, "ts")
	l.Fields = m
	return l, nil
}

// Read parses every line of r. A blank line is skipped; the first malformed
// line stops the read with its 1-based line number. A final line cut short
// by a crash mid-write has no newline: it is reported like any other
// malformed line, since the writer never leaves one otherwise.
func Read(r io.Reader) ([]Line, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []Line
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		l, err := ParseLine(b)
		if err != nil {
			return out, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read trace: %w", err)
	}
	return out, nil
}

// ReadFile reads the trace at path.
func ReadFile(path string) ([]Line, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	defer f.Close()
	return Read(f)
}

// Filter returns the lines whose event is typ.
func Filter(lines []Line, typ string) []Line {
	var out []Line
	for _, l := range lines {
		if l.Event == typ {
			out = append(out, l)
		}
	}
	return out
}
