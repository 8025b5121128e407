package door

import (
	"context"
	"fmt"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// racedCancel plays a2a-go's concurrent Execute/Cancel race: the cancel
// reaches the executor, which stops the run, and the SDK then reports the
// task non-cancelable because the execution it sent the cancel to had
// already resolved to INPUT_REQUIRED.
type racedCancel struct {
	a2asrv.RequestHandler
	d *Door
}

func (h racedCancel) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if r := h.d.lookup(string(req.ID)); r != nil {
		r.cancelRun(ctx)
	}
	return nil, fmt.Errorf("task was in non-cancelable state: %q: %w", a2a.TaskStateInputRequired, a2a.ErrTaskNotCancelable)
}

func TestCancelRacingAnEndingExecutionSettles(t *testing.T) {
	f := open(t, queueSleep, nil)
	c := client(t, f.door, nil)
	ctx := context.Background()
	task := send(t, c, text("ask stop?"))
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("state %v", task.Status.State)
	}
	sdk := a2asrv.NewHandler(executor{f.door}, a2asrv.WithTaskStore(f.door.store))
	h := settledCancel{racedCancel{sdk, f.door}, f.door}
	got, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %v %v, want the task CANCELED", got, err)
	}
	stored, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || stored.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("GetTask after the cancel: %v %v, want CANCELED", stored, err)
	}
	// A cancel that did not reach the run is still refused.
	done := send(t, c, text("echo done"))
	if _, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: done.ID}); err == nil {
		t.Fatal("cancelling an ended task succeeded")
	}
}
