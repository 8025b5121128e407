package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/murmur/mur/internal/manifest"
)

func i64(v int64) *int64 { return &v }

func TestResolve(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name string
		in   *manifest.Lifecycle
		env  map[string]string
		want Policy
		err  string
	}{
		{name: "absent block is single exit", want: Policy{Acceptance: AcceptSingle, AfterTask: AfterExit, QueueDepth: 1, IdleTimeout: 30 * time.Second}},
		{name: "queue sleep waits indefinitely", in: &manifest.Lifecycle{TaskAcceptance: "queue", AfterTask: "sleep", QueueDepth: i64(2)},
			env:  map[string]string{IdleTimeoutEnv: "5"},
			want: Policy{Acceptance: AcceptQueue, AfterTask: AfterSleep, QueueDepth: 2}},
		{name: "env sets the idle window", in: &manifest.Lifecycle{TaskAcceptance: "queue", AfterTask: "exit"},
			env:  map[string]string{IdleTimeoutEnv: "7"},
			want: Policy{Acceptance: AcceptQueue, AfterTask: AfterExit, QueueDepth: 1, IdleTimeout: 7 * time.Second}},
		{name: "input timeout", in: &manifest.Lifecycle{InputTimeoutSecs: i64(60)},
			want: Policy{Acceptance: AcceptSingle, AfterTask: AfterExit, QueueDepth: 1, IdleTimeout: 30 * time.Second, InputTimeout: time.Minute}},
		{name: "bad env", env: map[string]string{IdleTimeoutEnv: "soon"}, err: "MURMUR_A2A_TIMEOUT_SECS"},
		{name: "queue depth zero", in: &manifest.Lifecycle{TaskAcceptance: "queue", QueueDepth: i64(0)}, err: "queue_depth"},
		{name: "unknown acceptance", in: &manifest.Lifecycle{TaskAcceptance: "many"}, err: "task_acceptance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.in, env(tc.env))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func isEnded(q *Queue) bool {
	select {
	case <-q.Ended():
		return true
	default:
		return false
	}
}

func TestSingle(t *testing.T) {
	q := New(Policy{Acceptance: AcceptSingle, AfterTask: AfterExit, QueueDepth: 1}, false)
	if a := q.Offer("t1"); a != Admitted {
		t.Fatalf("first offer: %v", a)
	}
	if a := q.Offer("t2"); a != Busy {
		t.Fatalf("offer while running: %v, want busy", a)
	}
	if err := q.Wait(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	q.Done("t1")
	if !isEnded(q) {
		t.Fatal("single exit did not end after its task")
	}
	if a := q.Offer("t3"); a != Closed {
		t.Fatalf("offer after the session stopped taking work: %v, want closed", a)
	}
}

func TestSingleSleepBehavesLikeExit(t *testing.T) {
	q := New(Policy{Acceptance: AcceptSingle, AfterTask: AfterSleep, QueueDepth: 1}, false)
	q.Offer("t1")
	q.Done("t1")
	if !isEnded(q) {
		t.Fatal("single sleep did not end after its task")
	}
}

func TestSingleLaunchTaskMakesTheDoorBusy(t *testing.T) {
	q := New(Policy{Acceptance: AcceptSingle, AfterTask: AfterExit, QueueDepth: 1}, true)
	if a := q.Launch("launch"); a != Admitted {
		t.Fatal(a)
	}
	if a := q.Offer("door"); a != Busy {
		t.Fatalf("door task during the launch's own task: %v, want busy", a)
	}
}

func TestNone(t *testing.T) {
	q := New(Policy{Acceptance: AcceptNone, AfterTask: AfterExit, QueueDepth: 1}, true)
	if a := q.Offer("door"); a != NotAccepted {
		t.Fatalf("none took a door task: %v", a)
	}
	if a := q.Launch("launch"); a != Admitted {
		t.Fatalf("none refused its launch task: %v", a)
	}
	q.Done("launch")
	if !isEnded(q) {
		t.Fatal("none did not end after the launch task")
	}
}

func TestNoneWithoutLaunchTaskEndsAtOnce(t *testing.T) {
	q := New(Policy{Acceptance: AcceptNone, AfterTask: AfterExit, QueueDepth: 1, IdleTimeout: time.Hour}, false)
	if !isEnded(q) {
		t.Fatal("none without a launch task waits for a task the door cannot take")
	}
}

func TestQueueDepth(t *testing.T) {
	q := New(Policy{Acceptance: AcceptQueue, AfterTask: AfterSleep, QueueDepth: 2}, false)
	var got []Admission
	for i := range 5 {
		got = append(got, q.Offer(fmt.Sprint("t", i)))
	}
	want := []Admission{Admitted, Admitted, Admitted, Busy, Busy}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("admissions %v, want %v (one running + queue_depth pending)", got, want)
	}
	if err := q.Wait(context.Background(), "t0"); err != nil {
		t.Fatal(err)
	}
	q.Done("t0")
	// The pending queue dropped below queue_depth: a new task is accepted.
	if a := q.Offer("t5"); a != Admitted {
		t.Fatalf("offer after a slot freed: %v", a)
	}
	if err := q.Wait(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	if isEnded(q) {
		t.Fatal("queue sleep ended after a task")
	}
}

func TestQueueExitRejectsQueuedTasks(t *testing.T) {
	q := New(Policy{Acceptance: AcceptQueue, AfterTask: AfterExit, QueueDepth: 2}, false)
	q.Offer("t0")
	q.Offer("t1")
	q.Offer("t2")
	if err := q.Wait(context.Background(), "t0"); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for _, id := range []string{"t1", "t2"} {
		go func() { errs <- q.Wait(context.Background(), id) }()
	}
	q.Done("t0")
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrRejected) {
			t.Fatalf("queued task at session end: %v, want ErrRejected", err)
		}
	}
	if !isEnded(q) || q.Taken() != 1 {
		t.Fatalf("ended=%v taken=%d, want ended after 1 task", isEnded(q), q.Taken())
	}
}

