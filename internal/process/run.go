package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/spend"
)

// The transport's fixed limits (spec 004: not manifest settings).
const (
	// IdleLimit: a run with neither a line of output nor a tool call for
	// this long is killed with E-RUN-035.
	IdleLimit = 600 * time.Second
	// InterruptGrace: a harness sent a graceful interrupt has this long
	// to end on its own before it is killed.
	InterruptGrace = 10 * time.Second
	// MaxLine is the longest harness output line read; a longer one fails
	// the task rather than grow mur without bound.
	MaxLine = 1 << 20
)

// Starter starts a harness contained: *sandbox.Session is one (Prepare
// then Start).
type Starter interface {
	Prepare(cmd *exec.Cmd) error
	Start(cmd *exec.Cmd) error
}

// ToolServer stands up the loopback tool server for one task: the URL,
// token and tool names handed to the driver, and touch, which the server
// calls on every tool call (the inactivity limit counts them). stop ends
// it. A nil ToolServer func runs the harness with no tools.
type ToolServer func(ctx context.Context, touch func()) (server component.ToolServer, stop func(), err error)

// Transport runs each task as one harness run.
type Transport struct {
	Driver     Driver
	DriverName string
	Desc       component.ProcessDescription
	// Binary is the resolved harness; Version what the check read ("" if
	// nothing).
	Binary, Version string
	Env             Env
	Starter         Starter
	Workdir         string
	// Logs is the session's logs directory: the harness's stderr goes to
	// harness.log there.
	Logs   string
	Events event.Sink
	// SystemPrompt is the composed prompt (nil: none); Model and Config
	// inference.model and inference.driver.config as JSON.
	SystemPrompt, Model, Config *string
	MaxTurns                    int
	// Ceilings are the spend ceilings in effect; Session is
	// inference.max_session_tokens among them, latched on a refusal.
	Ceilings []spend.Admitter
	Session  *spend.SessionCeiling
	// Sessions is the harness session map (nil: context.record: off);
	// Threaded is lifecycle.conversation: threaded.
	Sessions *SessionMap
	Threaded bool
	Tools    ToolServer
	// Idle and Grace replace IdleLimit and InterruptGrace in tests.
	Idle, Grace time.Duration

	latched *spend.Refusal
	closer  interface{ Close() error }
}

func (t *Transport) emit(typ string, f map[string]any) {
	if t.Events != nil {
		t.Events.Emit(event.Event{Type: typ, Fields: f})
	}
}

// run is one task's harness run.
type run struct {
	t        *Transport
	task     agent.Task
	out      agent.Outcome
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	plan     component.LaunchPlan
	pending  map[string]any // the open turn's inference line
	turnAt   time.Time
	activity chan struct{}
	// ended is closed once the harness has exited.
	ended    chan struct{}
	waitErr  error
	lines    chan lineOrErr
	stopRead chan struct{}
	stopOnce sync.Once
	lineNo   int
	session  string
	// resumed is the harness session the launch asked to resume.
	resumed string
	stdout  *os.File
}

// RunTask runs the task as one harness run and returns how it ended.
func (t *Transport) RunTask(ctx context.Context, tk agent.Task) agent.Outcome {
	r := &run{t: t, task: tk, out: agent.Outcome{TaskID: tk.ID}, activity: make(chan struct{}, 1), ended: make(chan struct{})}
	start := map[string]any{"task_id": tk.ID, "context_id": tk.ContextID, "max_turns": t.MaxTurns}
	if tk.Origin != "" {
		start["origin"] = string(tk.Origin)
	}
	t.emit("task_start", start)
	if t.latched != nil {
		return t.end(r.spendRefused(t.latched))
	}
	return t.end(r.go_(ctx))
}

// end writes task_failed (when it failed) and task_end, as the agent loop
// does.
func (t *Transport) end(o agent.Outcome) agent.Outcome {
	if o.Status == agent.ExitFailed {
		t.emit("task_failed", map[string]any{"task_id": o.TaskID, "cause": o.Cause, "reason": o.Reason, "code": string(o.Code)})
	}
	f := map[string]any{
		"task_id": o.TaskID, "exit_status": o.Status, "turns": o.Turns,
		"input_tokens": o.InputTokens, "output_tokens": o.OutputTokens,
	}
	if o.Reason != "" {
		f["reason"] = o.Reason
	}
	t.emit("task_end", f)
	return o
}

