// Package timeline reads a session's trace.jsonl into what mur trace show
// prints: the session, its tasks, each task's turns (model calls) and the
// tool calls each turn made, with durations, tokens, spend and errors. It
// reads the file as a stream, one line at a time, so a long trace costs
// its timeline's size, not the file's.
package timeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/murmur/mur/internal/trace"
)

// Session is one session's timeline.
type Session struct {
	ID           string    `json:"session_id"`
	Capsule      string    `json:"capsule,omitempty"`
	Model        string    `json:"model,omitempty"`
	Start        time.Time `json:"start"`
	End          time.Time `json:"end,omitzero"`
	DurationMS   int64     `json:"duration_ms"`
	ExitStatus   string    `json:"exit_status,omitempty"` // "" while it runs or if it died
	Turns        int64     `json:"turns"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	Charged      int64     `json:"charged"` // what the model calls cost the spend ceilings
	Tasks        []*Task   `json:"tasks"`
	// Notes are records outside any task: retention, shell events, …
	Notes []Note `json:"notes,omitempty"`
	Lines int    `json:"lines"`
}

// Task is one task.
type Task struct {
	ID           string    `json:"task_id"`
	Origin       string    `json:"origin,omitempty"`
	Start        time.Time `json:"start"`
	DurationMS   int64     `json:"duration_ms"`
	ExitStatus   string    `json:"exit_status,omitempty"`
	Reason       string    `json:"reason,omitempty"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	Charged      int64     `json:"charged"`
	Turns        []*Turn   `json:"turns"`
	Errors       []Note    `json:"errors,omitempty"` // task_failed, spend_ceiling_reached, inference_retry
}

// Turn is one counted model call and the tool calls it asked for.
type Turn struct {
	N            int64     `json:"turn"`
	Start        time.Time `json:"start"`
	DurationMS   int64     `json:"duration_ms"`
	Model        string    `json:"model,omitempty"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	Charged      int64     `json:"charged"`
	StopReason   string    `json:"stop_reason,omitempty"`
	Attempts     int64     `json:"attempts,omitempty"`
	Error        string    `json:"error,omitempty"`
	Tools        []Tool    `json:"tools"`
}

// Tool is one tool call.
type Tool struct {
	Name        string `json:"tool"`
	CallID      string `json:"call_id,omitempty"`
	Status      string `json:"status"`
	DurationMS  int64  `json:"duration_ms"`
	StateEffect string `json:"state_effect,omitempty"`
	Error       string `json:"error,omitempty"`
}

// Note is a record shown as one line: its type, time and a short text.
type Note struct {
	Event string    `json:"event"`
	Time  time.Time `json:"ts"`
	Text  string    `json:"text"`
}

// ReadFile reads the trace at path.
func ReadFile(path string) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// Read builds the timeline from a trace stream. A malformed line is an
// error naming its line number (trace.ErrMalformed); a trace cut short (a
// session still running, or killed) is read as far as it goes.
func Read(r io.Reader) (*Session, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	s := &Session{Tasks: []*Task{}}
	tasks := map[string]*Task{}
	n := 0
	for sc.Scan() {
		n++
		if len(sc.Bytes()) == 0 {
			continue
		}
		l, err := trace.ParseLine(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		s.add(l, tasks)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	s.Lines = n
	return s, nil
}

func (s *Session) add(l trace.Line, tasks map[string]*Task) {
	task := func() *Task {
		id := l.String("task_id")
		t := tasks[id]
		if t == nil && id != "" {
			// A record of a task whose task_start is not in the file.
			t = &Task{ID: id, Start: l.Time, Turns: []*Turn{}}
			tasks[id] = t
			s.Tasks = append(s.Tasks, t)
		}
		return t
	}
	switch l.Event {
	case "session_start":
		s.ID, s.Capsule, s.Model, s.Start = l.String("session_id"), l.String("capsule"), l.String("model"), l.Time
	case "session_end":
		s.End, s.ExitStatus, s.DurationMS = l.Time, l.String("exit_status"), l.Int("duration_ms")
		s.Turns, s.InputTokens, s.OutputTokens = l.Int("turns"), l.Int("input_tokens"), l.Int("output_tokens")
	case "task_start":
		t := &Task{ID: l.String("task_id"), Origin: l.String("origin"), Start: l.Time, Turns: []*Turn{}}
		tasks[t.ID] = t
		s.Tasks = append(s.Tasks, t)
	case "task_end":
		if t := task(); t != nil {
			t.ExitStatus, t.Reason = l.String("exit_status"), l.String("reason")
			t.InputTokens, t.OutputTokens = l.Int("input_tokens"), l.Int("output_tokens")
			t.DurationMS = l.Time.Sub(t.Start).Milliseconds()
		}
	case "inference":
		t := task()
		if t == nil {
			return
		}
		d := l.Int("duration_ms")
		u := &Turn{N: l.Int("turn"), Start: l.Time.Add(-time.Duration(d) * time.Millisecond), DurationMS: d,
			Model: l.String("model"), InputTokens: l.Int("input_tokens"), OutputTokens: l.Int("output_tokens"),
			Charged: l.Int("charged"), StopReason: l.String("stop_reason"), Attempts: l.Int("attempts"),
			Error: l.String("error"), Tools: []Tool{}}
		t.Turns = append(t.Turns, u)
		t.Charged += u.Charged
		s.Charged += u.Charged
	case "tool_call":
		t := task()
		if t == nil {
			return
		}
		c := Tool{Name: l.String("tool"), CallID: l.String("call_id"), Status: l.String("status"),
			DurationMS: l.Int("duration_ms"), StateEffect: l.String("state_effect"), Error: l.String("error")}
		if k := len(t.Turns); k > 0 && t.Turns[k-1].N == l.Int("turn") {
			t.Turns[k-1].Tools = append(t.Turns[k-1].Tools, c)
		} else {
			// A tool call without its turn's record: a turn of its own.
			t.Turns = append(t.Turns, &Turn{N: l.Int("turn"), Start: l.Time, Tools: []Tool{c}})
		}
	case "task_failed":
		if t := task(); t != nil {
			t.Errors = append(t.Errors, Note{l.Event, l.Time, l.String("code") + " " + l.String("reason")})
		}
	case "spend_ceiling_reached":
		if t := task(); t != nil {
			t.Errors = append(t.Errors, Note{l.Event, l.Time, fmt.Sprintf("%s: ceiling %d, used %d, needed %d", l.String("limit"), l.Int("ceiling"), l.Int("used"), l.Int("needed"))})
		}
	case "inference_retry":
		if t := task(); t != nil {
			t.Errors = append(t.Errors, Note{l.Event, l.Time, fmt.Sprintf("turn %d attempt %d failed (HTTP %d): %s; retried after %d ms", l.Int("turn"), l.Int("attempt"), l.Int("http_status"), l.String("error"), l.Int("wait_ms"))})
		}
	case "tool_input_refused", "keep_working", "done_check", "deadline_notice", "tools_refreshed":
		// Shown by the tool call or task they belong to, or not at all.
	default:
		if l.String("task_id") == "" {
			s.Notes = append(s.Notes, Note{l.Event, l.Time, summary(l)})
		}
	}
}

// summary is a record's fields in one short line.
func summary(l trace.Line) string {
	b, _ := json.Marshal(l.Fields)
	if len(b) > 160 {
		b = append(b[:157], "..."...)
	}
	return string(b)
}