func TestCancelWhileQueuedIsNotRejected(t *testing.T) {
	q := New(Policy{Acceptance: AcceptQueue, AfterTask: AfterExit, QueueDepth: 2}, false)
	q.Offer("t0")
	q.Offer("t1")
	if q.Cancel("t0") {
		t.Fatal("Cancel took the running task out of the queue")
	}
	if !q.Cancel("t1") {
		t.Fatal("Cancel did not take the queued task")
	}
	if err := q.Wait(context.Background(), "t1"); !errors.Is(err, ErrCanceled) {
		t.Fatalf("cancelled queued task: %v, want ErrCanceled", err)
	}
	if got := q.Stop(); len(got) != 0 {
		t.Fatalf("Stop rejected %v after the only queued task was cancelled", got)
	}
}

func TestStopEndsWhenTheRunningTaskEnds(t *testing.T) {
	q := New(Policy{Acceptance: AcceptQueue, AfterTask: AfterSleep, QueueDepth: 3}, false)
	q.Offer("t0")
	q.Offer("t1")
	q.Offer("t2")
	if got := q.Stop(); fmt.Sprint(got) != "[t1 t2]" {
		t.Fatalf("Stop rejected %v, want [t1 t2]", got)
	}
	if isEnded(q) {
		t.Fatal("ended while t0 still runs")
	}
	q.Done("t0")
	if !isEnded(q) {
		t.Fatal("not ended after the running task")
	}
}

func TestIdleTimeout(t *testing.T) {
	q := New(Policy{Acceptance: AcceptSingle, AfterTask: AfterExit, QueueDepth: 1, IdleTimeout: 20 * time.Millisecond}, false)
	select {
	case <-q.Ended():
	case <-time.After(10 * time.Second):
		t.Fatal("idle timeout never ended the session")
	}
	if a := q.Offer("late"); a != Closed {
		t.Fatalf("offer after idle end: %v", a)
	}

	q = New(Policy{Acceptance: AcceptSingle, AfterTask: AfterExit, QueueDepth: 1, IdleTimeout: 20 * time.Millisecond}, false)
	q.Offer("t0")
	time.Sleep(60 * time.Millisecond)
	if isEnded(q) {
		t.Fatal("idle timer ended a session whose task arrived in time")
	}

	q = New(Policy{Acceptance: AcceptSingle, AfterTask: AfterExit, QueueDepth: 1, IdleTimeout: 20 * time.Millisecond}, true)
	time.Sleep(60 * time.Millisecond)
	if isEnded(q) {
		t.Fatal("idle timer ran for a launch that brought its own task")
	}
}