func (r *run) fail(code diag.Code, cause, reason string) agent.Outcome {
	r.out.Status, r.out.Code, r.out.Cause, r.out.Reason = agent.ExitFailed, code, cause, reason
	return r.out
}

// go_ plans, starts and reads the harness.
func (r *run) go_(ctx context.Context) agent.Outcome {
	t := r.t
	req := component.LaunchRequest{Prompt: r.task.Text, SystemPrompt: t.SystemPrompt, Model: t.Model, Config: t.Config, MaxTurns: uint32(max(t.MaxTurns, 0))}
	resume := ""
	if t.Threaded && t.Sessions != nil && r.task.ContextID != "" {
		id, err := t.Sessions.Get(r.task.ContextID)
		if err != nil {
			return r.fail(diag.RunTaskFailed, "harness", err.Error())
		}
		if id != "" {
			resume = id
			req.ResumeSession = &resume
			r.resumed = id
		}
	}
	if t.Tools != nil {
		srv, stop, err := t.Tools(ctx, r.touch)
		if err != nil {
			return r.fail(diag.RunTaskFailed, "harness", "the loopback tool server did not start: "+err.Error())
		}
		defer stop()
		req.Tools = &srv
	}
	plan, err := t.Driver.Launch(ctx, req)
	if err != nil {
		why := err.Error()
		var de *component.DriverError
		if errors.As(err, &de) {
			why = de.Msg
		}
		return r.fail(diag.RunTaskFailed, "harness", fmt.Sprintf("process driver '%s' did not plan the launch: %s", t.DriverName, why))
	}
	r.plan = plan
	if err := r.start(); err != nil {
		return r.fail(diag.RunTaskFailed, "harness", fmt.Sprintf("harness %s did not start: %v", t.Binary, err))
	}
	startedAt := time.Now()
	o := r.read(ctx)
	r.flushTurn(nil)
	<-r.ended
	// A process the harness left holding its stdout no longer holds the
	// reader.
	r.stopOnce.Do(func() { close(r.stopRead) })
	r.stdout.Close()
	end := map[string]any{"task_id": r.task.ID, "pid": r.cmd.Process.Pid, "duration_ms": time.Since(startedAt).Milliseconds()}
	if st := r.cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			end["signal"] = ws.Signal().String()
		} else {
			end["exit_code"] = st.ExitCode()
		}
	}
	t.emit("harness_end", end)
	return o
}

