package process

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/guesttest"
	"github.com/murmur/mur/internal/spend"
	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
)

// The tests run the real process driver skeleton (examples/, built by make
// guests) over tools/harness-fake, a scripted harness built here, as real
// processes. The sandbox is the capsule's: mur run's testscripts
// (run_process_*) run the same harness inside it.

var fake struct {
	once sync.Once
	dir  string
	err  error
}

// harnessBin builds tools/harness-fake once per test process into a
// folder holding it as harness, harness-v0.9.0 and harness-noversion.
func harnessBin(t *testing.T) string {
	t.Helper()
	fake.once.Do(func() {
		fake.dir, fake.err = os.MkdirTemp("", "harness-fake-")
		if fake.err != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(fake.dir, "harness"), "../../tools/harness-fake").CombinedOutput()
		if err != nil {
			fake.err = &exec.ExitError{Stderr: out}
			return
		}
		for _, alias := range []string{"harness-v0.9.0", "harness-noversion"} {
			if fake.err = os.Symlink("harness", filepath.Join(fake.dir, alias)); fake.err != nil {
				return
			}
		}
	})
	if fake.err != nil {
		t.Fatalf("building tools/harness-fake: %v", fake.err)
	}
	return fake.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fake.dir != "" {
		os.RemoveAll(fake.dir)
	}
	os.Exit(code)
}

