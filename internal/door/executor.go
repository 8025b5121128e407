package door

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/murmur/mur/internal/lifecycle"
)

// Status messages the door writes on tasks it settles itself.
const (
	msgBusy      = "task rejected: capsule is busy"
	msgQueueFull = "task rejected: the queue is full (lifecycle.queue_depth)"
	msgClosed    = "task rejected: the session has stopped taking work"
)

// executor is the a2asrv.AgentExecutor of the door: it admits a task through
// the lifecycle queue and forwards the events of its run. A run outlives
// the SDK's executions: a task that asks for input ends one execution, and
// the follow-up SendMessage starts the next on the same run.
type executor struct {
	d *Door
}

var _ a2asrv.AgentExecutor = executor{}

// run is one admitted task, from admission to its end.
type run struct {
	d      *Door
	task   Task
	info   a2a.TaskInfo
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the run has ended

	mu           sync.Mutex
	events       chan a2a.Event // to the attached execution
	attached     bool           // an SDK execution is forwarding events
	closed       bool           // events is closed
	reply        chan string    // non-nil while waiting for input
	doorCanceled bool           // CancelTask answered CANCELED for it
	timedOut     bool           // a request-input wait ran out
}

// eventBuffer holds a run's events while its execution forwards them. A
// progress update is dropped rather than taking one of the last
// reservedEvents places, which state changes keep.
const (
	eventBuffer    = 64
	reservedEvents = 8
)

func textOf(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var parts []string
	for _, p := range m.Parts {
		if t := p.Text(); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

func agentMessage(info a2a.TaskInfo, text string) *a2a.Message {
	if text == "" {
		return nil
	}
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, info, a2a.NewTextPart(text))
}

func (x executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask != nil {
			x.resume(ctx, ec, yield)
			return
		}
		x.start(ctx, ec, yield)
	}
}

// start admits a new task or rejects it.
func (x executor) start(ctx context.Context, ec *a2asrv.ExecutorContext, yield func(a2a.Event, error) bool) {
	d := x.d
	c, _ := callerFrom(ctx)
	info := ec.TaskInfo()
	imgs, err := messageImages(ec.Message, d.cfg.Images, d.cfg.TextOnly)
	if err != nil {
		// Refused before admission: the message never becomes a task.
		yield(nil, err)
		return
	}
	task := Task{ID: string(info.TaskID), ContextID: info.ContextID, Text: textOf(ec.Message), Images: imgs, Origin: c.origin, Caller: c.name,
		Traceparent: c.traceparent, Tracestate: c.tracestate}
	submitted := a2a.NewSubmittedTask(ec, ec.Message)

	switch adm := d.queue.Offer(task.ID); adm {
	case lifecycle.Admitted:
	case lifecycle.NotAccepted:
		// The HTTP layer answers task_acceptance: none before the SDK; a
		// request reaching here another way gets the same code.
		yield(nil, a2a.ErrMethodNotFound)
		return
	default:
		msg := msgClosed
		if adm == lifecycle.Busy {
			msg = msgBusy
			if d.queue.Policy().Acceptance == lifecycle.AcceptQueue {
				msg = msgQueueFull
			}
		}
		now := time.Now().UTC()
		submitted.Status = a2a.TaskStatus{State: a2a.TaskStateRejected, Message: agentMessage(info, msg), Timestamp: &now}
		d.publish(submitted)
		yield(submitted, nil)
		return
	}

	r := d.newRun(task, info)
	d.backend.Record(RecordTaskReceived, task)
	r.attach()
	d.publish(submitted)
	if !yield(submitted, nil) {
		r.detach()
		go r.main()
		return
	}
	go r.main()
	r.forward(ctx, yield)
}

