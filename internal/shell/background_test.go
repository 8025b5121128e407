package shell

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var workIDRe = regexp.MustCompile(`^wrk_[0-9a-f]{32}$`)

func TestWorkID(t *testing.T) {
	a, b := newWorkID(), newWorkID()
	if !workIDRe.MatchString(a) || a == b {
		t.Fatalf("ids %q %q", a, b)
	}
	if a[4+12] != '7' {
		t.Errorf("%q is not a UUIDv7", a)
	}
}

func TestGraceDemotesAndBackgroundCommandDelivers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(p *Policy) { p.GraceSecs = grace(1) })
	ctx := context.Background()

	// Exiting within the grace window returns to the turn. A window no
	// load reaches, so the command's speed on a busy machine does not
	// decide the outcome.
	long := newFixture(t, func(p *Policy) { p.GraceSecs = grace(3600) })
	if r := long.call(t, "bash", "sleep 0.2; echo quick"); r.WorkID != "" || r.Stdout != "quick\n" {
		t.Fatalf("quick command: %q", r.Text())
	}

	// The command runs until the test lets it go (a FIFO), so it is still
	// running at the grace's end and at the status read however loaded the
	// machine is; it says when it has printed its first lines (another).
	ready, proceed := filepath.Join(f.pol.Tmp, "ready"), filepath.Join(f.pol.Tmp, "proceed")
	for _, p := range []string{ready, proceed} {
		if err := unix.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	command := `echo before; echo warn >&2; echo > ` + ready + `; read x < ` + proceed + `; echo after; exit 4`
	start := time.Now()
	r := f.call(t, "bash", command)
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("demoted after %v, before the 1 s grace", d)
	}
	if !workIDRe.MatchString(r.WorkID) {
		t.Fatalf("work id %q", r.WorkID)
	}
	text := r.Text()
	for _, w := range []string{r.WorkID, "background-command", "still running"} {
		if !strings.Contains(strings.ToLower(text), strings.ToLower(w)) {
			t.Errorf("demotion text %q lacks %q", text, w)
		}
	}
	det := f.rec.of("shell_detached")
	if len(det) != 1 || det[0].Fields["work_id"] != r.WorkID || det[0].Fields["command"] == "" {
		t.Fatalf("shell_detached = %v", det)
	}
	if got := f.s.Running(); len(got) != 1 || got[0] != r.WorkID {
		t.Errorf("Running = %v", got)
	}

	if _, err := os.ReadFile(ready); err != nil {
		t.Fatal(err)
	}
	// "before" is in the pipe; the session's reader copies it to the log
	// on its own goroutine, so the status is read until it shows it.
	var st string
	for deadline := time.Now().Add(settle); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if st, err = f.s.Background(ctx, BackgroundRequest{WorkID: r.WorkID}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(st, "before") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(st, "State: running") || !strings.Contains(st, "before") {
		t.Errorf("status = %q", st)
	}
	if len(f.rec.of("shell_completed")) != 0 {
		t.Fatal("completed before the exit reached the agent")
	}

	if err := os.WriteFile(proceed, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := f.s.Background(ctx, BackgroundRequest{WorkID: r.WorkID, Action: "wait"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Exit code: 4", "Status: error", "before", "warn", "after"} {
		if !strings.Contains(w, want) {
			t.Errorf("wait result %q lacks %q", w, want)
		}
	}
	comp := f.rec.of("shell_completed")
	if len(comp) != 1 || comp[0].Fields["delivered_via"] != ViaBackgroundCommand || comp[0].Fields["exit_code"] != 4 || comp[0].Fields["status"] != "error" {
		t.Fatalf("shell_completed = %v", comp)
	}
	// A second read and a completion task do not write it again.
	if _, err := f.s.Background(ctx, BackgroundRequest{WorkID: r.WorkID}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.s.Deliver(r.WorkID, ViaCompletionTask); ok || len(f.rec.of("shell_completed")) != 1 {
		t.Error("exit delivered twice")
	}

	log, err := os.ReadFile(r.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	want := "Command: bash " + command + "\n\nbefore\nwarn\nafter\n\nExit code: 4\n"
	if string(log) != want || filepath.Base(r.LogPath) != r.WorkID+".log" {
		t.Errorf("log %s =\n%q\nwant\n%q", r.LogPath, log, want)
	}
	if len(f.s.Running()) != 0 {
		t.Error("still listed as running")
	}

	// Unknown ids and actions.
	if _, err := f.s.Background(ctx, BackgroundRequest{WorkID: "wrk_nope"}); !errors.Is(err, ErrUnknownWork) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := f.s.Background(ctx, BackgroundRequest{WorkID: r.WorkID, Action: "explode"}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("bad action: %v", err)
	}
	// Nothing abandoned at the end: the exit was delivered.
	if ab, err := f.s.Close(ctx); err != nil || len(ab) != 0 {
		t.Errorf("Close = %v, %v", ab, err)
	}
}

func TestGraceZeroAndStop(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(p *Policy) { p.GraceSecs = grace(0) })
	ctx := context.Background()
	r := f.call(t, "bash", "echo up; sleep 30")
	if r.WorkID == "" {
		t.Fatalf("grace 0 did not demote at once: %q", r.Text())
	}
	out, err := f.s.Background(ctx, BackgroundRequest{WorkID: r.WorkID, Action: "wait", TimeoutSecs: 1})
	if err != nil || !strings.Contains(out, "State: running") {
		t.Fatalf("timed wait = %q, %v", out, err)
	}
	out, err = f.s.Background(ctx, BackgroundRequest{WorkID: r.WorkID, Action: "stop"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Exit code: 143") || !strings.Contains(out, "Status: signal") {
		t.Errorf("stop = %q", out)
	}
}

func TestCancelDemotesEvenWithoutGrace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	r, err := f.s.Call(ctx, "bash", "sleep 30")
	if err != nil || r.WorkID == "" {
		t.Fatalf("cancel: %v %q", err, r.Text())
	}
	if strings.Contains(r.Text(), "background-command") {
		t.Error("background-command offered without shell_grace_secs")
	}
	if _, err := f.s.Background(context.Background(), BackgroundRequest{WorkID: r.WorkID}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("background-command without grace: %v", err)
	}
	for _, tl := range f.s.Tools() {
		if tl.Name == BackgroundTool {
			t.Error("background-command listed without grace")
		}
	}
}

func TestSessionEndKillAndReport(t *testing.T) {
	t.Parallel()
	var exits []Completion
	done := make(chan struct{}, 1)
	f := newFixture(t, func(p *Policy) {
		p.GraceSecs = grace(0)
		p.OnBackgroundExit = func(c Completion) { exits = append(exits, c); done <- struct{}{} }
	})
	ctx := context.Background()
	long := f.call(t, "bash", "echo printed; sleep 45; echo done")
	fin := f.call(t, "bash", "sleep 0.2; echo finished")
	<-done // fin exited; its exit was never read by the agent
	if len(exits) != 1 || exits[0].WorkID != fin.WorkID || exits[0].ExitCode != 0 || exits[0].Status != "ok" {
		t.Fatalf("OnBackgroundExit = %+v", exits)
	}
	time.Sleep(100 * time.Millisecond)
	pid := f.s.work[long.WorkID].pgid

	ab, err := f.s.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ab) != 2 || ab[0].WorkID != long.WorkID || ab[0].Finished || !ab[1].Finished || ab[1].ExitCode != 0 {
		t.Fatalf("abandoned = %+v", ab)
	}
	waitGone(t, pid)
	rep := f.errw.String()
	for _, want := range []string{
		"[capsule-runtime] 2 background shell commands discarded at session end.",
		"Session ses_test ended while 2 demoted shell commands were unaccounted for.",
		"work_id: " + long.WorkID, "command: echo printed; sleep 45; echo done", "state: killed at session end after ",
		"result: none — it was killed before it finished", long.LogPath,
		"work_id: " + fin.WorkID, "state: finished during teardown after ", "status: ok", "exit_code: 0",
		"result: on disk — it finished too late",
		"Declare lifecycle.task_acceptance: queue with lifecycle.after_task: sleep",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	boot, err := os.ReadFile(filepath.Join(f.pol.RecordsDir, "logs", "bootstrap.log"))
	if err != nil || string(boot) != rep {
		t.Errorf("bootstrap.log = %q, %v", boot, err)
	}
	if n := len(f.rec.of("shell_abandoned")); n != 2 {
		t.Errorf("shell_abandoned records = %d", n)
	}
	log, _ := os.ReadFile(long.LogPath)
	if !strings.Contains(string(log), "printed") || strings.Contains(string(log), "Exit code:") {
		t.Errorf("killed command's log = %q", log)
	}
	if ok, _ := f.s.Deliver(fin.WorkID, ViaCompletionTask); ok {
		t.Error("an abandoned exit was delivered")
	}
}

func TestExecuteAndNative(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(p *Policy) { p.GraceSecs = grace(5) })
	ctx := context.Background()
	r, err := f.s.Execute(ctx, "bash", []string{"-c", `echo "$FOO"; echo "${X_TOKEN:-none}"; exit 2`}, [][2]string{{"FOO", "bar"}, {"X_TOKEN", "t"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 2 || r.Stdout != "bar\nnone\n" || r.Truncated || r.FullOutputPath != nil {
		t.Errorf("execute = %+v", r)
	}
	if _, err := f.s.Execute(ctx, "python9", nil, nil); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("execute of a disallowed binary: %v", err)
	}

	tool := filepath.Join(t.TempDir(), "native-tool")
	script := "#!/bin/sh\necho \"input=$1\"\necho \"config=${MURMUR_ARTIFACT_CONFIG-unset}\"\necho \"state=$MURMUR_STATE_DIR\"\necho \"home=$HOME\"\n"
	if err := os.WriteFile(tool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	nr, err := f.s.RunNative(ctx, NativeTool{Name: "fmt", Path: tool, Config: []byte(`{"k":1}`), StateDir: "/st"}, []byte(`{"q":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "input={\"q\":\"x\"}\nconfig={\"k\":1}\nstate=/st\nhome=" + f.pol.Home + "\n"
	if nr.Stdout != want {
		t.Errorf("native stdout %q, want %q", nr.Stdout, want)
	}
	nr, err = f.s.RunNative(ctx, NativeTool{Name: "fmt", Path: tool}, []byte(`{}`))
	if err != nil || !strings.Contains(nr.Stdout, "config=unset") {
		t.Errorf("native without config: %q %v", nr.Stdout, err)
	}
	if _, err := f.s.RunNative(ctx, NativeTool{Name: "rel", Path: "rel/tool"}, nil); !errors.Is(err, ErrPolicy) {
		t.Errorf("relative native path: %v", err)
	}
}

func TestContainerIsUsed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.s.c.(*bare)
	f.call(t, "echo", "hi")
	if c.prepared != 1 {
		t.Errorf("Prepare called %d times", c.prepared)
	}
	f.s.c = failing{}
	if _, err := f.s.Call(context.Background(), "echo", "hi"); err == nil || !strings.Contains(err.Error(), "contain") {
		t.Errorf("failed Prepare ran the command: %v", err)
	}
	f.s.c = clearsPgid{}
	if _, err := f.s.Call(context.Background(), "echo", "hi"); !errors.Is(err, ErrPolicy) {
		t.Errorf("cleared Setpgid: %v", err)
	}
}

type failing struct{}

func (failing) Prepare(*execCmd) error { return errors.New("no landlock") }

type clearsPgid struct{}

func (clearsPgid) Prepare(c *execCmd) error { c.SysProcAttr.Setpgid = false; return nil }

func TestManifests(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(p *Policy) { p.Allow = []string{"bash", "jq"}; p.GraceSecs = grace(30) })
	if err := f.s.WriteManifests(); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"bash", "jq"} {
		m, err := os.ReadFile(filepath.Join(f.pol.RuntimeDir, "tools", b, "murmur.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"name: \"" + b + "\"", "runtime: tool", "input_schema: ", `\"command\"`, "30 s"} {
			if !strings.Contains(string(m), want) {
				t.Errorf("%s manifest lacks %q:\n%s", b, want, m)
			}
		}
	}
	tools := f.s.Tools()
	if len(tools) != 3 || tools[2].Name != BackgroundTool || !strings.Contains(tools[0].Description, "bash -c") || strings.Contains(tools[1].Description, "jq -c") {
		t.Errorf("tools = %+v", tools)
	}
	if _, err := os.Stat(filepath.Join(f.pol.RuntimeDir, "tools", BackgroundTool)); err == nil {
		t.Error("background-command got a shell manifest")
	}
}

type execCmd = exec.Cmd

// limiter attributes a SIGKILL to a limit, as sandbox.Session.LimitHit does
// for an out-of-memory kill.
type limiter struct{ bare }

func (limiter) LimitHit(_ error, st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return "The command was killed: the session's processes together exceeded cgroup_memory_bytes (1 bytes)."
	}
	return ""
}

func TestResourceLimitLine(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.s.c = &limiter{}
	r := f.call(t, "bash", "kill -9 $$")
	if r.Status != "resource_limit" || !strings.HasSuffix(r.Text(), "cgroup_memory_bytes (1 bytes).\n") {
		t.Errorf("status %q text %q", r.Status, r.Text())
	}
	if ev := f.rec.of("shell"); len(ev) != 1 || ev[0].Fields["status"] != "resource_limit" || ev[0].Fields["resource_limit"] == nil {
		t.Errorf("shell record = %v", ev)
	}
	if r := f.call(t, "bash", "exit 1"); r.Status != "error" || r.Limit != "" {
		t.Errorf("plain failure: %+v", r)
	}
}

// starting is a container that starts commands itself, as
// *sandbox.Session does; it counts the commands it started.
type starting struct{ n *int }

func (starting) Prepare(*execCmd) error { return nil }

func (s starting) Start(c *execCmd) error { *s.n++; return c.Start() }

func TestContainerStarterStartsCommands(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	n := 0
	f.s.c = starting{n: &n}
	r, err := f.s.Call(context.Background(), "echo", "hi")
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || !strings.Contains(r.Text(), "hi") {
		t.Fatalf("container started %d commands; result %q", n, r.Text())
	}
}
