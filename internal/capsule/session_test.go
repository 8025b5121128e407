package capsule_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/door"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/providertest"
)

// recorder keeps every event a sink is given.
type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) Emit(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// since returns a recorder of what r receives from now on.
func (r *recorder) since() func() *recorder {
	r.mu.Lock()
	n := len(r.events)
	r.mu.Unlock()
	return func() *recorder {
		r.mu.Lock()
		defer r.mu.Unlock()
		return &recorder{events: append([]event.Event(nil), r.events[n:]...)}
	}
}

// progressRecorder is the door's side of a running task.
type progressRecorder struct {
	mu       sync.Mutex
	progress []string
}

func (p *progressRecorder) Progress(text string) {
	p.mu.Lock()
	p.progress = append(p.progress, text)
	p.mu.Unlock()
}

func (p *progressRecorder) RequestInput(context.Context, string) (string, error) {
	return "", errors.New("this capsule never asks for input")
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, e.Type)
	}
	return out
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.events {
		if e.Type == event.TextDelta {
			b.WriteString(e.Fields["text"].(string))
		}
	}
	return b.String()
}

// TestSessionRunsTasksOneAtATime opens one session of the real capsule (a
// driver and tool built from source, a scripted provider) and runs two
// tasks on it, as the door does: each task gets its own id, origin and live
// events; a session subscriber sees both; the trace records no live event;
// session_end sums the tasks.
func TestSessionRunsTasksOneAtATime(t *testing.T) {
	root, home := e2eHome(t, "sk-session")
	prov := providertest.Start(t,
		providertest.Step{Text: "First answer.", InputTokens: 10, OutputTokens: 3},
		providertest.Step{Text: "Second answer.", InputTokens: 20, OutputTokens: 4},
	)
	manifestPath := installCapsule(t, root, prov)

	var stderr strings.Builder
	s, err := capsule.Open(context.Background(), capsule.Options{Manifest: manifestPath, Stderr: &stderr})
	if err != nil {
		t.Fatalf("open: %v\n%s", err, stderr.String())
	}
	var all recorder
	cancel := s.Subscribe(&all)

	var first recorder
	o1 := s.RunTask(context.Background(), capsule.Task{ContextID: "ctx-1", Origin: capsule.OriginDoor, Text: "one", Events: &first})
	if o1.Status != agent.ExitOK || o1.Answer != "First answer." || o1.TaskID == "" || !strings.HasPrefix(o1.TaskID, "tsk_") {
		t.Fatalf("first outcome %+v", o1)
	}
	if first.text() != "First answer." {
		t.Fatalf("live text: %q", first.text())
	}
	// The second task comes through the door's backend, as a peer's.
	var updates progressRecorder
	backend := s.DoorBackend()
	peer := door.Task{ID: "tsk_given", ContextID: "ctx-2", Origin: door.OriginPeer, Text: "two"}
	backend.Record(door.RecordTaskReceived, peer)
	second := all.since()
	o2 := backend.RunTask(context.Background(), peer, &updates)
	if o2.State != door.Completed || o2.Text != "Second answer." {
		t.Fatalf("door outcome %+v", o2)
	}
	if len(updates.progress) != 1 || updates.progress[0] != "Second answer." {
		t.Fatalf("door progress %q", updates.progress)
	}
	for _, r := range []*recorder{&first, second()} {
		ty := r.types()
		if ty[0] != "task_start" || ty[len(ty)-1] != "task_end" || !slices.Contains(ty, event.TextEnd) {
			t.Fatalf("task events %v", ty)
		}
	}
	if n := strings.Count(strings.Join(all.types(), " "), "task_end"); n != 2 {
		t.Fatalf("session subscriber saw %d task_end: %v", n, all.types())
	}
	cancel()
	if err := s.Close(o1); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(all.types(), "session_end") {
		t.Fatal("a canceled subscription still received session_end")
	}
	if err := s.Close(o1); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if o := s.RunTask(context.Background(), capsule.Task{Text: "late"}); o.Status != agent.ExitFailed {
		t.Fatalf("a task after Close ran: %+v", o)
	}

	lines := trace(t, home)
	var origins []string
	received := false
	for _, l := range lines {
		switch l["event"] {
		case event.TextDelta, event.TextEnd:
			t.Fatalf("the trace recorded a live event: %v", l)
		case "a2a_task_received":
			received = l["task_id"] == "tsk_given" && l["origin"] == "peer"
		case "task_start":
			origins = append(origins, l["origin"].(string))
		case "session_end":
			if l["turns"].(float64) != 2 || l["input_tokens"].(float64) != 30 {
				t.Fatalf("session_end %v", l)
			}
		}
	}
	if !received {
		t.Fatal("no a2a_task_received line for the door's task")
	}
	if !slices.Equal(origins, []string{"door", "peer"}) {
		t.Fatalf("task_start origins %v", origins)
	}
}
