package door

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/murmur/mur/internal/lifecycle"
)

// double is a Backend whose behaviour the task text picks:
//
//	echo X   completes with X
//	ask P    asks for input with prompt P, completes with "reply: " + the reply
//	hold     runs until released or cancelled
//	sleep N  completes after N milliseconds
//	fail X   fails with X
//	bg ID    completes, naming ID as a background command still running
type double struct {
	mu      sync.Mutex
	records []string
	runs    map[string]int
	tasks   []Task // every task run, in order
	release chan struct{}
	started chan string
}

func newDouble() *double {
	return &double{runs: map[string]int{}, release: make(chan struct{}), started: make(chan string, 4096)}
}

func (b *double) RunTask(ctx context.Context, t Task, u Updates) Outcome {
	b.mu.Lock()
	b.runs[t.ID]++
	b.tasks = append(b.tasks, t)
	b.mu.Unlock()
	b.started <- t.ID
	verb, arg, _ := strings.Cut(t.Text, " ")
	switch verb {
	case "echo":
		u.Progress("echoing")
		return Outcome{State: Completed, Text: arg}
	case "ask":
		reply, err := u.RequestInput(ctx, arg)
		if err != nil {
			if ctx.Err() != nil {
				return Outcome{State: Canceled}
			}
			return Outcome{State: Failed, Text: err.Error()}
		}
		return Outcome{State: Completed, Text: "reply: " + reply}
	case "sleep":
		ms, _ := strconv.Atoi(arg)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return Outcome{State: Completed, Text: "slept"}
		case <-ctx.Done():
			return Outcome{State: Canceled}
		}
	case "bg":
		return Outcome{State: Completed, Text: "left " + arg + " running", RunningCommands: []string{arg}}
	case "hold":
		select {
		case <-b.release:
			return Outcome{State: Completed, Text: "released"}
		case <-ctx.Done():
			return Outcome{State: Canceled}
		}
	}
	return Outcome{State: Failed, Text: arg}
}

func (b *double) Record(kind RecordKind, t Task) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.records = append(b.records, string(kind)+" "+t.ID)
}

func (b *double) count(kind RecordKind) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, r := range b.records {
		if strings.HasPrefix(r, string(kind)+" ") {
			n++
		}
	}
	return n
}

type fixture struct {
	door    *Door
	backend *double
	queue   *lifecycle.Queue
}

func open(t *testing.T, p lifecycle.Policy, mod func(*Config)) *fixture {
	t.Helper()
	b := newDouble()
	q := lifecycle.New(p, false)
	cfg := Config{Name: "door-test", Version: "1.2.3", Queue: q, Backend: b,
		Skills: []Skill{{ID: "grep", Name: "grep", Description: "search files"}},
		// Ended tasks leave the heap as in mur run; a test that wants them
		// in memory clears it.
		SpillDir: t.TempDir()}
	if mod != nil {
		mod(&cfg)
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	d.Start()
	t.Cleanup(func() {
		close(b.release)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Stop(ctx)
		_ = d.Close(ctx)
	})
	return &fixture{door: d, backend: b, queue: q}
}

var queueSleep = lifecycle.Policy{Acceptance: lifecycle.AcceptQueue, AfterTask: lifecycle.AfterSleep, QueueDepth: 2}

// headerTransport adds headers to every request, as a caller's token or a
// peer runtime's origin stamp would.
type headerTransport struct {
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func client(t *testing.T, d *Door, headers map[string]string) *a2aclient.Client {
	t.Helper()
	ctx := context.Background()
	hc := &http.Client{Transport: headerTransport{headers}}
	card, err := agentcard.NewResolver(hc).Resolve(ctx, d.URL())
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func text(s string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(s))}
}

func immediately(s string) *a2a.SendMessageRequest {
	r := text(s)
	r.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	return r
}

func send(t *testing.T, c *a2aclient.Client, req *a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("result %T, want a task", res)
	}
	return task
}

