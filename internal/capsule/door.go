package capsule

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/door"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
)

// DoorBackend is the session as the door's door.Backend: every task the
// door admits runs on this session through RunTask, one at a time.
func (s *Session) DoorBackend() door.Backend { return doorBackend{s} }

type doorBackend struct{ s *Session }

// RunTask runs an admitted door task. Each model call's text is published
// as a working status once the call ends (a status per delta would flood
// the stream); the answer is the completed task's text.
func (b doorBackend) RunTask(ctx context.Context, t door.Task, u door.Updates) door.Outcome {
	task := Task{ID: t.ID, ContextID: t.ContextID, Origin: doorOrigin(t.Origin), Text: t.Text}
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
	switch o.Status {
	case agent.ExitOK:
		return door.Outcome{State: door.Completed, Text: o.Answer}
	case agent.ExitCanceled:
		return door.Outcome{State: door.Canceled, Text: o.Reason}
	}
	return door.Outcome{State: door.Failed, Text: o.Reason}
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
func peerSender(c *manifest.Capsule) component.MessageSender {
	var allow []string
	if c != nil && c.Capabilities != nil && c.Capabilities.Network != nil {
		allow = c.Capabilities.Network.Allow
	}
	return messageSender{&door.Sender{Allow: allow}}
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
