package capsule_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/capsule/capsuletest"
)

// blockingDriver answers every call once release is closed, counting the
// calls that are in flight at once.
type blockingDriver struct {
	release  chan struct{}
	started  chan struct{}
	inFlight atomic.Int32
	most     atomic.Int32
}

func (d *blockingDriver) Run(ctx context.Context, _ []byte) (agent.Result, error) {
	n := d.inFlight.Add(1)
	defer d.inFlight.Add(-1)
	if n > d.most.Load() {
		d.most.Store(n)
	}
	d.started <- struct{}{}
	select {
	case <-d.release:
	case <-ctx.Done():
		return agent.Result{}, ctx.Err()
	}
	return agent.Result{Status: agent.StatusPassed, Data: `{"text":"done","stop_reason":"end_turn"}`,
		Metadata: [][2]string{{agent.MetaInputTokens, "1"}, {agent.MetaOutputTokens, "1"}}}, nil
}

func partsSession(t *testing.T, drv agent.Driver) *capsule.Session {
	t.Helper()
	return partsSessionCtx(t, context.Background(), drv)
}

func partsSessionCtx(t *testing.T, ctx context.Context, drv agent.Driver) *capsule.Session {
	t.Helper()
	c, inst := capsuletest.Capsule(t, capsuletest.Spec{OutputCap: 100, Window: 10000})
	s, err := capsule.OpenParts(ctx, capsule.Parts{
		Capsule: c, Installed: inst,
		ManifestDir: t.TempDir(), MurmurHome: t.TempDir(), Driver: drv,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Two tasks given at once run one after the other, each under its own
// minted id; the door relies on RunTask serialising them.
func TestTasksRunOneAtATime(t *testing.T) {
	drv := &blockingDriver{release: make(chan struct{}), started: make(chan struct{}, 2)}
	s := partsSession(t, drv)
	outs := make(chan capsule.Outcome, 2)
	for _, text := range []string{"one", "two"} {
		go func() { outs <- s.RunTask(context.Background(), capsule.Task{Origin: capsule.OriginDoor, Text: text}) }()
	}
	<-drv.started
	select {
	case <-drv.started:
		t.Fatal("a second task reached the model while the first was running")
	case <-time.After(200 * time.Millisecond):
	}
	close(drv.release)
	a, b := <-outs, <-outs
	if a.Status != agent.ExitOK || b.Status != agent.ExitOK || a.TaskID == b.TaskID || !strings.HasPrefix(b.TaskID, "tsk_") {
		t.Fatalf("outcomes %+v / %+v", a, b)
	}
	if drv.most.Load() != 1 {
		t.Fatalf("%d model calls were in flight at once", drv.most.Load())
	}
	if err := s.Close(b); err != nil {
		t.Fatal(err)
	}
}

// Canceling a task's context cancels that task, not the session: the next
// task runs.
func TestCancelEndsOnlyThatTask(t *testing.T) {
	drv := &blockingDriver{release: make(chan struct{}), started: make(chan struct{}, 2)}
	s := partsSession(t, drv)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-drv.started
		cancel()
	}()
	if o := s.RunTask(ctx, capsule.Task{Text: "one"}); o.Status != agent.ExitCanceled {
		t.Fatalf("canceled task ended %+v", o)
	}
	close(drv.release)
	go func() { <-drv.started }()
	o := s.RunTask(context.Background(), capsule.Task{Text: "two"})
	if o.Status != agent.ExitOK {
		t.Fatalf("the next task ended %+v", o)
	}
	if err := s.Close(o); err != nil {
		t.Fatal(err)
	}
	if capsule.ExitStatus(o) != capsule.ExitOK {
		t.Fatal("exit status")
	}
}

// Once the session's context has ended, a task that gets its turn is not
// started: no model call, no task_start or task_end.
func TestEndingSessionStartsNoTask(t *testing.T) {
	drv := &blockingDriver{release: make(chan struct{}), started: make(chan struct{}, 1)}
	ctx, end := context.WithCancel(context.Background())
	s := partsSessionCtx(t, ctx, drv)
	var seen recorder
	s.Subscribe(&seen)
	end()
	o := s.RunTask(context.Background(), capsule.Task{Text: "late"})
	if o.Status != agent.ExitCanceled || o.Reason != capsule.ErrEnding.Error() {
		t.Fatalf("outcome %+v", o)
	}
	if len(seen.types()) != 0 || len(drv.started) != 0 {
		t.Fatalf("a task started: events %v, model calls %d", seen.types(), len(drv.started))
	}
	if err := s.Close(o); err != nil {
		t.Fatal(err)
	}
}