// resume delivers a follow-up message to a task waiting for input.
func (x executor) resume(ctx context.Context, ec *a2asrv.ExecutorContext, yield func(a2a.Event, error) bool) {
	r := x.d.lookup(string(ec.TaskID))
	if r == nil {
		yield(nil, fmt.Errorf("task %s is not running on this door: %w", ec.TaskID, a2a.ErrInvalidParams))
		return
	}
	r.mu.Lock()
	if r.reply == nil || r.closed {
		r.mu.Unlock()
		yield(nil, fmt.Errorf("task %s is not waiting for input: %w", ec.TaskID, a2a.ErrInvalidParams))
		return
	}
	r.attached = true
	r.reply <- textOf(ec.Message)
	r.reply = nil
	r.mu.Unlock()
	working := a2a.NewStatusUpdateEvent(r.info, a2a.TaskStateWorking, nil)
	x.d.publish(working)
	if !yield(working, nil) {
		r.detach()
		return
	}
	r.forward(ctx, yield)
}

func (x executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		r := x.d.lookup(string(ec.TaskID))
		if r == nil {
			yield(nil, fmt.Errorf("task %s: %w", ec.TaskID, a2a.ErrTaskNotCancelable))
			return
		}
		if !r.cancelRun(ctx) {
			yield(nil, fmt.Errorf("task %s: %w", ec.TaskID, a2a.ErrTaskNotCancelable))
			return
		}
		ev := a2a.NewStatusUpdateEvent(r.info, a2a.TaskStateCanceled, nil)
		x.d.publish(ev)
		yield(ev, nil)
	}
}

// cancelRun cancels a queued or running task and waits for it to stop. It
// reports false when the task had already ended.
func (r *run) cancelRun(ctx context.Context) bool {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return false
	}
	r.doorCanceled = true
	r.mu.Unlock()
	if r.d.queue.Cancel(r.task.ID) {
		// Cancelled while still queued: never started, never REJECTED.
		r.d.backend.Record(RecordTaskCanceled, r.task)
	}
	r.cancel()
	select {
	case <-r.done:
	case <-ctx.Done():
	}
	return true
}

func (d *Door) newRun(task Task, info a2a.TaskInfo) *run {
	ctx, cancel := context.WithCancel(d.base)
	r := &run{d: d, task: task, info: info, ctx: ctx, cancel: cancel, done: make(chan struct{}), events: make(chan a2a.Event, eventBuffer)}
	d.mu.Lock()
	d.runs[task.ID] = r
	d.mu.Unlock()
	d.wg.Add(1)
	return r
}

func (d *Door) lookup(id string) *run {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.runs[id]
}

// main waits for the task's turn, runs it, and reports its end.
func (r *run) main() {
	d := r.d
	defer d.wg.Done()
	defer r.cancel()
	defer r.finish()
	err := d.queue.Wait(r.ctx, r.task.ID)
	switch {
	case errors.Is(err, lifecycle.ErrRejected):
		d.backend.Record(RecordTaskRejected, r.task)
		r.emitStatus(a2a.TaskStateRejected, lifecycle.ErrRejected.Error())
		return
	case err != nil:
		return // cancelled while queued: CancelTask answered for it
	}
	r.emitStatus(a2a.TaskStateWorking, "")
	out := d.backend.RunTask(r.ctx, r.task, r)
	r.mu.Lock()
	skip, timedOut := r.doorCanceled, r.timedOut
	r.mu.Unlock()
	if timedOut && out.State != Canceled {
		out = Outcome{State: Failed, Text: ErrInputTimeout.Error()}
	}
	if !skip {
		meta := resultMetadata(out)
		switch out.State {
		case Completed:
			if out.Text != "" {
				r.emit(a2a.NewArtifactEvent(r.info, a2a.NewTextPart(out.Text)), true)
			}
			r.emitEnd(a2a.TaskStateCompleted, out.Text, meta)
		case Canceled:
			r.emitEnd(a2a.TaskStateCanceled, out.Text, meta)
		default:
			r.emitEnd(a2a.TaskStateFailed, out.Text, meta)
		}
	}
	d.queue.Done(r.task.ID)
}