func waitState(t *testing.T, c *a2aclient.Client, id a2a.TaskID, want a2a.TaskState) *a2a.Task {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		task, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: id})
		if err == nil && task.Status.State == want {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: state %v (err %v), want %v", id, task, err, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSendMessageCompletes(t *testing.T) {
	f := open(t, queueSleep, nil)
	c := client(t, f.door, nil)
	task := send(t, c, text("echo hello"))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %v", task.Status.State)
	}
	if len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "hello" {
		t.Fatalf("artifacts %+v, want the answer", task.Artifacts)
	}
	got := waitState(t, c, task.ID, a2a.TaskStateCompleted)
	if got.ContextID == "" {
		t.Fatal("no contextId")
	}
	if n := f.backend.count(RecordTaskReceived); n != 1 {
		t.Fatalf("%d a2a_task_received records", n)
	}
}

func TestStreamingMessage(t *testing.T) {
	f := open(t, queueSleep, nil)
	c := client(t, f.door, nil)
	var states []a2a.TaskState
	for ev, err := range c.SendStreamingMessage(context.Background(), text("echo streamed")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			states = append(states, e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
		}
	}
	if len(states) < 3 || states[0] != a2a.TaskStateSubmitted || states[len(states)-1] != a2a.TaskStateCompleted {
		t.Fatalf("states %v, want SUBMITTED ... COMPLETED", states)
	}
}

func TestAgentCard(t *testing.T) {
	f := open(t, queueSleep, func(c *Config) { c.PeerTasks = true })
	card, err := agentcard.NewResolver(http.DefaultClient).Resolve(context.Background(), f.door.URL())
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != "door-test" || card.Version != "1.2.3" || !card.Capabilities.Streaming {
		t.Fatalf("card %+v", card)
	}
	if len(card.Skills) != 1 || card.Skills[0].ID != "grep" {
		t.Fatalf("skills %+v", card.Skills)
	}
	if len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].URL != f.door.URL() || card.SupportedInterfaces[0].ProtocolVersion != "1.0" {
		t.Fatalf("interfaces %+v", card.SupportedInterfaces[0])
	}
	resp, err := http.Get(f.door.URL() + CardPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw struct {
		PeerTasks struct {
			Accept bool `json:"accept"`
		} `json:"peerTasks"`
		SecuritySchemes map[string]any `json:"securitySchemes"`
	}
	decode(t, resp, &raw)
	if !raw.PeerTasks.Accept || raw.SecuritySchemes != nil {
		t.Fatalf("card peerTasks %+v securitySchemes %v", raw.PeerTasks, raw.SecuritySchemes)
	}
}

func TestListTasksPages(t *testing.T) {
	f := open(t, queueSleep, nil)
	c := client(t, f.door, nil)
	want := map[a2a.TaskID]bool{}
	for i := range 7 {
		task := send(t, c, text(fmt.Sprint("echo ", i)))
		want[task.ID] = true
	}
	seen := map[a2a.TaskID]bool{}
	token, pages := "", 0
	for {
		page, err := c.ListTasks(context.Background(), &a2a.ListTasksRequest{PageSize: 3, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if page.TotalSize != 7 {
			t.Fatalf("totalSize %d", page.TotalSize)
		}
		for _, task := range page.Tasks {
			if seen[task.ID] {
				t.Fatalf("task %s on two pages", task.ID)
			}
			seen[task.ID] = true
		}
		if page.NextPageToken == "" {
			break
		}
		token = page.NextPageToken
	}
	if pages != 3 || len(seen) != 7 {
		t.Fatalf("%d pages, %d tasks; want 3 pages of 7 tasks", pages, len(seen))
	}
	if _, err := c.ListTasks(context.Background(), &a2a.ListTasksRequest{PageSize: 101}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("pageSize 101: %v, want invalid params", err)
	}
	if _, err := c.ListTasks(context.Background(), &a2a.ListTasksRequest{Status: "UNRECOGNIZED"}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("unknown status filter: %v, want invalid params", err)
	}
	if _, err := c.ListTasks(context.Background(), &a2a.ListTasksRequest{PageToken: "forged"}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("forged token: %v, want invalid params", err)
	}
}

func TestCancelRunningAndQueued(t *testing.T) {
	f := open(t, queueSleep, nil)
	c := client(t, f.door, nil)
	ctx := context.Background()
	running := send(t, c, immediately("hold"))
	<-f.backend.started
	queued := send(t, c, immediately("echo later"))
	if queued.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("queued task state %v", queued.Status.State)
	}
	got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: queued.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel queued: %v %v", got, err)
	}
	got, err = c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: running.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel running: %v %v", got, err)
	}
	waitState(t, c, running.ID, a2a.TaskStateCanceled)
	waitState(t, c, queued.ID, a2a.TaskStateCanceled)
	if n := f.backend.count(RecordTaskCanceled); n != 1 {
		t.Fatalf("%d task_canceled records, want 1 (the queued task)", n)
	}
	f.backend.mu.Lock()
	ran := f.backend.runs[string(queued.ID)]
	f.backend.mu.Unlock()
	if ran != 0 {
		t.Fatal("a task cancelled while queued was run")
	}
	// The queue keeps serving after cancellations.
	done := send(t, c, text("echo after"))
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("next task: %v", done.Status.State)
	}
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: done.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("cancel a completed task: %v, want not cancelable", err)
	}
}