// start starts the harness contained, with its environment and the
// launch plan's stdin.
func (r *run) start() error {
	t := r.t
	cmd := exec.Command(t.Binary, r.plan.Args...)
	cmd.Dir = t.Workdir
	cmd.Env = t.Env.Harness(r.plan.EnvSet)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(t.Logs, 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(t.Logs, "harness.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd.Stderr = logf
	pr, pw, err := os.Pipe()
	if err != nil {
		logf.Close()
		return err
	}
	cmd.Stdout = pw
	if err := t.Starter.Prepare(cmd); err != nil {
		logf.Close()
		pr.Close()
		pw.Close()
		return err
	}
	err = t.Starter.Start(cmd)
	// The harness holds its own copies; the read end sees EOF once every
	// process that inherited stdout has closed it.
	pw.Close()
	logf.Close()
	if err != nil {
		pr.Close()
		return err
	}
	r.cmd, r.stdin, r.stdout = cmd, stdin, pr
	f := map[string]any{"task_id": r.task.ID, "binary": t.Binary, "pid": cmd.Process.Pid, "driver": t.DriverName}
	if t.Version != "" {
		f["version"] = t.Version
	}
	if t.Env.Unset != nil {
		f["account_env_unset"] = t.Env.Unset
	}
	t.emit("harness_start", f)
	r.lines, r.stopRead = make(chan lineOrErr), make(chan struct{})
	go readLines(pr, r.lines, r.stopRead)
	go func() {
		r.waitErr = cmd.Wait()
		close(r.ended)
	}()
	go func() {
		if len(r.plan.Stdin) > 0 {
			stdin.Write(r.plan.Stdin)
		}
		if r.plan.CloseStdin {
			stdin.Close()
		}
	}()
	return nil
}

// lineOrErr is one line of harness output, or why reading stopped.
type lineOrErr struct {
	text string
	err  error
}

var errLongLine = fmt.Errorf("the harness printed a line longer than %d bytes", MaxLine)

// readLines sends each line of r to lines until EOF, then closes lines.
// Once stop is closed it drains r unread, so the harness never blocks on
// a full pipe while it is being stopped.
func readLines(rd io.Reader, lines chan<- lineOrErr, stop <-chan struct{}) {
	defer close(lines)
	br := bufio.NewReaderSize(rd, 64<<10)
	send := func(l lineOrErr) bool {
		select {
		case lines <- l:
			return true
		case <-stop:
			io.Copy(io.Discard, br)
			return false
		}
	}
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLine {
			send(lineOrErr{err: errLongLine})
			// Keep the pipe drained until the harness is stopped.
			<-stop
			io.Copy(io.Discard, br)
			return
		}
		buf = append(buf, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == nil:
			line := buf[:len(buf)-1]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			if !send(lineOrErr{text: string(line)}) {
				return
			}
			buf = buf[:0]
		default:
			if len(buf) > 0 && !send(lineOrErr{text: string(buf)}) {
				return
			}
			if err != io.EOF {
				send(lineOrErr{err: err})
				<-stop
				io.Copy(io.Discard, br)
			}
			return
		}
	}
}

// touch records activity: a tool call through the tool server.
func (r *run) touch() {
	select {
	case r.activity <- struct{}{}:
	default:
	}
}

func (r *run) idle() time.Duration {
	if r.t.Idle > 0 {
		return r.t.Idle
	}
	return IdleLimit
}

func (r *run) grace() time.Duration {
	if r.t.Grace > 0 {
		return r.t.Grace
	}
	return InterruptGrace
}

// stop stops reading and kills the harness's whole process group.
func (r *run) kill() {
	r.stopOnce.Do(func() { close(r.stopRead) })
	if r.cmd != nil && r.cmd.Process != nil {
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		r.cmd.Process.Kill()
	}
}

// waitOrKill gives the harness the interrupt grace to exit on its own,
// then kills it.
func (r *run) waitOrKill() {
	r.stopOnce.Do(func() { close(r.stopRead) })
	select {
	case <-r.ended:
	case <-time.After(r.grace()):
		r.kill()
	}
}

// read follows the harness's output to the task's end.
func (r *run) read(ctx context.Context) agent.Outcome {
	idle := time.NewTimer(r.idle())
	defer idle.Stop()
	// Once the harness has exited, what it wrote before is still read;
	// a process it left holding stdout is given a second after the last
	// line, no more. A line that is ready when the second ends is read
	// first (select picks at random among ready cases), and each line
	// restarts the second, so a loaded machine's slow reader does not cut
	// the output short.
	ended := r.ended
	var settle <-chan time.Time
	reset := func() {
		if !idle.Stop() {
			select {
			case <-idle.C:
			default:
			}
		}
		idle.Reset(r.idle())
	}
	for {
		select {
		case <-ctx.Done():
			return r.cancel(ctx)
		case <-idle.C:
			r.kill()
			return r.fail(diag.RunHarnessIdle, "harness", fmt.Sprintf("the harness printed no line and made no tool call for %s and was killed", r.idle()))
		case <-r.activity:
			reset()
		case <-ended:
			ended, settle = nil, time.After(time.Second)
		case <-settle:
			select {
			case l, ok := <-r.lines:
				if o, done := r.line(ctx, l, ok, reset); done {
					return o
				}
				settle = time.After(time.Second)
			default:
				return r.exited(ctx)
			}
		case l, ok := <-r.lines:
			if o, done := r.line(ctx, l, ok, reset); done {
				return o
			}
			if ended == nil {
				settle = time.After(time.Second)
			}
		}
	}
}

// line handles one receive from the reader: a line of output, or its
// end (ok false). done says the task is over with o.
func (r *run) line(ctx context.Context, l lineOrErr, ok bool, reset func()) (o agent.Outcome, done bool) {
	if !ok {
		return r.exited(ctx), true
	}
	// select picks at random among ready cases: a line that came
	// with the cancel must not be parsed under the ended context
	// (the driver call would fail and the task read as failed).
	if ctx.Err() != nil {
		return r.cancel(ctx), true
	}
	reset()
	if l.err != nil {
		r.kill()
		return r.fail(diag.RunTaskFailed, "harness", "harness output: "+l.err.Error()), true
	}
	r.lineNo++
	evs, err := r.t.Driver.ParseLine(ctx, l.text)
	if err != nil {
		r.kill()
		why := err.Error()
		var de *component.DriverError
		if errors.As(err, &de) {
			why = de.Msg // the driver's own words; a trap keeps its context
		}
		return r.fail(diag.RunTaskFailed, "harness", fmt.Sprintf("harness output line %d: process driver '%s' could not read it: %s", r.lineNo, r.t.DriverName, why)), true
	}
	for _, ev := range evs {
		if o, done := r.handle(ev); done {
			return o, true
		}
	}
	return agent.Outcome{}, false
}

// exited is the end of a harness that closed its output without
// reporting a result.
func (r *run) exited(ctx context.Context) agent.Outcome {
	select {
	case <-r.ended:
	case <-ctx.Done():
		return r.cancel(ctx)
	case <-time.After(r.grace()):
		r.kill()
		<-r.ended
	}
	if ctx.Err() != nil {
		return r.cancel(ctx)
	}
	how := "exited"
	if st := r.cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			how = "was killed by " + ws.Signal().String()
		} else {
			how = fmt.Sprintf("exited with status %d", st.ExitCode())
			// A harness told to resume a session it does not have may say
			// so only on stderr: Codex (`codex exec resume ID`) prints
			// "no rollout found for thread id" there and exits 1 without
			// a line on stdout. Failing before it named any session is
			// that refusal.
			if r.resumed != "" && r.session == "" && st.ExitCode() != 0 {
				return r.sessionLost(fmt.Sprintf("it %s before it started on session %q (its stderr is in logs/harness.log)", how, r.resumed))
			}
		}
	}
	return r.fail(diag.RunTaskFailed, "harness", fmt.Sprintf("the harness %s before it reported a result (its stderr is in logs/harness.log)", how))
}