// MetaMurmur is the key of mur's own entries in a task's metadata.
const MetaMurmur = "murmur"

// resultMetadata is what a task's final status carries beside its state:
// metadata.murmur.runningCommands when background commands outlive it.
func resultMetadata(out Outcome) map[string]any {
	if len(out.RunningCommands) == 0 {
		return nil
	}
	return map[string]any{MetaMurmur: map[string]any{"runningCommands": out.RunningCommands}}
}

func (r *run) finish() {
	r.mu.Lock()
	r.closed = true
	close(r.events)
	r.mu.Unlock()
	close(r.done)
	// An ended run has nothing left to resume or cancel; the store keeps
	// the task.
	r.d.mu.Lock()
	delete(r.d.runs, r.task.ID)
	r.d.mu.Unlock()
}

func (r *run) emitStatus(state a2a.TaskState, text string) { r.emitEnd(state, text, nil) }

// emitEnd is emitStatus with metadata the SDK copies onto the task.
func (r *run) emitEnd(state a2a.TaskState, text string, meta map[string]any) {
	ev := a2a.NewStatusUpdateEvent(r.info, state, agentMessage(r.info, text))
	now := time.Now().UTC()
	ev.Status.Timestamp = &now
	ev.Metadata = meta
	r.emit(ev, true)
}

// emit hands ev to the attached execution, or, with none attached (the
// task waits for input or its caller is gone), writes its status straight
// to the store so GetTask still tells the truth.
func (r *run) emit(ev a2a.Event, essential bool) {
	r.d.publish(ev)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if r.attached {
		if !essential && len(r.events) >= eventBuffer-reservedEvents {
			return
		}
		select {
		case r.events <- ev:
			return
		default:
		}
	}
	if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
		_ = r.d.store.setStatus(r.info.TaskID, su.Status, su.Metadata)
	}
}

func (r *run) attach() {
	r.mu.Lock()
	r.attached = true
	r.mu.Unlock()
}

func (r *run) detach() {
	r.mu.Lock()
	r.attached = false
	// Whatever the execution did not forward still belongs in the store.
	for {
		select {
		case ev, ok := <-r.events:
			if !ok {
				r.mu.Unlock()
				return
			}
			if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
				_ = r.d.store.setStatus(r.info.TaskID, su.Status, su.Metadata)
			}
			continue
		default:
		}
		break
	}
	r.mu.Unlock()
}

// forward yields the run's events to one SDK execution until the task ends,
// asks for input, or the execution goes away.
func (r *run) forward(ctx context.Context, yield func(a2a.Event, error) bool) {
	for {
		select {
		case ev, ok := <-r.events:
			if !ok {
				r.detach()
				return
			}
			if !yield(ev, nil) {
				r.detach()
				return
			}
			if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && (su.Status.State.Terminal() || su.Status.State == a2a.TaskStateInputRequired) {
				r.detach()
				return
			}
		case <-ctx.Done():
			r.detach()
			return
		}
	}
}

// Progress implements Updates.
func (r *run) Progress(text string) {
	r.emit(a2a.NewStatusUpdateEvent(r.info, a2a.TaskStateWorking, agentMessage(r.info, text)), false)
}

// RequestInput implements Updates.
func (r *run) RequestInput(ctx context.Context, prompt string) (string, error) {
	reply := make(chan string, 1)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return "", context.Canceled
	}
	r.reply = reply
	r.mu.Unlock()
	r.emitStatus(a2a.TaskStateInputRequired, prompt)

	var timeout <-chan time.Time
	if t := r.d.queue.Policy().InputTimeout; t > 0 {
		timer := time.NewTimer(t)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case text := <-reply:
		return text, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-timeout:
		r.mu.Lock()
		defer r.mu.Unlock()
		select {
		case text := <-reply: // the reply won the race
			return text, nil
		default:
		}
		r.reply = nil
		r.timedOut = true
		return "", ErrInputTimeout
	}
}
