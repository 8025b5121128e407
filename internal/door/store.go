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
	// spill, when set, holds ended tasks off the heap: each one leaves
	// tasks for a record in gone, which keeps only what finding and
	// filtering it needs.
	spill *spill
	gone  endedIndex
}

type stored struct {
	seq     int64
	owner   string
	version taskstore.TaskVersion
	body    []byte // the task as JSON: every reader gets its own copy
	state   a2a.TaskState
	context string
	stamp   *time.Time
}

func newStore(keep int) *store {
	return &store{tasks: map[a2a.TaskID]*stored{}, keep: keep, gone: newEndedIndex()}
}

// spillEnded moves the ended task id from tasks to the spill file and the
// ended index. Without a spill file, or when writing fails, the task stays
// whole in tasks: a full disk costs memory, never the task. s.mu is held.
func (s *store) spillEnded(id a2a.TaskID, st *stored) {
	if s.spill == nil || !st.state.Terminal() {
		return
	}
	rec := spillRecord(id, st.context, st.body)
	if !s.gone.fits(st, len(rec)) {
		return
	}
	off, err := s.spill.put(rec)
	if err != nil {
		return
	}
	s.gone.add(id, st, off, int32(len(rec)))
	delete(s.tasks, id)
}

// find returns the live or unspilled task id, or where an ended one lies
// in the ended index. s.mu is held.
func (s *store) find(id a2a.TaskID) (st *stored, at int, ok bool) {
	if st, ok := s.tasks[id]; ok {
		return st, -1, true
	}
	if at, ok := s.gone.find(id, s.spilledID); ok {
		return nil, at, true
	}
	return nil, -1, false
}

// spilledID reads the id of the spilled record e. s.mu is held.
func (s *store) spilledID(e *endedTask) (a2a.TaskID, error) {
	id, _, _, err := s.readSpilled(e)
	return id, err
}

// readSpilled reads the ended task e from the spill file. s.mu is held.
func (s *store) readSpilled(e *endedTask) (id a2a.TaskID, contextID string, body []byte, err error) {
	rec, err := s.spill.get(e.off, int(e.n))
	if err != nil {
		return "", "", nil, err
	}
	return parseSpillRecord(rec)
}

// unspill brings the ended task at gone[at] back into tasks whole, for an
// update. s.mu is held.
func (s *store) unspill(at int) (*stored, a2a.TaskID, error) {
	e := &s.gone.tasks[at]
	id, contextID, body, err := s.readSpilled(e)
	if err != nil {
		return nil, "", err
	}
	st := &stored{seq: e.seq, owner: s.gone.owners[e.owner], version: e.version, body: body,
		state: s.gone.state(e), context: contextID, stamp: e.timestamp()}
	s.spill.drop(int(e.n))
	s.gone.remove(at)
	s.tasks[id] = st
	return st, id, nil
}

// forgetOldest drops the ended task created first, spilled or not. s.mu
// is held.
func (s *store) forgetOldest() bool {
	var oldest *stored
	var oldestID a2a.TaskID
	for id, st := range s.tasks {
		if st.state.Terminal() && (oldest == nil || st.seq < oldest.seq) {
			oldest, oldestID = st, id
		}
	}
	if len(s.gone.tasks) > 0 && (oldest == nil || s.gone.tasks[0].seq < oldest.seq) {
		s.spill.drop(int(s.gone.tasks[0].n))
		s.gone.remove(0)
		return true
	}
	if oldest == nil {
		return false
	}
	delete(s.tasks, oldestID)
	return true
}

