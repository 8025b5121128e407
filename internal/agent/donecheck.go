package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/murmur/mur/internal/manifest"
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
	// The effective manifest carries the default; a check built without
	// one gets the same.
	timeout := time.Duration(manifest.DefaultDoneCheckTimeoutSecs) * time.Second
	if s := l.Done.TimeoutSecs; s != nil && *s > 0 {
		timeout = time.Duration(*s) * time.Second
	}
	t.out.DoneCheckRuns++
	start := l.now()
	var res CheckResult
	argv, err := l.Done.Argv()
	if err == nil {
		res, err = l.Runner.RunCheck(ctx, argv, l.Workdir, timeout)
	}
	met := err == nil && res.ExitCode == 0 && !res.TimedOut
	line := map[string]any{
		"task_id": t.id, "run": t.out.DoneCheckRuns, "command": l.Done.Command, "exit_code": res.ExitCode,
		"met": met, "duration_ms": l.now().Sub(start).Milliseconds(),
	}
	if res.TimedOut {
		line["timed_out"] = true
	}
	if err != nil {
		line["error"] = err.Error()
	}
	reopen := !met && int64(t.out.DoneCheckReopens) < l.Done.Limit && (l.MaxTurns == 0 || t.out.Turns < l.MaxTurns)
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
	l.user(t, fmt.Sprintf("[murmur] The task is not done: its done check `%s` %s. Its output:\n\n%s\n\nFix what it reports, then finish.", l.Done.Command, why, strings.TrimRight(out, "\n")))
	return true
}
