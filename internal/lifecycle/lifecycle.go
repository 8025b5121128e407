// Package lifecycle decides which tasks a capsule session takes and when the
// session ends: spec 004 "Lifecycle" (task_acceptance none / single / queue,
// after_task exit / sleep, queue_depth, tasks queued when the session ends,
// the idle timeout and MURMUR_A2A_TIMEOUT_SECS).
//
// A Queue is admission plus a turn: the door offers each incoming task, the
// queue answers at once whether it is admitted, and an admitted task waits
// for its turn. The queue never runs a task itself, so it knows nothing of
// A2A, the agent loop or the trace.
//
// Under queue + sleep a background command's completion task (spec 004
// lifecycle.shell_grace_secs, "a task with origin completion in the bg
// lane") joins through Background: the bg lane holds no place of
// queue_depth, and turns go in admission order across both lanes.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/murmur/mur/internal/manifest"
)

// Acceptance is lifecycle.task_acceptance.
type Acceptance string

// The task_acceptance values.
const (
	AcceptNone   Acceptance = "none"
	AcceptSingle Acceptance = "single"
	AcceptQueue  Acceptance = "queue"
)

// AfterTask is lifecycle.after_task.
type AfterTask string

// The after_task values.
const (
	AfterExit  AfterTask = "exit"
	AfterSleep AfterTask = "sleep"
)

// DefaultIdleTimeout is how long a launch given no task waits for one
// (spec 004 "Idle timeout").
const DefaultIdleTimeout = 30 * time.Second

// IdleTimeoutEnv overrides DefaultIdleTimeout, in seconds.
const IdleTimeoutEnv = "MURMUR_A2A_TIMEOUT_SECS"

// Policy is the resolved lifecycle of one session.
type Policy struct {
	Acceptance Acceptance
	AfterTask  AfterTask
	// QueueDepth is how many admitted, not-yet-started tasks the queue holds
	// under AcceptQueue.
	QueueDepth int
	// IdleTimeout is how long a launch given no task of its own waits for
	// the first one. Zero waits indefinitely.
	IdleTimeout time.Duration
	// InputTimeout bounds a request-input wait; zero waits indefinitely.
	InputTimeout time.Duration
}

// Sleeps reports whether the session outlives its tasks: queue with sleep is
// the only lifecycle that keeps taking work after a task ends.
func (p Policy) Sleeps() bool {
	return p.Acceptance == AcceptQueue && p.AfterTask == AfterSleep
}

// Resolve turns the effective manifest's lifecycle block (defaults already
// applied by the manifest engine) and the process environment into a
// Policy. getenv is os.Getenv outside tests.
func Resolve(l *manifest.Lifecycle, getenv func(string) string) (Policy, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	p := Policy{Acceptance: AcceptSingle, AfterTask: AfterExit, QueueDepth: manifest.DefaultQueueDepth}
	if l != nil {
		if l.TaskAcceptance != "" {
			p.Acceptance = Acceptance(l.TaskAcceptance)
		}
		if l.AfterTask != "" {
			p.AfterTask = AfterTask(l.AfterTask)
		}
		if l.QueueDepth != nil {
			p.QueueDepth = int(*l.QueueDepth)
		}
		if l.InputTimeoutSecs != nil {
			p.InputTimeout = time.Duration(*l.InputTimeoutSecs) * time.Second
		}
	}
	switch p.Acceptance {
	case AcceptNone, AcceptSingle, AcceptQueue:
	default:
		return Policy{}, fmt.Errorf("lifecycle.task_acceptance %q: want none, single or queue", p.Acceptance)
	}
	switch p.AfterTask {
	case AfterExit, AfterSleep:
	default:
		return Policy{}, fmt.Errorf("lifecycle.after_task %q: want exit or sleep", p.AfterTask)
	}
	if p.Acceptance == AcceptQueue && p.QueueDepth < 1 {
		return Policy{}, fmt.Errorf("lifecycle.queue_depth %d: must be at least 1 under task_acceptance: queue", p.QueueDepth)
	}
	if !p.Sleeps() {
		p.IdleTimeout = DefaultIdleTimeout
		if v := getenv(IdleTimeoutEnv); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return Policy{}, fmt.Errorf("%s=%q: want a whole number of seconds", IdleTimeoutEnv, v)
			}
			p.IdleTimeout = time.Duration(n) * time.Second
		}
	}
	return p, nil
}

// Admission is the queue's answer to an offered task.
type Admission int

