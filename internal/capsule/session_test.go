package capsule_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
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

	var first, second recorder
	o1 := s.RunTask(context.Background(), capsule.Task{ContextID: "ctx-1", Origin: capsule.OriginDoor, Text: "one", Events: &first})
	o2 := s.RunTask(context.Background(), capsule.Task{ID: "tsk_given", ContextID: "ctx-2", Origin: capsule.OriginPeer, Text: "two", Events: &second})
	if o1.Status != agent.ExitOK || o1.Answer != "First answer." || o2.Status != agent.ExitOK || o2.Answer != "Second answer." {
		t.Fatalf("outcomes %+v / %+v", o1, o2)
	}
	if o1.TaskID == "" || !strings.HasPrefix(o1.TaskID, "tsk_") || o2.TaskID != "tsk_given" {
		t.Fatalf("task ids %q %q", o1.TaskID, o2.TaskID)
	}
	if first.text() != "First answer." || second.text() != "Second answer." {
		t.Fatalf("live text: %q / %q", first.text(), second.text())
	}
	for _, r := range []*recorder{&first, &second} {
		ty := r.types()
		if ty[0] != "task_start" || ty[len(ty)-1] != "task_end" || !slices.Contains(ty, event.TextEnd) {
			t.Fatalf("task events %v", ty)
		}
	}
	if n := strings.Count(strings.Join(all.types(), " "), "task_end"); n != 2 {
		t.Fatalf("session subscriber saw %d task_end: %v", n, all.types())
	}
	cancel()
	if err := s.Close(o2); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(all.types(), "session_end") {
		t.Fatal("a canceled subscription still received session_end")
	}
	if err := s.Close(o2); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if o := s.RunTask(context.Background(), capsule.Task{Text: "late"}); o.Status != agent.ExitFailed {
		t.Fatalf("a task after Close ran: %+v", o)
	}

	lines := trace(t, home)
	var origins []string
	for _, l := range lines {
		switch l["event"] {
		case event.TextDelta, event.TextEnd:
			t.Fatalf("the trace recorded a live event: %v", l)
		case "task_start":
			origins = append(origins, l["origin"].(string))
		case "session_end":
			if l["turns"].(float64) != 2 || l["input_tokens"].(float64) != 30 {
				t.Fatalf("session_end %v", l)
			}
		}
	}
	if !slices.Equal(origins, []string{"door", "peer"}) {
		t.Fatalf("task_start origins %v", origins)
	}
}
