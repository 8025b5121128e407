package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/trace"
)

// Divergence is the first replayed record that is not the recorded one.
type Divergence struct {
	// At counts compared records from 0.
	At    int    `json:"at"`
	Event string `json:"event"`
	Task  string `json:"task_id,omitempty"`
	Turn  int64  `json:"turn,omitempty"`
	// Field is the first differing field ("" when a record is missing or
	// of another type).
	Field    string `json:"field,omitempty"`
	Recorded string `json:"recorded"`
	Replayed string `json:"replayed"`
	// Detail says, for a request that differs, which message and how.
	Detail string `json:"detail,omitempty"`
}

func (d Divergence) String() string {
	where := d.Event
	if d.Task != "" {
		where += " of task " + d.Task
	}
	if d.Turn > 0 {
		where += fmt.Sprintf(" turn %d", d.Turn)
	}
	s := fmt.Sprintf("record %d (%s)", d.At+1, where)
	if d.Field != "" {
		s += ", field " + d.Field
	}
	s += fmt.Sprintf(":\n  recorded: %s\n  replayed: %s", d.Recorded, d.Replayed)
	if d.Detail != "" {
		s += "\n  " + d.Detail
	}
	return s
}

// Checker compares a replay's records with the recording as they are
// emitted. It is an event.Sink; OnDiverge runs once, at the first
// divergence (replay cancels the run there: the recorded answers no
// longer fit what the session did).
type Checker struct {
	rec       *Recording
	blobs     string // the replay session's blobs/
	OnDiverge func()

	mu   sync.Mutex
	next int
	div  *Divergence
}

// NewChecker checks against rec; replayBlobs is the replaying session's
// blobs directory, read to say how a differing request differs.
func NewChecker(rec *Recording, replayBlobs string) *Checker {
	return &Checker{rec: rec, blobs: replayBlobs}
}

// Emit implements event.Sink.
func (c *Checker) Emit(e event.Event) {
	if e.Live || !Compared[e.Type] {
		return
	}
	b, err := trace.Marshal(e)
	var got trace.Line
	if err == nil {
		got, err = trace.ParseLine(bytes.TrimSpace(b))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.div != nil {
		return
	}
	if err != nil {
		c.diverge(Divergence{At: c.next, Event: e.Type, Recorded: "a record", Replayed: err.Error()})
		return
	}
	if c.next >= len(c.rec.Records) {
		c.diverge(Divergence{At: c.next, Event: got.Event, Task: got.String("task_id"), Turn: got.Int("turn"),
			Recorded: "(the recording ends here)", Replayed: summary(got)})
		return
	}
	want := c.rec.Records[c.next]
	if d := c.compare(want, got); d != nil {
		d.At = c.next
		c.diverge(*d)
		return
	}
	c.next++
}

func (c *Checker) diverge(d Divergence) {
	c.div = &d
	if c.OnDiverge != nil {
		c.OnDiverge()
	}
}

// Result is the first divergence, or nil when every recorded record was
// written again and nothing more; matched counts the records that matched.
func (c *Checker) Result() (div *Divergence, matched int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.div == nil && c.next < len(c.rec.Records) {
		want := c.rec.Records[c.next]
		c.div = &Divergence{At: c.next, Event: want.Event, Task: want.String("task_id"), Turn: want.Int("turn"),
			Recorded: summary(want), Replayed: "(the replay ended here)"}
	}
	return c.div, c.next
}

// compare returns how got differs from want, or nil.
func (c *Checker) compare(want, got trace.Line) *Divergence {
	d := &Divergence{Event: want.Event, Task: want.String("task_id"), Turn: want.Int("turn")}
	if want.Event != got.Event {
		d.Recorded, d.Replayed = summary(want), summary(got)
		return d
	}
	keys := map[string]bool{}
	for k := range want.Fields {
		keys[k] = true
	}
	for k := range got.Fields {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		if !Volatile[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		w, g := canonical(want.Fields[k]), canonical(got.Fields[k])
		if bytes.Equal(w, g) {
			continue
		}
		d.Field, d.Recorded, d.Replayed = k, shown(w), shown(g)
		if k == "message_shas" {
			d.Detail = c.messageDetail(want, got)
		}
		return d
	}
	return nil
}

// messageDetail names the first message of a request that differs and
// shows both versions from the two sessions' blobs.
func (c *Checker) messageDetail(want, got trace.Line) string {
	var a, b []string
	want.Get("message_shas", &a)
	got.Get("message_shas", &b)
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	switch {
	case i >= len(a):
		return fmt.Sprintf("the replayed request has %d messages, the recorded %d", len(b), len(a))
	case i >= len(b):
		return fmt.Sprintf("the replayed request has %d messages, the recorded %d", len(b), len(a))
	}
	ra, _ := os.ReadFile(filepath.Join(c.rec.Dir, "blobs", a[i]))
	rb, _ := os.ReadFile(filepath.Join(c.blobs, b[i]))
	return fmt.Sprintf("message %d of the request differs: recorded %s, replayed %s", i+1, excerpt(ra), excerpt(rb))
}

// canonical is a field's JSON re-encoded (object keys sorted), or nil
// when absent.
func canonical(raw json.RawMessage) []byte {
	if raw == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

func shown(b []byte) string {
	if b == nil {
		return "(absent)"
	}
	return excerpt(b)
}

// excerpt bounds a shown value to 200 bytes.
func excerpt(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// summary is one line naming a record.
func summary(l trace.Line) string {
	s := l.Event
	for _, k := range []string{"tool", "call_id", "status", "stop_reason", "exit_status", "error"} {
		if v := l.String(k); v != "" {
			s += " " + k + "=" + v
		}
	}
	return s
}