// compactSpill rewrites the spill file with only the records still kept,
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
	offs := make([]int64, len(s.gone.tasks))
	for i := range s.gone.tasks {
		e := &s.gone.tasks[i]
		b, err := s.spill.get(e.off, int(e.n))
		if err == nil {
			offs[i], err = next.put(b)
		}
		if err != nil {
			_ = next.close()
			return
		}
	}
	for i, off := range offs {
		s.gone.tasks[i].off = off
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

// settle counts the task id, which moved from state was to its current
// one, spills it if it just ended, and forgets the oldest ended tasks
// beyond keep. s.mu is held.
func (s *store) settle(id a2a.TaskID, st *stored, was a2a.TaskState) {
	now := st.state
	switch {
	case was.Terminal() && !now.Terminal():
		s.ended--
	case !was.Terminal() && now.Terminal():
		s.ended++
	}
	s.spillEnded(id, st)
	for s.keep > 0 && s.ended > s.keep && s.forgetOldest() {
		s.ended--
	}
	s.compactSpill()
}

var _ taskstore.Store = (*store)(nil)

func visible(ctx context.Context, owner string) bool {
	c, ok := callerFrom(ctx)
	return !ok || c.seesAll || c.name == owner
}

func (s *store) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	body, err := json.Marshal(task)
	if err != nil {
		return 0, fmt.Errorf("task %s: %w", task.ID, err)
	}
	c, _ := callerFrom(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, _, ok := s.find(task.ID); ok {
		return 0, taskstore.ErrTaskAlreadyExists
	}
	s.seq++
	st := &stored{seq: s.seq, owner: c.name, version: 1,
		state: task.Status.State, context: task.ContextID, stamp: task.Status.Timestamp}
	st.body = body
	s.tasks[task.ID] = st
	s.settle(task.ID, st, a2a.TaskStateUnspecified)
	return 1, nil
}

func (s *store) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	body, err := json.Marshal(req.Task)
	if err != nil {
		return 0, fmt.Errorf("task %s: %w", req.Task.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, at, ok := s.find(req.Task.ID)
	if ok && st == nil {
		owner, version := s.gone.owners[s.gone.tasks[at].owner], s.gone.tasks[at].version
		if !visible(ctx, owner) {
			return 0, a2a.ErrTaskNotFound
		}
		if req.PrevVersion != taskstore.TaskVersionMissing && req.PrevVersion != version {
			return 0, taskstore.ErrConcurrentModification
		}
		if st, _, err = s.unspill(at); err != nil {
			return 0, err
		}
	}
	if !ok || !visible(ctx, st.owner) {
		return 0, a2a.ErrTaskNotFound
	}
	if req.PrevVersion != taskstore.TaskVersionMissing && req.PrevVersion != st.version {
		return 0, taskstore.ErrConcurrentModification
	}
	st.version++
	was := st.state
	st.state, st.context, st.stamp = req.Task.Status.State, req.Task.ContextID, req.Task.Status.Timestamp
	st.body = body
	s.settle(req.Task.ID, st, was)
	return st.version, nil
}

// setStatus moves a task to status outside any SDK execution: a task that
// waits for input has no execution, yet its input timeout or its end must
// still reach GetTask. meta joins the task's metadata, as the SDK does
// with a status event's.
func (s *store) setStatus(id a2a.TaskID, status a2a.TaskStatus, meta map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, ok := s.find(id)
	if !ok {
		return a2a.ErrTaskNotFound
	}
	if st == nil || st.state.Terminal() {
		return nil // only ended tasks leave tasks
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
	st.state, st.stamp = status.State, status.Timestamp
	st.body = body
	s.settle(id, st, was)
	return nil
}

func (s *store) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	s.mu.Lock()
	st, at, ok := s.find(id)
	var body []byte
	var version taskstore.TaskVersion
	var owner string
	var err error
	if st != nil {
		body, version, owner = st.body, st.version, st.owner
	} else if ok {
		e := &s.gone.tasks[at]
		version, owner = e.version, s.gone.owners[e.owner]
		_, _, body, err = s.readSpilled(e)
	}
	s.mu.Unlock()
	if !ok || !visible(ctx, owner) {
		return nil, a2a.ErrTaskNotFound
	}
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
	// A hit is a live or unspilled task (st) or a spilled one (gone's
	// record at).
	type hit struct {
		seq int64
		st  *stored
		at  int
	}
	var hits []hit
	total := 0
	match := func(seq int64, owner, contextID string, state a2a.TaskState, stamp *time.Time) bool {
		if !visible(ctx, owner) || (req.ContextID != "" && contextID != req.ContextID) ||
			(req.Status != a2a.TaskStateUnspecified && state != req.Status) ||
			(req.StatusTimestampAfter != nil && (stamp == nil || stamp.Before(*req.StatusTimestampAfter))) {
			return false
		}
		total++
		return after < 0 || seq < after
	}
	s.mu.Lock()
	for _, st := range s.tasks {
		if match(st.seq, st.owner, st.context, st.state, st.stamp) {
			hits = append(hits, hit{st.seq, st, -1})
		}
	}
	var wantContext uint64
	if req.ContextID != "" {
		wantContext = s.gone.hash(req.ContextID)
	}
	for at := range s.gone.tasks {
		e := &s.gone.tasks[at]
		contextID := ""
		if req.ContextID != "" {
			if e.context != wantContext {
				continue
			}
			// The hash matched: the record says whether the id does.
			_, c, _, err := s.readSpilled(e)
			if err != nil {
				s.mu.Unlock()
				return nil, err
			}
			contextID = c
		}
		if match(e.seq, s.gone.owners[e.owner], contextID, s.gone.state(e), e.timestamp()) {
			hits = append(hits, hit{e.seq, nil, at})
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
		if h.st != nil {
			bodies[i] = h.st.body
			continue
		}
		_, _, b, err := s.readSpilled(&s.gone.tasks[h.at])
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