func TestSubscribeToTask(t *testing.T) {
	f := open(t, queueSleep, nil)
	c := client(t, f.door, nil)
	ctx := context.Background()
	task := send(t, c, immediately("hold"))
	<-f.backend.started
	events := make(chan a2a.TaskState, 16)
	go func() {
		defer close(events)
		for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				return
			}
			switch e := ev.(type) {
			case *a2a.Task:
				events <- e.Status.State
			case *a2a.TaskStatusUpdateEvent:
				events <- e.Status.State
			}
		}
	}()
	if s := <-events; s != a2a.TaskStateWorking && s != a2a.TaskStateSubmitted {
		t.Fatalf("subscription opened on %v, want the live task", s)
	}
	f.backend.release <- struct{}{}
	var last a2a.TaskState
	for s := range events {
		last = s
	}
	if last != a2a.TaskStateCompleted {
		t.Fatalf("subscription ended on %v", last)
	}
}

func TestInputRequiredRoundTrip(t *testing.T) {
	f := open(t, queueSleep, nil)
	c := client(t, f.door, nil)
	task := send(t, c, text("ask which branch?"))
	if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message.Parts[0].Text() != "which branch?" {
		t.Fatalf("first answer %v %+v, want INPUT_REQUIRED with the prompt", task.Status.State, task.Status.Message)
	}
	follow := a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewTextPart("main"))
	got := send(t, c, &a2a.SendMessageRequest{Message: follow})
	if got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("follow-up: task %s state %v, want %s COMPLETED", got.ID, got.Status.State, task.ID)
	}
	if got.Artifacts[0].Parts[0].Text() != "reply: main" {
		t.Fatalf("answer %q", got.Artifacts[0].Parts[0].Text())
	}
	f.backend.mu.Lock()
	runs := f.backend.runs[string(task.ID)]
	f.backend.mu.Unlock()
	if runs != 1 {
		t.Fatalf("the resumed task ran %d times", runs)
	}
}

func TestInputTimeout(t *testing.T) {
	p := queueSleep
	p.InputTimeout = 50 * time.Millisecond
	f := open(t, p, nil)
	c := client(t, f.door, nil)
	task := send(t, c, text("ask anyone?"))
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("state %v", task.Status.State)
	}
	got := waitState(t, c, task.ID, a2a.TaskStateFailed)
	if got.Status.Message == nil || got.Status.Message.Parts[0].Text() != "input-timeout" {
		t.Fatalf("final status %+v, want message input-timeout", got.Status.Message)
	}
	follow := a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewTextPart("too late"))
	if _, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: follow}); err == nil {
		t.Fatal("a reply after the timeout was taken")
	}
}

func TestCancelWhileWaitingForInput(t *testing.T) {
	f := open(t, queueSleep, nil)
	c := client(t, f.door, nil)
	ctx := context.Background()
	task := send(t, c, text("ask stop?"))
	got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %v %v", got, err)
	}
	// The queue moved on: the next task runs.
	if next := send(t, c, text("echo next")); next.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("next: %v", next.Status.State)
	}
}

