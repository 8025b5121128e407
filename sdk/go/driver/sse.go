package driver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
)

// Event is one server-sent event.
type Event struct {
	// Type is the event: field; "message" when the event names none.
	Type string
	// Data is the event's data: lines joined by newlines.
	Data string
	// ID is the last id: field seen, as the SSE rules carry it forward.
	ID string
	// Retry is the retry: field in milliseconds, 0 when absent.
	Retry int
}

// maxLine bounds one SSE line; a provider's event is far smaller.
const maxLine = 8 << 20

// Events reads server-sent events from r as they arrive (the response body
// of a streaming provider call), following the WHATWG event-stream rules:
// lines end in LF, CR or CRLF; a blank line dispatches; comments (":")
// are skipped; an event with no data is not dispatched.
func Events(r io.Reader) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), maxLine)
		sc.Split(scanLines)
		var typ, id string
		var data strings.Builder
		hasData := false
		retry := 0
		first := true
		for sc.Scan() {
			line := sc.Text()
			if first {
				line = strings.TrimPrefix(line, "\ufeff")
				first = false
			}
			if line == "" {
				if hasData {
					ev := Event{Type: typ, Data: strings.TrimSuffix(data.String(), "\n"), ID: id, Retry: retry}
					if ev.Type == "" {
						ev.Type = "message"
					}
					if !yield(ev, nil) {
						return
					}
				}
				typ, hasData, retry = "", false, 0
				data.Reset()
				continue
			}
			if line[0] == ':' {
				continue
			}
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				typ = value
			case "data":
				data.WriteString(value)
				data.WriteByte('\n')
				hasData = true
			case "id":
				if !strings.ContainsRune(value, 0) {
					id = value
				}
			case "retry":
				if n, err := strconv.Atoi(value); err == nil && n >= 0 {
					retry = n
				}
			}
		}
		if err := sc.Err(); err != nil {
			yield(Event{}, fmt.Errorf("reading event stream: %w", err))
		}
	}
}

// scanLines splits at LF, CRLF or a lone CR.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\r' {
			if i+1 == len(data) && !atEOF {
				return 0, nil, nil // a CRLF may be split across reads
			}
			if i+1 < len(data) && data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
		}
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