// handle applies one harness event; done ends the task with o.
func (r *run) handle(ev component.HarnessEvent) (o agent.Outcome, done bool) {
	t := r.t
	switch ev.Case {
	case component.HarnessSession:
		r.session = ev.Text
		if t.Sessions != nil && r.task.ContextID != "" && ev.Text != "" {
			if err := t.Sessions.Put(r.task.ContextID, ev.Text); err != nil {
				r.kill()
				return r.fail(diag.RunTaskFailed, "harness", err.Error()), true
			}
		}
		t.emit("harness_session", map[string]any{"task_id": r.task.ID, "context_id": r.task.ContextID, "harness_session": ev.Text})
	case component.HarnessMessage, component.HarnessToolCallEvent:
		if t.MaxTurns > 0 && r.out.Turns >= t.MaxTurns {
			r.kill()
			r.flushTurn(nil)
			r.out.Status, r.out.Code, r.out.Cause = agent.ExitMaxTurns, diag.RunHarnessTurn, "harness"
			r.out.Reason = fmt.Sprintf("the harness took a turn past inference.max_turns (%d)", t.MaxTurns)
			return r.out, true
		}
		r.flushTurn(nil)
		r.out.Turns++
		r.turnAt = time.Now()
		r.pending = map[string]any{"task_id": r.task.ID, "turn": r.out.Turns, "transport": "process"}
		if t.Model != nil {
			r.pending["model"] = *t.Model
		}
		if ev.Case == component.HarnessMessage {
			r.pending["kind"] = "message"
			r.out.Answer = ev.Text
			if ev.Text != "" && t.Events != nil {
				t.Events.Emit(event.Event{Type: event.TextDelta, Live: true, Fields: map[string]any{"task_id": r.task.ID, "text": ev.Text}})
				t.Events.Emit(event.Event{Type: event.TextEnd, Live: true, Fields: map[string]any{"task_id": r.task.ID}})
			}
		} else {
			r.pending["kind"] = "tool_call"
			r.pending["tool"] = ev.ToolCall.Name
			r.pending["call_id"] = ev.ToolCall.ID
		}
	case component.HarnessUsageEvent:
		u := ev.Usage
		r.flushTurn(&u)
		r.out.InputTokens += int64(u.InputTokens)
		r.out.OutputTokens += int64(u.OutputTokens)
		if ref := t.charge(int64(u.InputTokens + u.OutputTokens)); ref != nil {
			// The ceiling stops the next turn; the harness is killed at
			// once rather than given its exit grace.
			r.kill()
			return r.spendRefused(ref), true
		}
	case component.HarnessFinished:
		r.flushTurn(nil)
		r.out.Answer = ev.Text
		r.out.Status = agent.ExitOK
		r.waitOrKill()
		return r.out, true
	case component.HarnessFailed:
		r.flushTurn(nil)
		r.waitOrKill()
		r.out.Status, r.out.Code, r.out.Cause = agent.ExitFailed, diag.RunHarnessTurn, "harness"
		r.out.Reason = "the harness reported a failed turn: " + ev.Text
		return r.out, true
	case component.HarnessSessionNotFound:
		r.flushTurn(nil)
		r.waitOrKill()
		return r.sessionLost(ev.Text), true
	}
	return agent.Outcome{}, false
}

