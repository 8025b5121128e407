package door

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// settledCancel answers CancelTask by what the door did, not by how the
// SDK's bookkeeping raced. a2a-go (v2.4.0, localManager's
// handleCancelWithConcurrentRun) sends a cancel onto the execution still
// registered for the task; an execution that has just yielded
// INPUT_REQUIRED is still winding down, so the cancel reaches the executor
// — which stops the run — and then fails with "non-cancelable state" or
// "queue is closed", and the CANCELED event never reaches the store. The
// caller would hear that a task it did cancel could not be, and the task
// would read INPUT_REQUIRED forever. When the door cancelled the run, the
// store is brought to CANCELED and that task is the answer.
type settledCancel struct {
	a2asrv.RequestHandler
	d *Door
}

func (h settledCancel) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	r := h.d.lookup(string(req.ID))
	task, err := h.RequestHandler.CancelTask(ctx, req)
	if err == nil || r == nil || !r.canceledByDoor() {
		return task, err
	}
	now := time.Now().UTC()
	if serr := h.d.store.setStatus(req.ID, a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: &now}, nil); serr != nil {
		return nil, err
	}
	return h.RequestHandler.GetTask(ctx, &a2a.GetTaskRequest{ID: req.ID})
}

func (r *run) canceledByDoor() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.doorCanceled
}
