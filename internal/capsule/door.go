package capsule

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/door"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/otel"
	"github.com/murmur/mur/internal/shell"
)

// DoorBackend is the session as the door's door.Backend: every task the
// door admits runs on this session through RunTask, one at a time.
func (s *Session) DoorBackend() door.Backend { return doorBackend{s} }

type doorBackend struct{ s *Session }

// RunTask runs an admitted door task. Each model call's text is published
// as a working status once the call ends (a status per delta would flood
// the stream); the answer is the completed task's text.
func (b doorBackend) RunTask(ctx context.Context, t door.Task, u door.Updates) door.Outcome {
	task := Task{ID: t.ID, ContextID: t.ContextID, Origin: doorOrigin(t.Origin), Text: t.Text, Images: t.Images}
	if t.Traceparent != "" {
		// The task's spans join the caller's trace (the sending capsule's
		// turn). A header that is not a valid traceparent is ignored, as
		// W3C Trace Context says a receiver does.
		_ = otel.Adopt(t.ID, t.Traceparent, t.Tracestate)
	}
	if u != nil {
		task.Events = &progress{updates: u}
		// Tasks run one at a time, so the task in progress is the one a
		// tool's request-input asks on behalf of.
		if b.s.l != nil {
			b.s.l.input.set(u)
			defer b.s.l.input.set(nil)
		}
	}
	o := b.s.RunTask(ctx, task)
	var running []string
	if b.s.l != nil {
		running = b.s.l.completions.endedWith(t.ID)
	}
	switch o.Status {
	case agent.ExitOK:
		return door.Outcome{State: door.Completed, Text: o.Answer, RunningCommands: running}
	case agent.ExitCanceled:
		return door.Outcome{State: door.Canceled, Text: o.Reason, RunningCommands: running}
	}
	return door.Outcome{State: door.Failed, Text: o.Reason, RunningCommands: running}
}

// StartCompletions makes each background command's exit a completion task
// started through start (the door's Background): spec 004 gives a session
// under task_acceptance: queue with after_task: sleep "a task with origin
// completion in the bg lane, carrying the work id, the exit code and the
// log's path", not enqueued when background-command already returned the
// exit. mur run calls it only under that lifecycle. An exit that cannot
// be started (the session is stopping) is said on Stderr; its log keeps
// the output.
func (s *Session) StartCompletions(start func(text string) error) {
	if s.l == nil {
		return
	}
	s.l.completions.mu.Lock()
	s.l.completions.start = start
	s.l.completions.stderr = s.stderr
	s.l.completions.mu.Unlock()
}

// completions is the session's side of background commands for tasks: it
// stamps each task_end with the commands still running (running_commands,
// and the door's metadata.murmur.runningCommands) and hands exits to the
// bg lane.
type completions struct {
	mu     sync.Mutex
	shell  *shell.Session
	start  func(text string) error
	stderr io.Writer
	// ended holds each task's running_commands from its task_end until
	// the door reads it.
	ended map[string][]string
	// running counts tasks between task_start and task_end; an exit that
	// comes while one runs waits in pending until it ends, because that
	// task's model may still take the exit through background-command
	// (spec 004: the completion task is "not enqueued when
	// background-command already returned the exit").
	running int
	pending []shell.Completion
}

// bind is called once the shell layer is up.
func (c *completions) bind(s *shell.Session) {
	c.mu.Lock()
	c.shell = s
	c.mu.Unlock()
}

