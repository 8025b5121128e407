package door

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestEndedTasksLeaveTheHeap: with a spill folder, an ended task's body is
// in the spill file, not the store's memory, and reads back whole.
func TestEndedTasksLeaveTheHeap(t *testing.T) {
	f := open(t, queueSleep, nil)
	c := client(t, f.door, nil)
	ended := send(t, c, text("echo kept"))
	if ended.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %v", ended.Status.State)
	}
	s := f.door.store
	s.mu.Lock()
	_, inMemory := s.tasks[ended.ID]
	at, indexed := s.gone.find(ended.ID, s.spilledID)
	spilled := int32(0)
	if indexed {
		spilled = s.gone.tasks[at].n
	}
	s.mu.Unlock()
	if inMemory || spilled == 0 {
		t.Fatalf("ended task: whole in memory %v, %d bytes spilled; want it all in the spill file", inMemory, spilled)
	}
	got, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: ended.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 ||
		got.Artifacts[0].Parts[0].Text() != ended.Artifacts[0].Parts[0].Text() {
		t.Fatalf("read back %v %+v, want the task as it ended (%q)", got.Status.State, got.Artifacts, ended.Artifacts[0].Parts[0].Text())
	}
	list, err := c.ListTasks(context.Background(), &a2a.ListTasksRequest{IncludeArtifacts: true})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].Artifacts[0].Parts[0].Text() != ended.Artifacts[0].Parts[0].Text() {
		t.Fatalf("listed %+v (%v)", list, err)
	}
}

// TestSpillCompacts: the spill file is rewritten once most of it is dead,
// and the tasks still kept read back whole after it.
func TestSpillCompacts(t *testing.T) {
	s := newStore(2)
	sp, err := openSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.spill = sp
	defer s.close()
	ctx := context.Background()
	big := strings.Repeat("x", 100<<10)
	for i := range 30 {
		task := &a2a.Task{ID: a2a.TaskID(fmt.Sprint("t", i)), ContextID: "c",
			Status:  a2a.TaskStatus{State: a2a.TaskStateCompleted},
			History: []*a2a.Message{a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(fmt.Sprint(i, big)))}}
		if _, err := s.Create(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	if s.spill.end > spillCompactMin+(200<<10) {
		t.Fatalf("spill file is %d bytes for 2 kept tasks of 100 KiB: never compacted", s.spill.end)
	}
	for _, i := range []int{28, 29} {
		got, err := s.Get(ctx, a2a.TaskID(fmt.Sprint("t", i)))
		if err != nil || got.Task.History[0].Parts[0].Text() != fmt.Sprint(i, big) {
			t.Fatalf("task t%d after compaction: %v", i, err)
		}
	}
	if _, err := s.Get(ctx, "t27"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("evicted task: %v, want not found", err)
	}
}
