package door

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// caller is who a request speaks for, put on its context by the door's HTTP
// layer. A context without one is the door's own work (the SDK executing or
// cancelling a task), which reaches every task.
type caller struct {
	name    string // "operator", a credential name, or "" without authentication
	seesAll bool   // the operator token, or a door without authentication
	origin  Origin
	// traceparent and tracestate are the request's W3C trace context.
	traceparent, tracestate string
}

type callerKey struct{}

func withCaller(ctx context.Context, c caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerFrom(ctx context.Context) (caller, bool) {
	c, ok := ctx.Value(callerKey{}).(caller)
	return c, ok
}

// store keeps the door's tasks and answers who may see which (spec 004
// "A declared credential's token reaches only the tasks a request carrying
// it started; the operator token reaches every task"). The SDK's in-memory
// store compares owners on every update too, which would stop the operator
// from cancelling a credential's task, hence this one.
type store struct {
	mu    sync.Mutex
	seq   int64
	tasks map[a2a.TaskID]*stored
	// keep bounds the ended tasks kept for GetTask and ListTasks; the
	// oldest ended task goes first. A long-lived capsule would otherwise
	// hold every task it ever ran.
	keep  int
	ended int
	// spill, when set, holds ended tasks' bodies off the heap.
	spill *spill
}

type stored struct {
	seq     int64
	owner   string
	version taskstore.TaskVersion
	updated time.Time
	body    []byte // the task as JSON: every reader gets its own copy
	// off and n locate the body in the spill file instead; n is 0 while
	// body holds it.
	off     int64
	n       int
	state   a2a.TaskState
	context string
	stamp   *time.Time
}

func newStore(keep int) *store { return &store{tasks: map[a2a.TaskID]*stored{}, keep: keep} }

// setBody makes body st's task; st.state is already the task's. An ended
// task's body goes to the spill file when the store has one. s.mu is held.
func (s *store) setBody(st *stored, body []byte) {
	if st.n > 0 {
		s.spill.drop(st.n)
		st.n = 0
	}
	st.body = body
	if s.spill == nil || !st.state.Terminal() {
		return
	}
	off, err := s.spill.put(body)
	if err != nil {
		return // a full disk costs memory, never the task
	}
	st.body, st.off, st.n = nil, off, len(body)
}

// bodyOf returns st's task as JSON. s.mu is held.
func (s *store) bodyOf(st *stored) ([]byte, error) {
	if st.n == 0 {
		return st.body, nil
	}
	return s.spill.get(st.off, st.n)
}

// forget drops the task id. s.mu is held.
func (s *store) forget(id a2a.TaskID) {
	if st := s.tasks[id]; st != nil && st.n > 0 {
		s.spill.drop(st.n)
	}
	delete(s.tasks, id)
}

// compactSpill rewrites the spill file with only the bodies still kept,
// once most of it is dead. A failure leaves the old file in use. s.mu is
// held.
func (s *store) compactSpill() {
	if s.spill == nil || !s.spill.wasteful() {
		return
	}
	next, err := openSpill(s.spill.dir)
	if err != nil {
		return
	}
	offs := make(map[*stored]int64, s.ended)
	for _, st := range s.tasks {
		if st.n == 0 {
			continue
		}
		b, err := s.spill.get(st.off, st.n)
		if err == nil {
			offs[st], err = next.put(b)
		}
		if err != nil {
			_ = next.close()
			return
		}
	}
	for st, off := range offs {
		st.off = off
	}
	_ = s.spill.close()
	s.spill = next
}

func (s *store) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spill == nil {
		return nil
	}
	return s.spill.close()
}

// settle counts a task that just reached a terminal state and forgets the
// oldest ended tasks beyond keep. s.mu is held.
func (s *store) settle(was, now a2a.TaskState) {
	if was.Terminal() || !now.Terminal() {
		return
	}
	s.ended++
	for s.keep > 0 && s.ended > s.keep {
		var oldest *stored
		var oldestID a2a.TaskID
		for id, st := range s.tasks {
			if st.state.Terminal() && (oldest == nil || st.seq < oldest.seq) {
				oldest, oldestID = st, id
			}
		}
		if oldest == nil {
			return
		}
		s.forget(oldestID)
		s.ended--
	}
	s.compactSpill()
}

var _ taskstore.Store = (*store)(nil)

func visible(ctx context.Context, s *stored) bool {
	c, ok := callerFrom(ctx)
	return !ok || c.seesAll || c.name == s.owner
}

func (s *store) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	body, err := json.Marshal(task)
	if err != nil {
		return 0, fmt.Errorf("task %s: %w", task.ID, err)
	}
	c, _ := callerFrom(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tasks[task.ID]; ok {
		return 0, taskstore.ErrTaskAlreadyExists
	}
	s.seq++
	st := &stored{seq: s.seq, owner: c.name, version: 1, updated: time.Now(),
		state: task.Status.State, context: task.ContextID, stamp: task.Status.Timestamp}
	s.setBody(st, body)
	s.tasks[task.ID] = st
	s.settle(a2a.TaskStateUnspecified, task.Status.State)
	return 1, nil
}