// TestBurst offers a thousand tasks at once to a queue of depth 2 whose
// running task never ends: exactly 1 + 2 are admitted, every other one is
// refused, and each admitted task gets its turn exactly once.
func TestBurst(t *testing.T) {
	q := New(Policy{Acceptance: AcceptQueue, AfterTask: AfterSleep, QueueDepth: 2}, false)
	var admitted, busy atomic.Int64
	var wg sync.WaitGroup
	for i := range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch q.Offer(fmt.Sprint("t", i)) {
			case Admitted:
				admitted.Add(1)
			case Busy:
				busy.Add(1)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 3 || busy.Load() != 997 {
		t.Fatalf("admitted %d busy %d, want 3 and 997", admitted.Load(), busy.Load())
	}
	run := q.Running()
	pend := q.Pending()
	turns := map[string]int{run: 1}
	for _, id := range pend {
		q.Done(run)
		if err := q.Wait(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		turns[id]++
		run = id
	}
	if len(turns) != 3 {
		t.Fatalf("turns %v", turns)
	}
	for id, n := range turns {
		if n != 1 {
			t.Fatalf("task %s ran %d times", id, n)
		}
	}
}

// TestBackgroundLane: a completion task joins queue + sleep's bg lane
// without taking a place of queue_depth, gets its turn in admission order,
// is refused by every other lifecycle, and is rejected like any queued task
// when the session stops.
func TestBackgroundLane(t *testing.T) {
	ctx := context.Background()
	q := New(Policy{Acceptance: AcceptQueue, AfterTask: AfterSleep, QueueDepth: 1}, false)
	for _, id := range []string{"t1", "t2"} {
		if a := q.Offer(id); a != Admitted {
			t.Fatalf("offer %s: %v", id, a)
		}
	}
	if a := q.Background("c1"); a != Admitted {
		t.Fatalf("completion behind a full queue: %v, want admitted", a)
	}
	if a := q.Offer("t3"); a != Busy {
		t.Fatalf("door task with the queue full: %v, want busy", a)
	}
	if got := q.Pending(); strings.Join(got, ",") != "t2,c1" {
		t.Fatalf("pending = %v", got)
	}
	if err := q.Wait(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	q.Done("t1")
	if err := q.Wait(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	// The completion is still pending and holds no place: one door task
	// fits again while t2 runs.
	if a := q.Offer("t4"); a != Admitted {
		t.Fatalf("door task beside a pending completion: %v, want admitted", a)
	}
	q.Done("t2")
	if err := q.Wait(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	if a := q.Background("c2"); a != Admitted {
		t.Fatalf("second completion: %v", a)
	}
	rejected := q.Stop()
	if strings.Join(rejected, ",") != "t4,c2" {
		t.Fatalf("Stop rejected %v, want t4,c2", rejected)
	}
	if err := q.Wait(ctx, "c2"); !errors.Is(err, ErrRejected) {
		t.Fatalf("queued completion at stop: %v, want ErrRejected", err)
	}
	if a := q.Background("c3"); a != Closed {
		t.Fatalf("completion after stop: %v, want closed", a)
	}

	for _, p := range []Policy{
		{Acceptance: AcceptQueue, AfterTask: AfterExit, QueueDepth: 1},
		{Acceptance: AcceptSingle, AfterTask: AfterSleep, QueueDepth: 1},
		{Acceptance: AcceptNone, AfterTask: AfterExit, QueueDepth: 1},
	} {
		q := New(p, true)
		if a := q.Background("c"); a != NotAccepted {
			t.Errorf("%s + %s: completion %v, want not accepted", p.Acceptance, p.AfterTask, a)
		}
	}
}

// The door's Stop rejects the queued tasks and then cancels every task's
// context, so a queued task's Wait sees both at once; the rejection must
// win every time, or the task ends cancelled with no state recorded.
func TestStopRejectionWinsOverCancelledContext(t *testing.T) {
	for i := range 50 {
		q := New(Policy{Acceptance: AcceptQueue, AfterTask: AfterSleep, QueueDepth: 2}, false)
		q.Offer("t0")
		q.Offer("t1")
		if got := q.Stop(); fmt.Sprint(got) != "[t1]" {
			t.Fatalf("Stop rejected %v, want [t1]", got)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := q.Wait(ctx, "t1"); !errors.Is(err, ErrRejected) {
			t.Fatalf("round %d: queued task after Stop and cancel: %v, want ErrRejected", i, err)
		}
	}
}
