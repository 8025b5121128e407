package agent

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// doneOutputLimit bounds the check output a reopened attempt is handed.
const doneOutputLimit = 16 << 10

// CheckResult is one run of a command.
type CheckResult struct {
	ExitCode int
	Output   string
	TimedOut bool
}

// CommandRunner runs a done check's command, contained as the session's
// shell calls are (the shell area's shelltool.Runner implements it).
type CommandRunner interface {
	RunCheck(ctx context.Context, argv []string, dir string, timeout time.Duration) (CheckResult, error)
}

// doneCheck runs lifecycle.done_check at a stop. It reports true when the
// task is reopened with the check's output.
func (l *Loop) doneCheck(ctx context.Context, t *task) bool {
	dc := l.plan.Lifecycle.DoneCheck
	// The effective manifest carries the default timeout (NewPlan checked).
	timeout := time.Duration(*dc.TimeoutSecs) * time.Second
	t.out.DoneCheckRuns++
	start := l.now()
	var res CheckResult
	argv, err := dc.Argv()
	if err == nil {
		res, err = l.rt.Runner.RunCheck(ctx, argv, l.rt.Workdir, timeout)
	}
	met := err == nil && res.ExitCode == 0 && !res.TimedOut
	line := map[string]any{
		"task_id": t.id, "run": t.out.DoneCheckRuns, "command": dc.Command, "exit_code": res.ExitCode,
		"met": met, "duration_ms": l.now().Sub(start).Milliseconds(),
	}
	if res.TimedOut {
		line["timed_out"] = true
	}
	if err != nil {
		line["error"] = err.Error()
	}
	reopen := !met && int64(t.out.DoneCheckReopens) < dc.Limit && (t.maxTurns == 0 || t.out.Turns < t.maxTurns)
	line["reopened"] = reopen
	l.emit("done_check", line)
	t.out.DoneCheckMet = &met
	if !reopen {
		return false
	}
	t.out.DoneCheckReopens++
	out := res.Output
	if len(out) > doneOutputLimit {
		out = "[first " + fmt.Sprint(len(out)-doneOutputLimit) + " bytes cut]\n" + out[len(out)-doneOutputLimit:]
	}
	var why string
	switch {
	case err != nil:
		why = "could not run: " + err.Error()
	case res.TimedOut:
		why = fmt.Sprintf("was killed after %s", timeout)
	default:
		why = fmt.Sprintf("failed with exit code %d", res.ExitCode)
	}
	l.user(t, fmt.Sprintf("[murmur] The task is not done: its done check `%s` %s. Its output:\n\n%s\n\nFix what it reports, then finish.", dc.Command, why, strings.TrimRight(out, "\n")))
	return true
}
