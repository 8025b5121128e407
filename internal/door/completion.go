package door

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/murmur/mur/internal/lifecycle"
)

// Errors Background returns for a completion task it does not start.
var (
	// ErrNoBackgroundLane: only task_acceptance: queue with after_task:
	// sleep takes a completion task (spec 004 lifecycle.shell_grace_secs).
	ErrNoBackgroundLane = errors.New("only lifecycle task_acceptance: queue with after_task: sleep takes a completion task")
	// ErrStopped: the session has stopped taking work.
	ErrStopped = errors.New("the session has stopped taking work")
)

// Background starts a task the session gives itself, in the queue's bg
// lane: a background command's completion (origin completion, spec 004
// "a task with origin completion in the bg lane"). It is a task of the
// door like any other — GetTask, ListTasks and murmur.WatchSession see it,
// CancelTask and StopSession end it — that no caller sent: on a door with
// authentication only the operator token reaches it. It returns the task's
// id at once; the task waits for its turn.
func (d *Door) Background(text string) (string, error) {
	info := a2a.TaskInfo{TaskID: a2a.NewTaskID(), ContextID: a2a.NewContextID()}
	task := Task{ID: string(info.TaskID), ContextID: info.ContextID, Text: text, Origin: OriginCompletion}
	switch adm := d.queue.Background(task.ID); adm {
	case lifecycle.Admitted:
	case lifecycle.NotAccepted:
		return "", ErrNoBackgroundLane
	default:
		return "", ErrStopped
	}
	msg := a2a.NewMessageForTask(a2a.MessageRoleUser, info, a2a.NewTextPart(text))
	submitted := a2a.NewSubmittedTask(info, msg)
	now := time.Now().UTC()
	submitted.Status.Timestamp = &now
	submitted.Metadata = map[string]any{MetaMurmur: map[string]any{"origin": string(OriginCompletion)}}
	// No caller on the context: the task belongs to no credential.
	if _, err := d.store.Create(context.Background(), submitted); err != nil {
		if !d.queue.Cancel(task.ID) {
			d.queue.Done(task.ID) // it had the turn already
		}
		return "", fmt.Errorf("completion task: %w", err)
	}
	r := d.newRun(task, info)
	d.publish(submitted)
	go r.main()
	return task.ID, nil
}