// The answers Offer gives.
const (
	// Admitted: the task holds a place and will get its turn, unless it is
	// cancelled or the session stops taking work first.
	Admitted Admission = iota
	// Busy: single already has its task, or the queue is full.
	Busy
	// Closed: the session has stopped taking work.
	Closed
	// NotAccepted: task_acceptance: none takes no task from the door, and
	// only queue + sleep takes a completion task.
	NotAccepted
)

// String names the admission for messages and tests.
func (a Admission) String() string {
	switch a {
	case Admitted:
		return "admitted"
	case Busy:
		return "busy"
	case Closed:
		return "closed"
	case NotAccepted:
		return "not accepted"
	}
	return fmt.Sprintf("Admission(%d)", int(a))
}

// Errors Wait returns for an admitted task that never gets its turn.
var (
	// ErrRejected: the session stopped taking work before the task started
	// (spec 004 "Tasks queued when the session ends").
	ErrRejected = errors.New("task rejected: the session stopped taking work before it started")
	// ErrCanceled: the task was cancelled while still queued.
	ErrCanceled = errors.New("task canceled while queued")
	// ErrUnknown: no admitted task has this id.
	ErrUnknown = errors.New("no such task in the queue")
)

// Queue is one session's admission and turn order. Its zero value is not
// usable; call New.
type Queue struct {
	policy Policy

	mu       sync.Mutex
	running  string            // the task whose turn it is, "" for none
	pending  []*entry          // admitted, not started, in order
	waiting  map[string]*entry // every admitted task not yet told its fate
	taken    int               // tasks that got a turn
	closed   bool              // stopped taking work
	ended    chan struct{}     // closed when the session should end
	endOnce  sync.Once
	idle     *time.Timer
	anyTaken bool
}

type entry struct {
	id   string
	turn chan error // one value: nil (your turn), ErrRejected or ErrCanceled
	bg   bool       // in the bg lane: holds no place of queue_depth
}

// pendingDoor counts the pending tasks that hold a place. q.mu is held.
func (q *Queue) pendingDoor() int {
	n := 0
	for _, e := range q.pending {
		if !e.bg {
			n++
		}
	}
	return n
}

// New returns the queue of a session that follows p. launchTask says the
// launch brought its own task (--task, task.md, input.txt): that task is
// admitted first by Launch, and no idle timer runs. Under none a launch
// without a task has ended already.
func New(p Policy, launchTask bool) *Queue {
	q := &Queue{policy: p, waiting: map[string]*entry{}, ended: make(chan struct{})}
	if !launchTask && p.Acceptance == AcceptNone {
		// none takes no task from the door, so with none of its own there
		// is nothing to wait for: the session ends at once.
		q.closed = true
		q.endOnce.Do(func() { close(q.ended) })
		return q
	}
	if !launchTask && !p.Sleeps() && p.IdleTimeout > 0 {
		// Under the lock: a short timeout can fire before the assignment.
		q.mu.Lock()
		q.idle = time.AfterFunc(p.IdleTimeout, q.idleFired)
		q.mu.Unlock()
	}
	return q
}

// Policy returns the policy the queue follows.
func (q *Queue) Policy() Policy { return q.policy }

// Ended is closed when the session should end: after its task under every
// lifecycle but queue + sleep, when the idle timeout fires with no task, or
// after Stop once the running task has finished.
func (q *Queue) Ended() <-chan struct{} { return q.ended }

// Launch admits the launch's own task, whatever task_acceptance says.
func (q *Queue) Launch(id string) Admission {
	return q.offer(id, laneLaunch)
}

// Offer asks the queue to admit a task that arrived at the door. The answer
// is final: an Admitted task then calls Wait for its turn.
func (q *Queue) Offer(id string) Admission {
	return q.offer(id, laneDoor)
}

// Background admits a background command's completion task to the bg lane
// (spec 004: only under queue + sleep; every other lifecycle answers
// NotAccepted, and a stopped session Closed). It never waits for a place.
func (q *Queue) Background(id string) Admission {
	if !q.policy.Sleeps() {
		return NotAccepted
	}
	return q.offer(id, laneBackground)
}

// lane is where an admitted task came from.
type lane uint8

const (
	laneDoor lane = iota
	laneLaunch
	laneBackground
)

