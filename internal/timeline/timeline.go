// Package timeline reads a session's trace.jsonl into what mur trace show
// prints: the session, its tasks, each task's turns (model calls) and the
// tool calls each turn made, with durations, tokens, spend and errors. It
// reads the file as a stream, one line at a time, so a long trace costs
// its timeline's size, not the file's.
package timeline

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"

	// segmentio's encoding/json decodes a 100,000-line trace in less than
	// half the time of the standard library's, with half the garbage
	// (bench/RESULTS.md); it is the standard one's API.
	"github.com/segmentio/encoding/json"

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
	ResourceID  string `json:"resource_id,omitempty"`
	Error       string `json:"error,omitempty"`
	// end is when the call's record was written, as it returned; the HTML
	// view places the call by it.
	end time.Time
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
	var l rec
	for sc.Scan() {
		n++
		if len(sc.Bytes()) == 0 {
			continue
		}
		// One decode into the fields a timeline uses; trace.ParseLine's
		// generic form costs several times more on a long trace. The one
		// rec is reused: a line's fields are copied out by add.
		l = rec{}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Event == "" || l.TS.IsZero() {
			return nil, fmt.Errorf("line %d: %w", n, trace.ErrMalformed)
		}
		s.add(&l, sc.Bytes(), tasks)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	s.Lines = n
	return s, nil
}

// rec is a trace line's fields that the timeline reads (docs/trace.md).
type rec struct {
	Event        string    `json:"event"`
	TS           time.Time `json:"ts"`
	SessionID    string    `json:"session_id"`
	Capsule      string    `json:"capsule"`
	Model        string    `json:"model"`
	ExitStatus   string    `json:"exit_status"`
	TaskID       string    `json:"task_id"`
	Origin       string    `json:"origin"`
	Reason       string    `json:"reason"`
	Tool         string    `json:"tool"`
	CallID       string    `json:"call_id"`
	Status       string    `json:"status"`
	StateEffect  string    `json:"state_effect"`
	ResourceID   string    `json:"resource_id"`
	Error        string    `json:"error"`
	StopReason   string    `json:"stop_reason"`
	Code         string    `json:"code"`
	Limit        string    `json:"limit"`
	DurationMS   int64     `json:"duration_ms"`
	Turns        int64     `json:"turns"`
	Turn         int64     `json:"turn"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	Charged      int64     `json:"charged"`
	Attempts     int64     `json:"attempts"`
	Attempt      int64     `json:"attempt"`
	HTTPStatus   int64     `json:"http_status"`
	WaitMS       int64     `json:"wait_ms"`
	Ceiling      int64     `json:"ceiling"`
	Used         int64     `json:"used"`
	Needed       int64     `json:"needed"`
}

func (s *Session) add(l *rec, line []byte, tasks map[string]*Task) {
	task := func() *Task {
		t := tasks[l.TaskID]
		if t == nil && l.TaskID != "" {
			// A record of a task whose task_start is not in the file.
			t = &Task{ID: l.TaskID, Start: l.TS, Turns: []*Turn{}}
			tasks[l.TaskID] = t
			s.Tasks = append(s.Tasks, t)
		}
		return t
	}
	switch l.Event {
	case "session_start":
		s.ID, s.Capsule, s.Model, s.Start = l.SessionID, l.Capsule, l.Model, l.TS
	case "session_end":
		s.End, s.ExitStatus, s.DurationMS = l.TS, l.ExitStatus, l.DurationMS
		s.Turns, s.InputTokens, s.OutputTokens = l.Turns, l.InputTokens, l.OutputTokens
	case "task_start":
		t := &Task{ID: l.TaskID, Origin: l.Origin, Start: l.TS, Turns: []*Turn{}}
		tasks[t.ID] = t
		s.Tasks = append(s.Tasks, t)
	case "task_end":
		if t := task(); t != nil {
			t.ExitStatus, t.Reason = l.ExitStatus, l.Reason
			t.InputTokens, t.OutputTokens = l.InputTokens, l.OutputTokens
			t.DurationMS = l.TS.Sub(t.Start).Milliseconds()
		}
	case "inference":
		t := task()
		if t == nil {
			return
		}
		u := &Turn{N: l.Turn, Start: l.TS.Add(-time.Duration(l.DurationMS) * time.Millisecond), DurationMS: l.DurationMS,
			Model: l.Model, InputTokens: l.InputTokens, OutputTokens: l.OutputTokens,
			Charged: l.Charged, StopReason: l.StopReason, Attempts: l.Attempts,
			Error: l.Error, Tools: []Tool{}}
		t.Turns = append(t.Turns, u)
		t.Charged += u.Charged
		s.Charged += u.Charged
	case "tool_call":
		t := task()
		if t == nil {
			return
		}
		c := Tool{Name: l.Tool, CallID: l.CallID, Status: l.Status,
			DurationMS: l.DurationMS, StateEffect: l.StateEffect, ResourceID: l.ResourceID, Error: l.Error, end: l.TS}
		if k := len(t.Turns); k > 0 && t.Turns[k-1].N == l.Turn {
			t.Turns[k-1].Tools = append(t.Turns[k-1].Tools, c)
		} else {
			// A tool call without its turn's record: a turn of its own.
			t.Turns = append(t.Turns, &Turn{N: l.Turn, Start: l.TS, Tools: []Tool{c}})
		}
	case "task_failed":
		if t := task(); t != nil {
			t.Errors = append(t.Errors, Note{l.Event, l.TS, l.Code + " " + l.Reason})
		}
	case "spend_ceiling_reached":
		if t := task(); t != nil {
			t.Errors = append(t.Errors, Note{l.Event, l.TS, fmt.Sprintf("%s: ceiling %d, used %d, needed %d", l.Limit, l.Ceiling, l.Used, l.Needed)})
		}
	case "inference_retry":
		if t := task(); t != nil {
			t.Errors = append(t.Errors, Note{l.Event, l.TS, fmt.Sprintf("turn %d attempt %d failed (HTTP %d): %s; retried after %d ms", l.Turn, l.Attempt, l.HTTPStatus, l.Error, l.WaitMS)})
		}
	case "tool_input_refused", "keep_working", "done_check", "deadline_notice", "tools_refreshed":
		// Shown by the tool call or task they belong to, or not at all.
	default:
		if l.TaskID == "" {
			s.Notes = append(s.Notes, Note{l.Event, l.TS, summary(line)})
		}
	}
}

// summary is a record's own fields (all but event and ts) in one short line.
func summary(line []byte) string {
	l, err := trace.ParseLine(line)
	if err != nil {
		return ""
	}
	b, _ := json.Marshal(l.Fields)
	if len(b) > 160 {
		b = append(b[:157], "..."...)
	}
	return string(b)
}