func (s *store) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	body, err := json.Marshal(req.Task)
	if err != nil {
		return 0, fmt.Errorf("task %s: %w", req.Task.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.tasks[req.Task.ID]
	if !ok || !visible(ctx, st) {
		return 0, a2a.ErrTaskNotFound
	}
	if req.PrevVersion != taskstore.TaskVersionMissing && req.PrevVersion != st.version {
		return 0, taskstore.ErrConcurrentModification
	}
	st.version++
	was := st.state
	st.updated = time.Now()
	st.state, st.context, st.stamp = req.Task.Status.State, req.Task.ContextID, req.Task.Status.Timestamp
	s.setBody(st, body)
	s.settle(was, st.state)
	return st.version, nil
}

// setStatus moves a task to status outside any SDK execution: a task that
// waits for input has no execution, yet its input timeout or its end must
// still reach GetTask. meta joins the task's metadata, as the SDK does
// with a status event's.
func (s *store) setStatus(id a2a.TaskID, status a2a.TaskStatus, meta map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.tasks[id]
	if !ok {
		return a2a.ErrTaskNotFound
	}
	if st.state.Terminal() {
		return nil
	}
	var t a2a.Task
	if err := json.Unmarshal(st.body, &t); err != nil {
		return err
	}
	if t.Status.State.Terminal() {
		return nil
	}
	if status.Message != nil {
		t.History = append(t.History, status.Message)
	}
	if meta != nil {
		if t.Metadata == nil {
			t.Metadata = map[string]any{}
		}
		maps.Copy(t.Metadata, meta)
	}
	t.Status = status
	body, err := json.Marshal(&t)
	if err != nil {
		return err
	}
	st.version++
	was := st.state
	st.updated, st.state, st.stamp = time.Now(), status.State, status.Timestamp
	s.setBody(st, body)
	s.settle(was, st.state)
	return nil
}

func (s *store) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	s.mu.Lock()
	st, ok := s.tasks[id]
	if !ok || !visible(ctx, st) {
		s.mu.Unlock()
		return nil, a2a.ErrTaskNotFound
	}
	body, err := s.bodyOf(st)
	version, owner := st.version, st.owner
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var t a2a.Task
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, fmt.Errorf("task %s: %w", id, err)
	}
	return &taskstore.StoredTask{Task: &t, Version: version, User: owner}, nil
}

// List pages through the tasks the caller may see, newest first. A page
// token names the last task of the previous page, so tasks created while a
// client pages do not shift the pages it has yet to read.
func (s *store) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	const defaultPageSize, maxPageSize = 50, 100
	size := req.PageSize
	if size == 0 {
		size = defaultPageSize
	}
	if size < 1 || size > maxPageSize {
		return nil, fmt.Errorf("pageSize %d: must be from 1 to %d: %w", req.PageSize, maxPageSize, a2a.ErrInvalidParams)
	}
	switch req.Status {
	case a2a.TaskStateUnspecified, a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired,
		a2a.TaskStateAuthRequired, a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected:
	default:
		return nil, fmt.Errorf("status %q is not a task state: %w", req.Status, a2a.ErrInvalidParams)
	}
	after := int64(-1)
	if req.PageToken != "" {
		raw, err := base64.RawURLEncoding.DecodeString(req.PageToken)
		n, perr := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || perr != nil || n < 0 {
			return nil, fmt.Errorf("pageToken %q is not one this door issued: %w", req.PageToken, a2a.ErrInvalidParams)
		}
		after = n
	}
	type hit struct {
		seq int64
		st  *stored
	}
	var hits []hit
	total := 0
	s.mu.Lock()
	for _, st := range s.tasks {
		if !visible(ctx, st) {
			continue
		}
		if req.ContextID != "" && st.context != req.ContextID {
			continue
		}
		if req.Status != a2a.TaskStateUnspecified && st.state != req.Status {
			continue
		}
		if req.StatusTimestampAfter != nil && (st.stamp == nil || st.stamp.Before(*req.StatusTimestampAfter)) {
			continue
		}
		total++
		if after < 0 || st.seq < after {
			hits = append(hits, hit{st.seq, st})
		}
	}
	// Newest first; only the page's bodies are read.
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(b.seq, a.seq) })
	resp := &a2a.ListTasksResponse{Tasks: []*a2a.Task{}, TotalSize: total, PageSize: size}
	if len(hits) > size {
		hits = hits[:size]
		resp.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(hits[size-1].seq, 10)))
	}
	bodies := make([][]byte, len(hits))
	for i, h := range hits {
		b, err := s.bodyOf(h.st)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		bodies[i] = b
	}
	s.mu.Unlock()
	for _, body := range bodies {
		var t a2a.Task
		if err := json.Unmarshal(body, &t); err != nil {
			return nil, err
		}
		if req.HistoryLength != nil {
			if n := *req.HistoryLength; n == 0 {
				t.History = nil
			} else if n > 0 && len(t.History) > n {
				t.History = t.History[len(t.History)-n:]
			}
		}
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		resp.Tasks = append(resp.Tasks, &t)
	}
	return resp, nil
}