// sessionLost fails the task with E-RUN-036: the harness cannot find the
// session it was resumed on (spec 004 transport: process, Conversation).
func (r *run) sessionLost(why string) agent.Outcome {
	if t := r.t; t.Sessions != nil && r.task.ContextID != "" {
		// The stale entry goes, so the context's next task starts a new
		// harness session.
		_ = t.Sessions.Put(r.task.ContextID, "")
	}
	return r.fail(diag.RunHarnessSession, "harness", fmt.Sprintf("the harness cannot find the session it was resumed on (context %q): %s", r.task.ContextID, why))
}

// flushTurn writes the open turn's inference line, with the usage that
// closed it when there is one. Without usage both counts stay absent,
// which is not zero.
func (r *run) flushTurn(u *component.HarnessUsage) {
	if r.pending == nil {
		if u == nil {
			return
		}
		// Usage with no turn open (a harness that reports it on its own
		// line after the result): one line carries it.
		r.pending = map[string]any{"task_id": r.task.ID, "turn": r.out.Turns, "transport": "process"}
		r.turnAt = time.Now()
	}
	if u != nil {
		r.pending["input_tokens"] = int64(u.InputTokens)
		r.pending["output_tokens"] = int64(u.OutputTokens)
	}
	r.pending["duration_ms"] = time.Since(r.turnAt).Milliseconds()
	r.t.emit("inference", r.pending)
	r.pending = nil
}

// charge charges a closed turn, then asks the ceilings whether another
// may follow; the refusal when none may.
func (t *Transport) charge(n int64) *spend.Refusal {
	if len(t.Ceilings) == 0 {
		return nil
	}
	var ref *spend.Refusal
	if res, err := spend.Admit(0, t.Ceilings...); err == nil {
		res.Settle(n)
	} else if errors.As(err, &ref) {
		return ref
	}
	res, err := spend.Admit(1, t.Ceilings...)
	if err != nil {
		if errors.As(err, &ref) {
			return ref
		}
		return &spend.Refusal{Limit: "spend ceiling", Needed: 1}
	}
	res.Settle(0)
	return nil
}

// spendRefused writes the refusal's record and latches the session, as
// under transport: http.
func (r *run) spendRefused(ref *spend.Refusal) agent.Outcome {
	t := r.t
	if t.latched == nil {
		t.latched = ref
	}
	if t.Session != nil {
		t.Session.Latch(ref)
	}
	t.emit("spend_ceiling_reached", map[string]any{
		"task_id": r.task.ID, "limit": ref.Limit, "ceiling": ref.Ceiling, "used": ref.Used, "needed": ref.Needed, "latched": ref.Latched,
	})
	r.out.Status, r.out.Cause, r.out.Reason, r.out.Code = agent.ExitSpendCeiling, "spend_ceiling", ref.Error(), diag.RunTaskFailed
	return r.out
}

// cancel interrupts the harness as describe() declares and ends the task
// canceled (or at the deadline, or failed with the session's own cause).
func (r *run) cancel(ctx context.Context) agent.Outcome {
	r.flushTurn(nil)
	switch r.t.Desc.Interrupt {
	case component.InterruptStdinMessage:
		if _, err := r.stdin.Write(r.plan.Interrupt); err != nil {
			r.kill() // stdin is closed: there is no graceful way left
		}
		r.waitOrKill()
	case component.InterruptSignalInt:
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT)
		r.waitOrKill()
	default:
		r.kill()
	}
	cause := context.Cause(ctx)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.out.Status, r.out.Cause, r.out.Reason = agent.ExitDeadline, "deadline", "the session reached its --deadline"
	case cause != nil && !errors.Is(cause, context.Canceled):
		r.out.Status, r.out.Cause, r.out.Reason = agent.ExitFailed, "session_ended", cause.Error()
		var d diag.Diagnostic
		if errors.As(cause, &d) {
			r.out.Code, r.out.Reason = d.Code, d.Msg
		}
	default:
		r.out.Status, r.out.Cause, r.out.Reason = agent.ExitCanceled, "canceled", "the task was canceled"
	}
	return r.out
}
