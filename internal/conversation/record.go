// Package conversation keeps a capsule's durable conversation records
// (spec 004 context.record): one conversation.jsonl per context under
// ~/.murmur/conversations/<record_store>/<context>/, appended one message
// a line as each message is made, read back when a threaded task or
// mur run --resume continues the context, and bounded by context.retain.
//
// A record survives a writer killed at any point: each message is one
// write(2) of a whole line to a file opened O_APPEND, a reader ignores a
// last line without its newline, and the next writer cuts that torn tail
// off before it appends. Rewrites (truncation by max_messages, adoption by
// an owning capsule) go to a temporary file renamed over the record.
// Writers of one record, in one process or several, serialise on the
// record file's flock.
package conversation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	segjson "github.com/segmentio/encoding/json"

	"github.com/murmur/mur/internal/images"
	"github.com/murmur/mur/internal/infer"
)

// FileName is a context directory's record.
const FileName = "conversation.jsonl"

// Header is a record's first line when a capsule that declares
// context.retain owns it. A record without one is unowned: no age sweep
// removes it.
type Header struct {
	// Capsule is the owning capsule's name; another capsule sharing the
	// record_store never prunes this record.
	Capsule   string    `json:"capsule"`
	ContextID string    `json:"context_id"`
	Created   time.Time `json:"created"`
	// Dropped counts the messages max_messages has removed from the front,
	// in all; DroppedThrough is the id of the newest of them.
	Dropped        int64     `json:"dropped,omitempty"`
	DroppedThrough int64     `json:"dropped_through,omitempty"`
	TrimmedAt      time.Time `json:"trimmed_at,omitzero"`
}

// Entry is one message of a record.
type Entry struct {
	// ID numbers the record's messages from 1; a message keeps its id
	// when older ones are dropped.
	ID        int64         `json:"id"`
	Time      time.Time     `json:"ts"`
	ContextID string        `json:"context_id"`
	SessionID string        `json:"session_id,omitempty"`
	TaskID    string        `json:"task_id,omitempty"`
	Message   infer.Message `json:"message"`
}

// ErrMalformed means a record line is not a header or a message.
var ErrMalformed = errors.New("malformed conversation record")

// Record is a record's content as read.
type Record struct {
	// Header is nil for an unowned record.
	Header  *Header
	Entries []Entry
	// Size is the length of the record's complete lines; Torn is set when
	// bytes follow them without a newline (a writer killed mid-line).
	Size int64
	Torn bool
}

// LastID is the id of the newest message, 0 for none.
func (r Record) LastID() int64 {
	if n := len(r.Entries); n > 0 {
		return r.Entries[n-1].ID
	}
	return r.Header.droppedThrough()
}

func (h *Header) droppedThrough() int64 {
	if h == nil {
		return 0
	}
	return h.DroppedThrough
}

// Messages are the entries' messages, oldest first.
func (r Record) Messages() []infer.Message {
	out := make([]infer.Message, len(r.Entries))
	for i, e := range r.Entries {
		out[i] = e.Message
	}
	return out
}

// wireLine is either line kind: a header carries "kind":"header".
type wireLine struct {
	Kind string `json:"kind"`
	Header
	ID        int64          `json:"id"`
	Time      time.Time      `json:"ts"`
	SessionID string         `json:"session_id"`
	TaskID    string         `json:"task_id"`
	Message   *infer.Message `json:"message"`
}

const headerKind = "header"

// maxLine bounds one line: a message with a large tool result is a few
// MiB at most; 64 MiB only guards against a file that is not a record.
const maxLine = 64 << 20

// Read parses a record. The first line may be a header; every other line is
// a message whose id is above the one before it. A last line without its
// newline is a torn write: it is left out and Torn is set. Any other bad
// line is ErrMalformed, naming its 1-based line number.
func Read(r io.Reader) (Record, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Record{}, fmt.Errorf("read conversation record: %w", err)
	}
	return parse(data)
}