// exited is the shell layer's OnBackgroundExit.
func (c *completions) exited(done shell.Completion) {
	c.mu.Lock()
	if c.running > 0 {
		c.pending = append(c.pending, done)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.deliver(done)
}

// deliver starts the completion task of an exit no task took.
func (c *completions) deliver(done shell.Completion) {
	c.mu.Lock()
	sh, start, stderr := c.shell, c.start, c.stderr
	c.mu.Unlock()
	if sh == nil || start == nil {
		return
	}
	// Deliver first: exactly one of this and background-command carries
	// the exit, and shell_completed says which.
	if ok, err := sh.Deliver(done.WorkID, shell.ViaCompletionTask); err != nil || !ok {
		return
	}
	if err := start(completionText(done)); err != nil && stderr != nil {
		fmt.Fprintf(stderr, "mur: %s exited (exit code %d) but no completion task carries it: %v; its output is in %s\n", done.WorkID, done.ExitCode, err, done.LogPath)
	}
}

// completionText is the completion task's message: the work id, the exit
// code and the log's path, as spec 004 lists them.
func completionText(done shell.Completion) string {
	return fmt.Sprintf("A shell command that moved to the background has exited.\nWork id: %s\nCommand: %s %s\nExit code: %d\nStatus: %s\nLog: %s\n",
		done.WorkID, done.Binary, done.Command, done.ExitCode, done.Status, done.LogPath)
}

// stamp is the session's event sink as the agent loop sees it: each
// task_end gains running_commands when background commands outlive the
// task (spec 004).
func (c *completions) stamp(next event.Sink) event.Sink {
	return event.SinkFunc(func(e event.Event) {
		switch e.Type {
		case "task_start":
			c.mu.Lock()
			c.running++
			c.mu.Unlock()
		case "task_end":
			e = c.stampEnd(e)
		}
		next.Emit(e)
		if e.Type == "task_end" {
			c.taskEnded()
		}
	})
}

// taskEnded hands the exits that came during the task, and that its model
// did not take, to completion tasks.
func (c *completions) taskEnded() {
	c.mu.Lock()
	if c.running > 0 {
		c.running--
	}
	var due []shell.Completion
	if c.running == 0 {
		due, c.pending = c.pending, nil
	}
	c.mu.Unlock()
	for _, done := range due {
		c.deliver(done)
	}
}

func (c *completions) stampEnd(e event.Event) event.Event {
	c.mu.Lock()
	sh := c.shell
	c.mu.Unlock()
	if sh == nil {
		return e
	}
	ids := sh.Running()
	if len(ids) == 0 {
		return e
	}
	f := make(map[string]any, len(e.Fields)+1)
	maps.Copy(f, e.Fields)
	f["running_commands"] = ids
	e.Fields = f
	if id, _ := f["task_id"].(string); id != "" {
		c.mu.Lock()
		if c.ended == nil {
			c.ended = map[string][]string{}
		}
		c.ended[id] = ids
		c.mu.Unlock()
	}
	return e
}

// endedWith returns (and forgets) the running_commands of a task's
// task_end.
func (c *completions) endedWith(taskID string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := c.ended[taskID]
	delete(c.ended, taskID)
	return ids
}

// Record writes the line the door asks for about a task it settled
// without running it (a2a_task_received, task_rejected, task_canceled).
func (b doorBackend) Record(kind door.RecordKind, t door.Task) {
	f := map[string]any{"task_id": t.ID, "origin": string(doorOrigin(t.Origin))}
	if t.ContextID != "" {
		f["context_id"] = t.ContextID
	}
	if t.Caller != "" {
		f["caller"] = t.Caller
	}
	b.s.events.Emit(event.Event{Type: string(kind), Fields: f})
}

// doorOrigin maps the door's origin claim onto the task's origin: no claim
// is a door client's task.
func doorOrigin(o door.Origin) Origin {
	switch o {
	case door.OriginPeer:
		return OriginPeer
	case door.OriginCompletion:
		return OriginCompletion
	}
	return OriginDoor
}

// progress turns a task's live text into the door's working statuses.
type progress struct {
	updates door.Updates
	mu      sync.Mutex
	text    strings.Builder
}

// Emit implements event.Sink.
func (p *progress) Emit(e event.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Type {
	case event.TextDelta:
		s, _ := e.Fields["text"].(string)
		p.text.WriteString(s)
	case event.TextEnd:
		if p.text.Len() > 0 {
			p.updates.Progress(p.text.String())
			p.text.Reset()
		}
	}
}

// taskInput is the session's murmur:task/task request-input: it asks the
// caller of the door task in progress, which puts that task in
// TASK_STATE_INPUT_REQUIRED until a follow-up SendMessage brings the reply
// (or lifecycle.input_timeout_secs passes). Outside a door task there is
// nobody to ask.
type taskInput struct {
	mu      sync.Mutex
	current door.Updates
}

func (t *taskInput) set(u door.Updates) {
	t.mu.Lock()
	t.current = u
	t.mu.Unlock()
}

// RequestInput implements component.InputRequester.
func (t *taskInput) RequestInput(ctx context.Context, prompt string) (string, error) {
	t.mu.Lock()
	u := t.current
	t.mu.Unlock()
	if u == nil {
		return "", fmt.Errorf("%w: it is only available while the capsule runs an A2A task", component.ErrNotAvailable)
	}
	return u.RequestInput(ctx, prompt)
}

// peerSender serves murmur:message/send for the capsule's components: a
// door.Sender limited to the capsule's capabilities.network.allow.
func peerSender(c *manifest.Capsule) messageSender {
	var allow []string
	if c != nil && c.Capabilities != nil && c.Capabilities.Network != nil {
		allow = c.Capabilities.Network.Allow
	}
	return messageSender{&door.Sender{Allow: allow}}
}

// peerSender is the session's murmur:message/send: its messages carry the
// W3C traceparent of the task in progress (its open turn while the turn's
// tool calls run), so the peer's task joins this trace (spec 000: "the
// host injects a W3C traceparent header on the outgoing request"). Tasks
// run one at a time, so the task in progress is the caller's.
func (l *launcher) peerSender() component.MessageSender {
	m := peerSender(l.c)
	m.s.Traceparent = func(context.Context) string { return otel.Traceparent(l.text.task()) }
	return m
}

// task is the id of the task in progress, "" between tasks.
func (s *textSource) task() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taskID
}

type messageSender struct{ s *door.Sender }

// Send implements component.MessageSender.
func (m messageSender) Send(ctx context.Context, peerURL string, msg component.PeerMessage) (component.PeerTaskResult, error) {
	contextID := ""
	if msg.ContextID != nil {
		contextID = *msg.ContextID
	}
	r, err := m.s.Send(ctx, peerURL, door.PeerMessage{MessageID: msg.MessageID, ContextID: contextID, Text: msg.Text})
	if err != nil {
		return component.PeerTaskResult{}, err
	}
	return component.PeerTaskResult{TaskID: r.TaskID, ContextID: r.ContextID, State: r.State}, nil
}
