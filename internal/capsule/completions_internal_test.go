package capsule

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/shell"
)

// shellEvents keeps the shell layer's records.
type shellEvents struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *shellEvents) Emit(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// completed returns the delivered_via of every shell_completed line.
func (r *shellEvents) completed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Type == "shell_completed" {
			out = append(out, e.Fields["delivered_via"].(string))
		}
	}
	return out
}

// bgFixture is a shell session under lifecycle.shell_grace_secs: 0 wired
// to completions as the launcher wires it, with a start that records each
// completion task it is given, and one backgrounded command that exits
// once release is called.
type bgFixture struct {
	c       *completions
	sh      *shell.Session
	shellEv *shellEvents
	tasks   event.Sink // what the agent loop emits into
	workID  string
	release func()

	mu      sync.Mutex
	started []string
}

func newBGFixture(t *testing.T) *bgFixture {
	t.Helper()
	root := t.TempDir()
	rec := filepath.Join(root, "rec")
	f := &bgFixture{c: &completions{}, shellEv: &shellEvents{}}
	grace := 0
	p := shell.Policy{
		Allow: []string{"sh"}, PATH: os.Getenv("PATH"), HostEnv: os.Environ(),
		Workdir: filepath.Join(root, "work"), Home: filepath.Join(rec, "home"), Tmp: filepath.Join(rec, "tmp"),
		RuntimeDir: filepath.Join(root, "run"), RecordsDir: rec, SessionID: "ses_bg", GraceSecs: &grace,
		Stderr: &strings.Builder{}, OnBackgroundExit: f.c.exited,
	}
	for _, d := range []string{p.Workdir, p.Home, p.Tmp, p.RuntimeDir, filepath.Join(rec, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := shell.New(p, direct{}, f.shellEv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = sh.Close(context.Background()) })
	f.sh = sh
	f.c.bind(sh)
	f.c.start = func(text string) error {
		f.mu.Lock()
		f.started = append(f.started, text)
		f.mu.Unlock()
		return nil
	}
	f.tasks = f.c.stamp(discard{})
	f.tasks.Emit(event.Event{Type: "task_start", Fields: map[string]any{"task_id": "tsk_a"}})
	// The command waits for a file the test writes: it is running at the
	// first check after the spawn, so it moves to the background, and it
	// exits when the test says.
	flag := filepath.Join(root, "release")
	r, err := sh.Call(context.Background(), "sh", "while [ ! -e "+flag+" ]; do sleep 0.01; done; echo built")
	if err != nil {
		t.Fatal(err)
	}
	if r.WorkID == "" {
		t.Fatalf("the command did not move to the background: %+v", r)
	}
	f.workID = r.WorkID
	f.release = func() {
		if err := os.WriteFile(flag, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *bgFixture) startedTasks() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.started...)
}

// waitHandled waits until the command's exit has reached completions:
// a completion task started or the exit held for the running task's end.
func (f *bgFixture) waitHandled(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		f.c.mu.Lock()
		held := len(f.c.pending)
		f.c.mu.Unlock()
		if held > 0 || len(f.startedTasks()) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the background command's exit never reached the session")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *bgFixture) endTask() {
	f.tasks.Emit(event.Event{Type: "task_end", Fields: map[string]any{"task_id": "tsk_a"}})
}

// TestExitTheModelTookIsNoCompletionTask: a backgrounded command exits
// while its task is still running (its model held mid-turn); the model
// then asks background-command and reads the exit. Spec 004: the
// completion task is "not enqueued when background-command already
// returned the exit" — the exit reaches the agent once. Before the fix the
// exit started a completion task the moment it came, and the model read
// it in its own task as well.
func TestExitTheModelTookIsNoCompletionTask(t *testing.T) {
	f := newBGFixture(t)
	f.release()
	f.waitHandled(t)
	out, err := f.sh.Background(context.Background(), shell.BackgroundRequest{WorkID: f.workID, Action: "wait"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Exit code: 0") {
		t.Fatalf("background-command answered %q", out)
	}
	f.endTask()
	if got := f.startedTasks(); len(got) != 0 {
		t.Fatalf("the model read the exit, and a completion task carried it too: %q", got)
	}
	if got := f.shellEv.completed(); len(got) != 1 || got[0] != shell.ViaBackgroundCommand {
		t.Fatalf("shell_completed delivered_via = %q, want one background-command", got)
	}
}

// TestExitNoTaskTookIsOneCompletionTask: the exit comes while a task runs
// and the task ends without its model asking: one completion task carries
// it, started after the task's end.
func TestExitNoTaskTookIsOneCompletionTask(t *testing.T) {
	f := newBGFixture(t)
	f.release()
	f.waitHandled(t)
	if got := f.startedTasks(); len(got) != 0 {
		t.Fatalf("a completion task started while the task that could take the exit still ran: %q", got)
	}
	f.endTask()
	got := f.startedTasks()
	if len(got) != 1 || !strings.Contains(got[0], "Work id: "+f.workID) || !strings.Contains(got[0], "Exit code: 0") {
		t.Fatalf("completion tasks %q, want one carrying %s", got, f.workID)
	}
	if via := f.shellEv.completed(); len(via) != 1 || via[0] != shell.ViaCompletionTask {
		t.Fatalf("shell_completed delivered_via = %q, want one completion_task", via)
	}
	// A later task's end starts nothing more.
	f.tasks.Emit(event.Event{Type: "task_start", Fields: map[string]any{"task_id": "tsk_b"}})
	f.endTask()
	if n := len(f.startedTasks()); n != 1 {
		t.Fatalf("%d completion tasks for one exit", n)
	}
}

// TestWaitOfAnEndedTaskDeliversNothing: the task is canceled while its
// model waits on the command, and the command has exited too. The wait
// must not hand the exit to the task that is ending (where nothing reads
// it); the completion task carries it. select picks at random among
// ready cases, so before the fix about half of these waits delivered the
// exit into the canceled task and it was lost.
func TestWaitOfAnEndedTaskDeliversNothing(t *testing.T) {
	f := newBGFixture(t)
	f.release()
	f.waitHandled(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 64 {
		if out, err := f.sh.Background(ctx, shell.BackgroundRequest{WorkID: f.workID, Action: "wait"}); err == nil {
			t.Fatalf("a canceled task's wait returned the exit: %q", out)
		}
	}
	f.endTask()
	if got := f.startedTasks(); len(got) != 1 {
		t.Fatalf("completion tasks %q, want one", got)
	}
	if via := f.shellEv.completed(); len(via) != 1 || via[0] != shell.ViaCompletionTask {
		t.Fatalf("shell_completed delivered_via = %q, want one completion_task", via)
	}
}