func TestSingleRejectsWhileBusyThenCloses(t *testing.T) {
	f := open(t, lifecycle.Policy{Acceptance: lifecycle.AcceptSingle, AfterTask: lifecycle.AfterExit, QueueDepth: 1}, nil)
	c := client(t, f.door, nil)
	first := send(t, c, immediately("hold"))
	<-f.backend.started
	busy := send(t, c, text("echo two"))
	if busy.Status.State != a2a.TaskStateRejected || busy.Status.Message.Parts[0].Text() != "task rejected: capsule is busy" {
		t.Fatalf("second task %v %+v", busy.Status.State, busy.Status.Message)
	}
	f.backend.release <- struct{}{}
	waitState(t, c, first.ID, a2a.TaskStateCompleted)
	select {
	case <-f.queue.Ended():
	case <-time.After(10 * time.Second):
		t.Fatal("single exit did not end after its task")
	}
	late := send(t, c, text("echo late"))
	if late.Status.State != a2a.TaskStateRejected {
		t.Fatalf("task after the session stopped taking work: %v", late.Status.State)
	}
	if n := f.backend.count(RecordTaskRejected); n != 0 {
		t.Fatalf("%d task_rejected records for tasks refused at the door, want none", n)
	}
}

func TestQueueExitRejectsQueuedTasksAtEnd(t *testing.T) {
	f := open(t, lifecycle.Policy{Acceptance: lifecycle.AcceptQueue, AfterTask: lifecycle.AfterExit, QueueDepth: 2}, nil)
	c := client(t, f.door, nil)
	first := send(t, c, immediately("hold"))
	<-f.backend.started
	q1 := send(t, c, immediately("echo a"))
	q2 := send(t, c, immediately("echo b"))
	f.backend.release <- struct{}{}
	waitState(t, c, first.ID, a2a.TaskStateCompleted)
	for _, q := range []*a2a.Task{q1, q2} {
		waitState(t, c, q.ID, a2a.TaskStateRejected)
	}
	if n := f.backend.count(RecordTaskRejected); n != 2 {
		t.Fatalf("%d task_rejected records, want 2", n)
	}
	f.backend.mu.Lock()
	ran := len(f.backend.runs)
	f.backend.mu.Unlock()
	if ran != 1 {
		t.Fatalf("%d tasks ran, want only the first", ran)
	}
}

func TestStopCancelsTasksInFlight(t *testing.T) {
	f := open(t, queueSleep, nil)
	c := client(t, f.door, nil)
	ctx := context.Background()
	running := send(t, c, immediately("hold"))
	<-f.backend.started
	queued := send(t, c, immediately("echo never"))
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res := f.door.Stop(stopCtx)
	if fmt.Sprint(res.Canceled) != fmt.Sprint([]string{string(running.ID)}) || fmt.Sprint(res.Rejected) != fmt.Sprint([]string{string(queued.ID)}) {
		t.Fatalf("residue %+v", res)
	}
	waitState(t, c, running.ID, a2a.TaskStateCanceled)
	waitState(t, c, queued.ID, a2a.TaskStateRejected)
	select {
	case <-f.queue.Ended():
	default:
		t.Fatal("queue not ended after Stop")
	}
}

// TestEndedTasksAreBounded: a long-lived door keeps the newest KeepTasks
// ended tasks and forgets older ones; a task still running is never
// forgotten.
func TestEndedTasksAreBounded(t *testing.T) {
	t.Run("spilled", func(t *testing.T) { testEndedTasksAreBounded(t, func(c *Config) { c.KeepTasks = 3 }) })
	t.Run("in memory", func(t *testing.T) {
		testEndedTasksAreBounded(t, func(c *Config) { c.KeepTasks, c.SpillDir = 3, "" })
	})
}

func testEndedTasksAreBounded(t *testing.T, mod func(*Config)) {
	f := open(t, queueSleep, mod)
	c := client(t, f.door, nil)
	held := send(t, c, immediately("hold"))
	<-f.backend.started
	f.backend.release <- struct{}{}
	waitState(t, c, held.ID, a2a.TaskStateCompleted)
	var ids []a2a.TaskID
	for i := range 5 {
		ids = append(ids, send(t, c, text(fmt.Sprint("echo ", i))).ID)
	}
	list, err := c.ListTasks(context.Background(), &a2a.ListTasksRequest{})
	if err != nil || list.TotalSize != 3 {
		t.Fatalf("listed %v (%v), want the 3 newest", list, err)
	}
	if _, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: ids[0]}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("oldest ended task: %v, want not found", err)
	}
	if _, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: ids[4]}); err != nil {
		t.Fatalf("newest task: %v", err)
	}
}