// skeleton instantiates the process driver skeleton with no grants.
func skeleton(t *testing.T) *component.ProcessDriver {
	t.Helper()
	b := guesttest.Read(t, "process-driver-skeleton-go")
	rt, err := component.New(cm.Config{CacheDir: filepath.Join(os.TempDir(), "mur-test-compile-cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	c, err := rt.Compile(b)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := rt.Instantiate(context.Background(), c, component.Options{Name: "skeleton", Policy: wasi.Policy{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	d, err := inst.ProcessDriver()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ownGroup starts a harness as the leader of its own process group, as
// the sandbox does, without the sandbox.
type ownGroup struct{}

func (ownGroup) Prepare(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return nil
}
func (ownGroup) Start(cmd *exec.Cmd) error { return cmd.Start() }

// records collects a transport's records.
type records struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *records) Emit(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *records) of(typ string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, e := range r.events {
		if e.Type == typ && !e.Live {
			out = append(out, e.Fields)
		}
	}
	return out
}

func (r *records) wait(t *testing.T, typ string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(r.of(typ)) > 0 {
			return
		}
	}
	t.Fatalf("no %s record in 20s", typ)
}

func newTransport(t *testing.T, d Driver) (*Transport, *records) {
	t.Helper()
	bin := filepath.Join(harnessBin(t), "harness")
	desc, err := d.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec := &records{}
	wd := t.TempDir()
	return &Transport{
		Driver: d, DriverName: "local/skeleton", Desc: desc, Binary: bin, Version: "1.2.3",
		Env:     Env{Allow: [][2]string{{"HOME", "/home/x"}}, Account: [][2]string{{"USER", "u"}}, Unset: []string{"LOGNAME"}, Session: [][2]string{{"MURMUR_RUNTIME_DIR", "/rt"}, {"MURMUR_RECORDS_DIR", "/rec"}}},
		Starter: ownGroup{}, Workdir: wd, Logs: filepath.Join(wd, "logs"), Events: rec,
	}, rec
}

func script(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func TestRunOK(t *testing.T) {
	tr, rec := newTransport(t, skeleton(t))
	model := "m-1"
	tr.Model = &model
	o := tr.RunTask(context.Background(), agent.Task{ID: "tsk_1", Text: script("say thinking", "tool echo {\"x\":1}", "usage 10 5", "result all done")})
	if o.Status != agent.ExitOK || o.Answer != "all done" || o.Turns != 2 || o.InputTokens != 10 || o.OutputTokens != 5 {
		t.Fatalf("outcome = %+v", o)
	}
	inf := rec.of("inference")
	if len(inf) != 2 || inf[0]["kind"] != "message" || inf[1]["kind"] != "tool_call" || inf[1]["tool"] != "echo" || inf[0]["model"] != "m-1" {
		t.Fatalf("inference lines = %v", inf)
	}
	// The turn that usage closed carries the counts; the other has none
	// (absent, not zero).
	if _, has := inf[0]["input_tokens"]; has || inf[1]["input_tokens"] != int64(10) || inf[1]["output_tokens"] != int64(5) {
		t.Fatalf("token counts = %v", inf)
	}
	for _, typ := range []string{"task_start", "harness_start", "harness_session", "harness_end", "task_end"} {
		if len(rec.of(typ)) != 1 {
			t.Errorf("%d %s records, want 1", len(rec.of(typ)), typ)
		}
	}
	hs := rec.of("harness_start")[0]
	if hs["version"] != "1.2.3" || hs["binary"] != tr.Binary || len(hs["account_env_unset"].([]string)) != 1 {
		t.Errorf("harness_start = %v", hs)
	}
	if te := rec.of("task_end")[0]; te["exit_status"] != agent.ExitOK || te["turns"] != 2 {
		t.Errorf("task_end = %v", te)
	}
}

// TestEnvironment: the harness gets rows 1 to 4 of Process environment and
// nothing of the test process's own environment.
func TestEnvironment(t *testing.T) {
	t.Setenv("MUR_TEST_SECRET", "leak")
	tr, rec := newTransport(t, skeleton(t))
	o := tr.RunTask(context.Background(), agent.Task{ID: "t", Text: script("env", "result ok")})
	if o.Status != agent.ExitOK {
		t.Fatalf("outcome = %+v", o)
	}
	var got string
	for _, e := range rec.events {
		if e.Type == event.TextDelta {
			got = e.Fields["text"].(string)
		}
	}
	// The skeleton's launch plan sets NO_COLOR=1 (row 2).
	want := "HOME=/home/x MURMUR_RECORDS_DIR=/rec MURMUR_RUNTIME_DIR=/rt NO_COLOR=1 USER=u"
	if got != want {
		t.Fatalf("harness environment:\n got %q\nwant %q", got, want)
	}
}

func TestEnvRowsOrder(t *testing.T) {
	e := Env{Allow: [][2]string{{"A", "1"}, {"USER", "spoof"}}, Account: [][2]string{{"USER", "real"}}, Session: [][2]string{{"MURMUR_RUNTIME_DIR", "/rt"}}}
	// The plan overrides env.allow, never the account or the session.
	got := strings.Join(e.Harness([]component.Pair{{"A", "plan"}, {"USER", "plan"}, {"MURMUR_RUNTIME_DIR", "plan"}}), " ")
	if want := "A=plan USER=real MURMUR_RUNTIME_DIR=/rt"; got != want {
		t.Fatalf("Harness = %q, want %q", got, want)
	}
	if got := strings.Join(e.Version(), " "); got != "A=1 USER=real" {
		t.Fatalf("Version = %q", got)
	}
	h := HostEnv([]string{"HOME", "GITHUB_TOKEN", "UNSET_X"}, func(n string) (string, bool) {
		v, ok := map[string]string{"HOME": "/h", "GITHUB_TOKEN": "t", "USER": "me"}[n]
		return v, ok
	}, func(n string) bool { return strings.HasSuffix(n, "_TOKEN") })
	if len(h.Allow) != 1 || h.Allow[0] != [2]string{"HOME", "/h"} || len(h.Account) != 1 || len(h.Unset) != 1 || h.Unset[0] != "LOGNAME" {
		t.Fatalf("HostEnv = %+v", h)
	}
}

func TestTurnLimit(t *testing.T) {
	tr, rec := newTransport(t, skeleton(t))
	tr.MaxTurns = 2
	o := tr.RunTask(context.Background(), agent.Task{ID: "t", Text: script("say one", "tool echo {}", "say three", "result never")})
	if o.Status != agent.ExitMaxTurns || o.Code != diag.RunHarnessTurn || o.Turns != 2 || !strings.Contains(o.Reason, "inference.max_turns (2)") {
		t.Fatalf("outcome = %+v", o)
	}
	if n := len(rec.of("inference")); n != 2 {
		t.Fatalf("%d inference lines, want 2", n)
	}
}

func TestFailedTurn(t *testing.T) {
	tr, _ := newTransport(t, skeleton(t))
	o := tr.RunTask(context.Background(), agent.Task{ID: "t", Text: script("say a", "fail the model refused")})
	if o.Status != agent.ExitFailed || o.Code != diag.RunHarnessTurn || !strings.Contains(o.Reason, "the model refused") {
		t.Fatalf("outcome = %+v", o)
	}
}

func TestInactivityLimit(t *testing.T) {
	tr, _ := newTransport(t, skeleton(t))
	tr.Idle = 300 * time.Millisecond
	start := time.Now()
	o := tr.RunTask(context.Background(), agent.Task{ID: "t", Text: script("say a", "hang")})
	if o.Status != agent.ExitFailed || o.Code != diag.RunHarnessIdle {
		t.Fatalf("outcome = %+v", o)
	}
	if el := time.Since(start); el > 15*time.Second {
		t.Fatalf("the idle harness ended after %s", el)
	}
}

// TestWorkingHarnessNotIdle: output keeps a slow harness alive past the
// inactivity limit's length.
func TestWorkingHarnessNotIdle(t *testing.T) {
	tr, _ := newTransport(t, skeleton(t))
	// Each pause is well inside the limit (a loaded machine delays the
	// lines), the three together well past it.
	tr.Idle = 2 * time.Second
	o := tr.RunTask(context.Background(), agent.Task{ID: "t", Text: script("sleep 0.9", "noise 1", "sleep 0.9", "noise 1", "sleep 0.9", "result slow but fine")})
	if o.Status != agent.ExitOK {
		t.Fatalf("outcome = %+v", o)
	}
}

func TestCancelSignalInt(t *testing.T) {
	tr, rec := newTransport(t, skeleton(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan agent.Outcome)
	go func() { done <- tr.RunTask(ctx, agent.Task{ID: "t", Text: script("say a", "sleep 60", "result late")}) }()
	rec.wait(t, "harness_session")
	start := time.Now()
	cancel()
	o := <-done
	if o.Status != agent.ExitCanceled {
		t.Fatalf("outcome = %+v", o)
	}
	// The fake ends on SIGINT at once: the grace was not spent.
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("canceling took %s", el)
	}
	if end := rec.of("harness_end"); len(end) != 1 || end[0]["exit_code"] != 0 {
		t.Fatalf("harness_end = %v", end)
	}
}

func TestCancelGraceThenKill(t *testing.T) {
	tr, rec := newTransport(t, skeleton(t))
	tr.Grace = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan agent.Outcome)
	go func() { done <- tr.RunTask(ctx, agent.Task{ID: "t", Text: script("say a", "hang")}) }()
	rec.wait(t, "harness_session")
	cancel()
	o := <-done
	if o.Status != agent.ExitCanceled {
		t.Fatalf("outcome = %+v", o)
	}
	if end := rec.of("harness_end"); len(end) != 1 || end[0]["signal"] != "killed" {
		t.Fatalf("harness_end = %v", end)
	}
}

// stdinStop is the skeleton with its plan changed to keep stdin open and
// interrupt with "stop\n", as a stdin-message driver plans.
type stdinStop struct{ Driver }

func (d stdinStop) Launch(ctx context.Context, r component.LaunchRequest) (component.LaunchPlan, error) {
	p, err := d.Driver.Launch(ctx, r)
	p.CloseStdin, p.Interrupt = false, []byte("stop\n")
	return p, err
}

func TestCancelStdinMessage(t *testing.T) {
	tr, rec := newTransport(t, stdinStop{skeleton(t)})
	tr.Desc.Interrupt = component.InterruptStdinMessage
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan agent.Outcome)
	go func() { done <- tr.RunTask(ctx, agent.Task{ID: "t", Text: script("say a", "stdin-stop")}) }()
	rec.wait(t, "harness_session")
	cancel()
	o := <-done
	if o.Status != agent.ExitCanceled {
		t.Fatalf("outcome = %+v", o)
	}
	if end := rec.of("harness_end"); len(end) != 1 || end[0]["exit_code"] != 0 {
		t.Fatalf("harness_end = %v (the harness should have read the interrupt and exited)", end)
	}
}

func TestCancelUnsupportedKills(t *testing.T) {
	tr, rec := newTransport(t, skeleton(t))
	tr.Desc.Interrupt = component.InterruptUnsupported
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan agent.Outcome)
	go func() { done <- tr.RunTask(ctx, agent.Task{ID: "t", Text: script("say a", "sleep 60")}) }()
	rec.wait(t, "harness_session")
	cancel()
	if o := <-done; o.Status != agent.ExitCanceled {
		t.Fatalf("outcome = %+v", o)
	}
	if end := rec.of("harness_end"); len(end) != 1 || end[0]["signal"] != "killed" {
		t.Fatalf("harness_end = %v", end)
	}
}