func (q *Queue) offer(id string, from lane) Admission {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return Closed
	}
	if from == laneDoor {
		switch q.policy.Acceptance {
		case AcceptNone:
			return NotAccepted
		case AcceptSingle:
			if q.running != "" || len(q.pending) > 0 || q.anyTaken {
				return Busy
			}
		case AcceptQueue:
			// The running task holds no place: queue_depth counts pending,
			// not-yet-started door tasks only.
			if q.running != "" && q.pendingDoor() >= q.policy.QueueDepth {
				return Busy
			}
		}
	}
	if _, dup := q.waiting[id]; dup || id == q.running {
		return Busy
	}
	if q.idle != nil {
		q.idle.Stop()
		q.idle = nil
	}
	e := &entry{id: id, turn: make(chan error, 1), bg: from == laneBackground}
	q.waiting[id] = e
	if q.running == "" {
		// A free slot is taken at once, so how many tasks a burst admits
		// never depends on how fast a worker wakes up.
		q.start(e)
	} else {
		q.pending = append(q.pending, e)
	}
	return Admitted
}

// start hands e its turn. q.mu is held.
func (q *Queue) start(e *entry) {
	q.running = e.id
	q.taken++
	q.anyTaken = true
	e.turn <- nil
}

// Wait blocks until the admitted task id gets its turn (nil), is rejected
// because the session stopped taking work (ErrRejected), or is cancelled
// while queued (ErrCanceled). A task that gets its turn must call Done when
// it ends. ctx ending returns ctx.Err() and gives up the task's place.
func (q *Queue) Wait(ctx context.Context, id string) error {
	q.mu.Lock()
	e, ok := q.waiting[id]
	q.mu.Unlock()
	if !ok {
		return fmt.Errorf("task %q: %w", id, ErrUnknown)
	}
	select {
	case err := <-e.turn:
		q.mu.Lock()
		delete(q.waiting, id)
		q.mu.Unlock()
		return err
	case <-ctx.Done():
		q.mu.Lock()
		defer q.mu.Unlock()
		delete(q.waiting, id)
		// A verdict sent under the lock before ctx ended wins: Stop cancels
		// every task's context right after rejecting the queued ones, and
		// select picks between two ready cases at random, so without this a
		// rejected task would sometimes end as merely cancelled.
		select {
		case err := <-e.turn:
			if err != nil {
				return err
			}
		default:
		}
		if q.running == id {
			q.finishLocked()
		} else {
			q.removePending(id)
		}
		return ctx.Err()
	}
}

// Cancel takes a task that is still queued out of the queue; its Wait
// returns ErrCanceled. It reports false when the task is not queued (it is
// running, finished, or unknown): cancelling a running task is the caller's
// business, through the task's context.
func (q *Queue) Cancel(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	e := q.removePending(id)
	if e == nil {
		return false
	}
	e.turn <- ErrCanceled
	return true
}

func (q *Queue) removePending(id string) *entry {
	for i, e := range q.pending {
		if e.id == id {
			q.pending = append(q.pending[:i], q.pending[i+1:]...)
			return e
		}
	}
	return nil
}

// Done ends the running task's turn. Under queue + sleep the next pending
// task gets its turn; under every other lifecycle the session stops taking
// work, every pending task is rejected, and Ended closes.
func (q *Queue) Done(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running != id {
		return
	}
	q.finishLocked()
}

func (q *Queue) finishLocked() {
	q.running = ""
	if !q.policy.Sleeps() {
		q.closeLocked()
	}
	if q.closed {
		q.endOnce.Do(func() { close(q.ended) })
		return
	}
	if len(q.pending) > 0 {
		e := q.pending[0]
		q.pending = q.pending[1:]
		q.start(e)
	}
}

// Stop makes the session stop taking work now (SIGTERM, StopSession): every
// pending task is rejected, later offers are Closed, and Ended closes as
// soon as no task is running. It returns the ids it rejected.
func (q *Queue) Stop() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	rejected := q.closeLocked()
	if q.running == "" {
		q.endOnce.Do(func() { close(q.ended) })
	}
	return rejected
}

// closeLocked stops taking work and rejects every pending task.
func (q *Queue) closeLocked() []string {
	q.closed = true
	if q.idle != nil {
		q.idle.Stop()
		q.idle = nil
	}
	var ids []string
	for _, e := range q.pending {
		e.turn <- ErrRejected
		ids = append(ids, e.id)
	}
	q.pending = nil
	return ids
}

func (q *Queue) idleFired() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.idle == nil || q.running != "" || q.anyTaken {
		return
	}
	q.idle = nil
	q.closed = true
	q.endOnce.Do(func() { close(q.ended) })
}

// Running returns the id of the task whose turn it is, or "".
func (q *Queue) Running() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running
}

// Pending returns the ids of the admitted tasks still waiting, in order.
func (q *Queue) Pending() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	ids := make([]string, len(q.pending))
	for i, e := range q.pending {
		ids[i] = e.id
	}
	return ids
}

// Taken returns how many tasks got a turn.
func (q *Queue) Taken() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.taken
}
