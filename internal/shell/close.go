package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/murmur/mur/internal/event"
)

// Abandoned is a backgrounded command whose exit never reached the agent.
type Abandoned struct {
	WorkID  string
	Binary  string
	Command string
	// Finished is true when the command exited during teardown, after the
	// agent last read it; false when the session's end killed it.
	Finished bool
	// Running is how long it had run when killed, or its whole run.
	Running   time.Duration
	ExitCode  int
	Status    string
	WaitError string
	// Limit is the container's line naming the resource limit it hit.
	Limit    string
	LogPath  string
	LogBytes int64
}

// Close ends the session's subprocesses: every backgrounded command whose
// exit did not reach the agent is killed (or, if it already exited, reported
// with its exit), and every process group a call started is killed. A
// process that left its group is out of this package's reach: the
// integrator closes the container (sandbox.Session.Close kills its whole
// cgroup scope) right after. Each such command gets a
// shell_abandoned record, and one report goes to Policy.Stderr and
// logs/bootstrap.log. Calls after Close fail with ErrClosed.
func (s *Session) Close(ctx context.Context) ([]Abandoned, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, nil
	}
	s.closed = true
	var procs []*proc
	for _, id := range s.order {
		procs = append(procs, s.work[id])
	}
	s.mu.Unlock()

	var out []Abandoned
	var killed []*proc
	for _, p := range procs {
		select {
		case <-p.exited:
			// The command itself has ended: let its exit be read so it is
			// reported as finished, not as killed.
			select {
			case <-p.done:
			case <-time.After(holdWait + killWait + time.Second):
			}
		default:
		}
		p.mu.Lock()
		if p.delivered {
			p.mu.Unlock()
			continue
		}
		select {
		case <-p.done:
			p.abandoned = true
			p.mu.Unlock()
			out = append(out, p.abandonedReport(true))
		default:
			// Marked before the kill so finish writes no Exit code line:
			// no exit code survives a session-end kill.
			p.abandoned = true
			p.mu.Unlock()
			p.kill()
			killed = append(killed, p)
			out = append(out, p.abandonedReport(false))
		}
	}

	s.mu.Lock()
	groups := make([]int, 0, len(s.groups))
	for g := range s.groups {
		groups = append(groups, g)
	}
	s.mu.Unlock()
	for _, g := range groups {
		_ = syscall.Kill(-g, syscall.SIGKILL)
	}
	var errs []error
	// Let the killed commands' readers finish so their logs are complete.
	for _, p := range killed {
		select {
		case <-p.done:
		case <-ctx.Done():
		case <-time.After(holdWait + killWait + time.Second):
		}
	}
	for i := range out {
		if fi, err := os.Stat(out[i].LogPath); err == nil {
			out[i].LogBytes = fi.Size()
		}
		a := out[i]
		f := map[string]any{
			"work_id": a.WorkID, "binary": a.Binary, "command": a.Command,
			"running_ms": a.Running.Milliseconds(), "log": a.LogPath,
		}
		if a.Finished {
			f["state"] = "finished_during_teardown"
			f["exit_code"] = a.ExitCode
			f["status"] = a.Status
		} else {
			f["state"] = "killed"
		}
		s.sink.Emit(event.Event{Type: "shell_abandoned", Fields: f})
	}
	if len(out) > 0 {
		rep := s.report(out)
		fmt.Fprint(s.stderr(), rep)
		if err := appendFile(filepath.Join(s.logs, "bootstrap.log"), rep); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

func (p *proc) abandonedReport(finished bool) Abandoned {
	a := Abandoned{WorkID: p.workID, Binary: p.canon, Command: p.command, Finished: finished, LogPath: p.logPath}
	if finished {
		a.Running = p.result.Duration
		a.ExitCode, a.Status, a.Limit = p.result.ExitCode, p.result.Status, p.result.Limit
		var ee *exec.ExitError
		if p.waitErr != nil && !errors.As(p.waitErr, &ee) {
			a.WaitError = p.waitErr.Error()
		}
	} else {
		a.Running = time.Since(p.start)
	}
	return a
}

// report renders the session-end report.
func (s *Session) report(as []Abandoned) string {
	n := len(as)
	plural := func(one, many string) string {
		if n == 1 {
			return one
		}
		return many
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[capsule-runtime] %d background shell %s discarded at session end.\n\n", n, plural("command", "commands"))
	sid := s.p.SessionID
	if sid == "" {
		sid = "(unnamed)"
	}
	fmt.Fprintf(&b, "Session %s ended while %d demoted shell %s unaccounted for. Every process the session started was killed when it ended; what is known about each command is below.\n\n",
		sid, n, plural("command was", "commands were"))
	for _, a := range as {
		fmt.Fprintf(&b, "work_id: %s\nbinary: %s\ncommand: %s\n", a.WorkID, a.Binary, a.Command)
		if a.Finished {
			fmt.Fprintf(&b, "state: finished during teardown after %d ms\nstatus: %s\nexit_code: %d\n", a.Running.Milliseconds(), a.Status, a.ExitCode)
			if a.Limit != "" {
				fmt.Fprintf(&b, "resource_limit: %s\n", a.Limit)
			}
			if a.WaitError != "" {
				fmt.Fprintf(&b, "wait_error: %s\n", a.WaitError)
			}
			fmt.Fprintf(&b, "output: %s (%d bytes)\nresult: on disk — it finished too late for any task to carry it back to the agent.\n\n", a.LogPath, a.LogBytes)
			continue
		}
		fmt.Fprintf(&b, "state: killed at session end after %d ms\nresult: none — it was killed before it finished, so no task carries an exit code. What it printed before the kill is in %s.\n\n",
			a.Running.Milliseconds(), a.LogPath)
	}
	b.WriteString("A session's end kills every command it demoted and every process its shell calls started in the background. Declare lifecycle.task_acceptance: queue with lifecycle.after_task: sleep for a session that outlives its task and can be told the result instead.\n")
	return b.String()
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("write the session-end report: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("write the session-end report: %w", err)
	}
	return f.Close()
}