func TestBadOutput(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         string
	}{
		{"flood", script("say a", "flood 3000000", "result x"), "longer than 1048576 bytes"},
		{"invalid JSON", script("say a", "badjson", "result x"), "line 3: process driver 'local/skeleton' could not read it"},
		{"dies mid-turn", script("say a", "die 3"), "exited with status 3 before it reported a result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := newTransport(t, skeleton(t))
			o := tr.RunTask(context.Background(), agent.Task{ID: "t", Text: tc.script})
			if o.Status != agent.ExitFailed || o.Code != diag.RunTaskFailed || !strings.Contains(o.Reason, tc.want) {
				t.Fatalf("outcome = %+v, want a failure saying %q", o, tc.want)
			}
		})
	}
}

// TestManyLines: a harness printing many short lines is read whole.
func TestManyLines(t *testing.T) {
	tr, _ := newTransport(t, skeleton(t))
	o := tr.RunTask(context.Background(), agent.Task{ID: "t", Text: script("noise 200000", "result read it all")})
	if o.Status != agent.ExitOK || o.Answer != "read it all" {
		t.Fatalf("outcome = %+v", o)
	}
}

// TestSessionLostOnStderr: a harness that refuses an unknown session only
// on stderr, as Codex does (`codex exec resume ID` with no such thread
// prints "Error: thread/resume: thread/resume failed: no rollout found
// for thread id ID" and exits 1 with nothing on stdout), fails the turn
// with E-RUN-036, not E-RUN-040, and the stale map entry goes. A harness
// that exits non-zero after it named its session is an ordinary failure.
func TestSessionLostOnStderr(t *testing.T) {
	tr, _ := newTransport(t, skeleton(t))
	tr.Threaded = true
	tr.Sessions = OpenSessionMap(t.TempDir())
	codexLike := filepath.Join(t.TempDir(), "codex-like")
	if err := os.WriteFile(codexLike, []byte(`#!/bin/sh
case " $* " in
*" --resume "*) echo "Error: thread/resume: thread/resume failed: no rollout found for thread id (code -32600)" >&2; exit 1 ;;
esac
exec `+tr.Binary+` "$@"
`), 0o755); err != nil {
		t.Fatal(err)
	}
	tr.Binary = codexLike
	if err := tr.Sessions.Put("ctx-a", "0199a213-81c0-7800-8aa1-bbab2a035a53"); err != nil {
		t.Fatal(err)
	}
	o := tr.RunTask(context.Background(), agent.Task{ID: "t1", ContextID: "ctx-a", Text: script("result one")})
	if o.Status != agent.ExitFailed || o.Code != diag.RunHarnessSession || !strings.Contains(o.Reason, "0199a213-81c0-7800-8aa1-bbab2a035a53") {
		t.Fatalf("resuming a session the harness does not have: %+v", o)
	}
	if id, _ := tr.Sessions.Get("ctx-a"); id != "" {
		t.Fatalf("map keeps %q after E-RUN-036", id)
	}
	log, err := os.ReadFile(filepath.Join(tr.Logs, "harness.log"))
	if err != nil || !strings.Contains(string(log), "no rollout found") {
		t.Fatalf("harness.log = %q, %v", log, err)
	}
	// Unmapped now, the next task starts a new session; one that then
	// exits non-zero without a result is E-RUN-040 as before.
	o = tr.RunTask(context.Background(), agent.Task{ID: "t2", ContextID: "ctx-a", Text: script("die 3")})
	if o.Status != agent.ExitFailed || o.Code != diag.RunTaskFailed {
		t.Fatalf("a new session's failed exit: %+v", o)
	}
}