// parse decodes the lines of data on every core (a 10,000-message record
// is decoded in a few tens of milliseconds), then checks their order.
func parse(data []byte) (Record, error) {
	var rec Record
	var lines [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			rec.Torn = true
			break
		}
		if i+1 > maxLine {
			return rec, fmt.Errorf("%w: line %d is longer than %d bytes", ErrMalformed, len(lines)+1, maxLine)
		}
		lines = append(lines, data[:i+1])
		rec.Size += int64(i + 1)
		data = data[i+1:]
	}
	decoded := make([]wireLine, len(lines))
	errs := make([]error, len(lines))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(lines)/256))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(lines); i += workers {
				decoded[i], errs[i] = decodeLine(lines[i], i+1)
			}
		}()
	}
	wg.Wait()
	rec.Entries = make([]Entry, 0, len(lines))
	for i := range lines {
		if errs[i] != nil {
			rec.Size = 0
			return rec, errs[i]
		}
		if err := rec.add(&decoded[i], i+1); err != nil {
			rec.Size = 0
			return rec, err
		}
	}
	return rec, nil
}

// decodeLine decodes line n (with its newline), with segmentio's
// encoding/json: it validates while it decodes, where the standard
// decoder scans each line twice, and a 10,000-message load took about
// half the CPU (bench/RESULTS.md).
func decodeLine(b []byte, n int) (wireLine, error) {
	var w wireLine
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return w, fmt.Errorf("%w: line %d is blank", ErrMalformed, n)
	}
	if err := segjson.Unmarshal(b, &w); err != nil {
		return w, fmt.Errorf("%w: line %d: %w", ErrMalformed, n, err)
	}
	return w, nil
}

// add checks decoded line n against the lines before it and keeps it.
func (rec *Record) add(w *wireLine, n int) error {
	if w.Kind == headerKind {
		if n != 1 {
			return fmt.Errorf("%w: line %d: a header is only ever the first line", ErrMalformed, n)
		}
		if w.Capsule == "" {
			return fmt.Errorf("%w: line 1: the header names no capsule", ErrMalformed)
		}
		h := w.Header
		rec.Header = &h
		return nil
	}
	if w.Kind != "" {
		return fmt.Errorf("%w: line %d: unknown kind %q", ErrMalformed, n, w.Kind)
	}
	if w.Message == nil || (w.Message.Role != infer.RoleUser && w.Message.Role != infer.RoleAssistant) {
		return fmt.Errorf("%w: line %d: no message with role user or assistant", ErrMalformed, n)
	}
	for _, b := range w.Message.Content {
		// An image part goes back to a model as bytes: one that is not
		// the image its media type names is a damaged record, not an
		// image (the drivers would send it as one).
		if b.Type == infer.BlockImage {
			if mt, ok := images.Detect(b.MediaType, b.Data); !ok || mt != b.MediaType {
				return fmt.Errorf("%w: line %d: an image part whose bytes are not a %q image", ErrMalformed, n, b.MediaType)
			}
		}
	}
	if w.ID <= rec.LastID() {
		return fmt.Errorf("%w: line %d: message id %d does not follow %d", ErrMalformed, n, w.ID, rec.LastID())
	}
	rec.Entries = append(rec.Entries, Entry{ID: w.ID, Time: w.Time, ContextID: w.ContextID,
		SessionID: w.SessionID, TaskID: w.TaskID, Message: *w.Message})
	return nil
}

// ReadFile reads the record at path; a missing file is an empty record.
func ReadFile(path string) (Record, error) {
	// os.ReadFile sizes its buffer from the file: io.ReadAll's doubling
	// cleared and copied about twice the record's bytes.
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Record{}, nil
	}
	if err != nil {
		return Record{}, err
	}
	rec, err := parse(data)
	if err != nil {
		return rec, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// marshalHeader is the header's line, newline included.
func marshalHeader(h Header) ([]byte, error) {
	b, err := json.Marshal(struct {
		Kind string `json:"kind"`
		Header
	}{headerKind, h})
	return append(b, '\n'), err
}

// marshalEntry is the entry's line, newline included.
func marshalEntry(e Entry) ([]byte, error) {
	b, err := json.Marshal(e)
	return append(b, '\n'), err
}
