package door

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/murmur/mur/internal/lifecycle"
)

// murmurMeta reads metadata.murmur of a task.
func murmurMeta(t *testing.T, task *a2a.Task) map[string]any {
	t.Helper()
	m, _ := task.Metadata[MetaMurmur].(map[string]any)
	if m == nil {
		t.Fatalf("task %s has no metadata.murmur: %+v", task.ID, task.Metadata)
	}
	return m
}

// TestRunningCommandsMetadata: a task that ends while background commands
// still run names them as metadata.murmur.runningCommands in its A2A
// result (spec 004 lifecycle.shell_grace_secs), whether the caller waited
// for the end or read it later with GetTask; a task that leaves none has
// no such entry.
func TestRunningCommandsMetadata(t *testing.T) {
	f := open(t, queueSleep, nil)
	c := client(t, f.door, nil)

	task := send(t, c, text("bg wrk_0001"))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %v", task.Status.State)
	}
	got, _ := murmurMeta(t, task)["runningCommands"].([]any)
	if len(got) != 1 || got[0] != "wrk_0001" {
		t.Fatalf("runningCommands = %v, want [wrk_0001]", murmurMeta(t, task)["runningCommands"])
	}

	// A completion task has no SDK execution: the door's own store write
	// must carry the metadata.
	id, err := f.door.Background("bg wrk_0002")
	if err != nil {
		t.Fatal(err)
	}
	done := waitState(t, c, a2a.TaskID(id), a2a.TaskStateCompleted)
	got, _ = murmurMeta(t, done)["runningCommands"].([]any)
	if len(got) != 1 || got[0] != "wrk_0002" {
		t.Fatalf("GetTask runningCommands = %v, want [wrk_0002]", murmurMeta(t, done)["runningCommands"])
	}

	plain := send(t, c, text("echo hi"))
	if _, ok := plain.Metadata[MetaMurmur]; ok {
		t.Fatalf("a task with no command left running has metadata %+v", plain.Metadata)
	}
}

// TestBackgroundTask: a completion task the session gives itself runs in
// the bg lane under queue + sleep, origin completion, visible over the
// door like any task; every other lifecycle refuses it, and so does a
// stopped session.
func TestBackgroundTask(t *testing.T) {
	f := open(t, lifecycle.Policy{Acceptance: lifecycle.AcceptQueue, AfterTask: lifecycle.AfterSleep, QueueDepth: 1}, nil)
	c := client(t, f.door, nil)

	// The queue's one place is taken behind a held task; the completion
	// still gets in.
	held := send(t, c, immediately("hold"))
	waitState(t, c, held.ID, a2a.TaskStateWorking)
	queued := send(t, c, immediately("echo queued"))
	if queued.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("queued task: %v", queued.Status.State)
	}
	id, err := f.door.Background("echo wrk_0003 exited 0")
	if err != nil {
		t.Fatal(err)
	}
	sub := waitState(t, c, a2a.TaskID(id), a2a.TaskStateSubmitted)
	if murmurMeta(t, sub)["origin"] != "completion" {
		t.Fatalf("completion task metadata %+v", sub.Metadata)
	}
	f.backend.release <- struct{}{}
	done := waitState(t, c, a2a.TaskID(id), a2a.TaskStateCompleted)
	if m := done.Status.Message; m == nil || m.Parts[0].Text() != "wrk_0003 exited 0" {
		t.Fatalf("completion task status %+v", done.Status)
	}
	waitState(t, c, queued.ID, a2a.TaskStateCompleted)

	// Admission order across the lanes: the door task queued first ran
	// first.
	var order []string
	for len(order) < 3 {
		select {
		case started := <-f.backend.started:
			order = append(order, started)
		case <-time.After(10 * time.Second):
			t.Fatalf("started %v", order)
		}
	}
	if order[1] != string(queued.ID) || order[2] != id {
		t.Fatalf("turns %v, want held, queued, completion", order)
	}
	if n := f.backend.count(RecordTaskReceived); n != 2 {
		t.Fatalf("%d a2a_task_received records, want the two the door let in", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.door.Stop(ctx)
	if _, err := f.door.Background("echo late"); !errors.Is(err, ErrStopped) {
		t.Fatalf("after Stop: %v, want ErrStopped", err)
	}

	single := open(t, lifecycle.Policy{Acceptance: lifecycle.AcceptSingle, AfterTask: lifecycle.AfterExit, QueueDepth: 1}, nil)
	if _, err := single.door.Background("echo never"); !errors.Is(err, ErrNoBackgroundLane) {
		t.Fatalf("single + exit: %v, want ErrNoBackgroundLane", err)
	}
}
