package door

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// endedTaskBytes is the most heap an ended, spilled task may keep: its id,
// context id, state, spill offset and the index around them. At
// DefaultKeepTasks that is under 0.16 MB for the whole store (318 bytes a task before the
// index, 105 with it).
const endedTaskBytes = 160

// TestEndedTaskFootprint: the live heap a store keeps per ended task once
// its body is in the spill file, measured after a GC over 2,000 tasks that
// went SUBMITTED → WORKING → COMPLETED as the SDK drives them.
func TestEndedTaskFootprint(t *testing.T) {
	const n = 2000
	perTask := endedTaskFootprint(t, n)
	t.Logf("%.0f bytes per ended task", perTask)
	if perTask > endedTaskBytes {
		t.Fatalf("an ended task keeps %.0f bytes of heap, want at most %d", perTask, endedTaskBytes)
	}
}

func endedTaskFootprint(t testing.TB, n int) float64 {
	s := newStore(n)
	sp, err := openSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.spill = sp
	defer s.close()
	ctx := withCaller(context.Background(), caller{name: "ci"})
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	// One task first, so the store's own first allocations are not counted.
	runTask(t, s, ctx, 0)
	before := heap()
	for i := 1; i <= n; i++ {
		runTask(t, s, ctx, i)
	}
	after := heap()
	runtime.KeepAlive(s)
	return float64(int64(after)-int64(before)) / float64(n)
}

// runTask takes one task through the store as the SDK does.
func runTask(t testing.TB, s *store, ctx context.Context, i int) {
	now := time.Now()
	task := &a2a.Task{ID: a2a.NewTaskID(), ContextID: a2a.NewContextID(),
		Status:  a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now},
		History: []*a2a.Message{a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprint("task ", i)))}}
	v, err := s.Create(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	task.Status.State = a2a.TaskStateWorking
	if v, err = s.Update(ctx, &taskstore.UpdateRequest{Task: task, PrevVersion: v}); err != nil {
		t.Fatal(err)
	}
	done := time.Now()
	task.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &done}
	task.Artifacts = []*a2a.Artifact{{ID: a2a.NewArtifactID(), Parts: []*a2a.Part{a2a.NewTextPart(fmt.Sprint("answer ", i))}}}
	if _, err = s.Update(ctx, &taskstore.UpdateRequest{Task: task, PrevVersion: v}); err != nil {
		t.Fatal(err)
	}
}

// TestEndedIndexExactWhenHashesClash: with every task id and context id
// hashing alike, the spilled tasks are still found, filtered, refused as
// duplicates, updated and evicted by their whole ids.
func TestEndedIndexExactWhenHashesClash(t *testing.T) {
	s := newStore(3)
	sp, err := openSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.spill = sp
	defer s.close()
	s.gone.sum = func(string) uint64 { return 7 }
	ctx := context.Background()
	end := func(i int, contextID string) {
		task := &a2a.Task{ID: a2a.TaskID(fmt.Sprint("t", i)), ContextID: contextID,
			Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, Metadata: map[string]any{"i": i}}
		if _, err := s.Create(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range []string{"a", "b", "a", "b", "a"} {
		end(i, c)
	}
	if len(s.tasks) != 0 || len(s.gone.tasks) != 3 {
		t.Fatalf("%d tasks whole, %d spilled; want 0 and 3", len(s.tasks), len(s.gone.tasks))
	}
	for i := range 5 {
		got, err := s.Get(ctx, a2a.TaskID(fmt.Sprint("t", i)))
		if i < 2 {
			if !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("evicted t%d: %v, want not found", i, err)
			}
			continue
		}
		if err != nil || got.Task.ID != a2a.TaskID(fmt.Sprint("t", i)) || got.Task.Metadata["i"] != float64(i) {
			t.Fatalf("t%d: %+v %v", i, got, err)
		}
	}
	if _, err := s.Get(ctx, "t9"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("unknown id with a clashing hash: %v, want not found", err)
	}
	if _, err := s.Create(ctx, &a2a.Task{ID: "t3", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}); !errors.Is(err, taskstore.ErrTaskAlreadyExists) {
		t.Fatalf("re-creating spilled t3: %v", err)
	}
	list, err := s.List(ctx, &a2a.ListTasksRequest{ContextID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []a2a.TaskID
	for _, task := range list.Tasks {
		ids = append(ids, task.ID)
	}
	if list.TotalSize != 2 || fmt.Sprint(ids) != "[t4 t2]" {
		t.Fatalf("context a lists %v of %d, want [t4 t2] of 2", ids, list.TotalSize)
	}
	// An update of a spilled task checks its version and reads back.
	if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: &a2a.Task{ID: "t3", ContextID: "b",
		Status: a2a.TaskStatus{State: a2a.TaskStateFailed}}, PrevVersion: 2}); !errors.Is(err, taskstore.ErrConcurrentModification) {
		t.Fatalf("update at a stale version: %v", err)
	}
	v, err := s.Update(ctx, &taskstore.UpdateRequest{Task: &a2a.Task{ID: "t3", ContextID: "b",
		Status: a2a.TaskStatus{State: a2a.TaskStateFailed}}, PrevVersion: 1})
	if err != nil || v != 2 {
		t.Fatalf("update: version %d, %v", v, err)
	}
	if got, err := s.Get(ctx, "t3"); err != nil || got.Task.Status.State != a2a.TaskStateFailed || got.Version != 2 {
		t.Fatalf("t3 after its update: %+v %v", got, err)
	}
	if len(s.tasks) != 0 || len(s.gone.tasks) != 3 || s.ended != 3 {
		t.Fatalf("after the update: %d whole, %d spilled, %d counted ended", len(s.tasks), len(s.gone.tasks), s.ended)
	}
	// The next ended task evicts the oldest, t2, whatever the hashes.
	end(5, "a")
	if _, err := s.Get(ctx, "t2"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("t2 after t5 ended: %v, want evicted", err)
	}
	for _, id := range []a2a.TaskID{"t3", "t4", "t5"} {
		if got, err := s.Get(ctx, id); err != nil || got.Task.ID != id {
			t.Fatalf("%s: %+v %v", id, got, err)
		}
	}
}