func TestSpendCeiling(t *testing.T) {
	tr, rec := newTransport(t, skeleton(t))
	tr.Session = spend.NewSessionCeiling(20)
	tr.Ceilings = []spend.Admitter{tr.Session}
	o := tr.RunTask(context.Background(), agent.Task{ID: "t1", Text: script("say a", "usage 15 10", "say b", "result x")})
	if o.Status != agent.ExitSpendCeiling || o.InputTokens != 15 || o.OutputTokens != 10 || !strings.Contains(o.Reason, "spend ceiling reached") {
		t.Fatalf("outcome = %+v", o)
	}
	if tr.Session.Used() != 25 {
		t.Fatalf("charged %d, want 25 (the closed turn is charged in full)", tr.Session.Used())
	}
	// The refusal latches: the next task never starts a harness.
	o = tr.RunTask(context.Background(), agent.Task{ID: "t2", Text: script("result y")})
	if o.Status != agent.ExitSpendCeiling || len(rec.of("harness_start")) != 1 || len(rec.of("spend_ceiling_reached")) != 2 {
		t.Fatalf("second task: %+v, %d harness starts", o, len(rec.of("harness_start")))
	}
}

func TestSessionMap(t *testing.T) {
	tr, rec := newTransport(t, skeleton(t))
	tr.Threaded = true
	tr.Sessions = OpenSessionMap(t.TempDir())
	o := tr.RunTask(context.Background(), agent.Task{ID: "t1", ContextID: "ctx-a", Text: script("args", "result one")})
	if o.Status != agent.ExitOK {
		t.Fatalf("first task: %+v", o)
	}
	id, err := tr.Sessions.Get("ctx-a")
	if err != nil || !strings.HasPrefix(id, "hs-") {
		t.Fatalf("map after the first task: %q, %v", id, err)
	}
	// The second task of the context is launched on the same session.
	o = tr.RunTask(context.Background(), agent.Task{ID: "t2", ContextID: "ctx-a", Text: script("args", "result two")})
	if o.Status != agent.ExitOK {
		t.Fatalf("second task: %+v", o)
	}
	var args []string
	for _, e := range rec.events {
		if e.Type == event.TextDelta {
			args = append(args, e.Fields["text"].(string))
		}
	}
	if len(args) != 2 || strings.Contains(args[0], "--resume") || !strings.Contains(args[1], "--resume "+id) {
		t.Fatalf("harness arguments = %q, want the second resumed on %s", args, id)
	}
	// A session the harness cannot find fails the turn with E-RUN-036 and
	// leaves the context unmapped.
	if err := tr.Sessions.Put("ctx-a", "hs-gone"); err != nil {
		t.Fatal(err)
	}
	o = tr.RunTask(context.Background(), agent.Task{ID: "t3", ContextID: "ctx-a", Text: script("result three")})
	if o.Status != agent.ExitFailed || o.Code != diag.RunHarnessSession {
		t.Fatalf("resuming a lost session: %+v", o)
	}
	if id, _ := tr.Sessions.Get("ctx-a"); id != "" {
		t.Fatalf("map keeps %q after E-RUN-036", id)
	}
	// Stateless tasks are never resumed.
	tr.Threaded = false
	tr.Sessions.Put("ctx-a", "hs-gone")
	if o := tr.RunTask(context.Background(), agent.Task{ID: "t4", ContextID: "ctx-a", Text: script("result four")}); o.Status != agent.ExitOK {
		t.Fatalf("stateless task: %+v", o)
	}
}

// TestOutputAfterExitKeepsComing: a harness that exits leaving a process
// that still prints is read while that output keeps coming (each line
// restarts the one-second window), so a result printed 1.2 s after the
// exit, 0.6 s after the line before it, ends the task ok.
func TestOutputAfterExitKeepsComing(t *testing.T) {
	tr, _ := newTransport(t, skeleton(t))
	o := tr.RunTask(context.Background(), agent.Task{ID: "tsk_1", Text: script("linger 0.6 late but whole")})
	if o.Status != agent.ExitOK || o.Answer != "late but whole" {
		t.Fatalf("outcome = %+v", o)
	}
}
