package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/timeline"
)

func init() { register(newTraceCmd) }

func newTraceCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "trace",
		Short:   "Read what a session did from its trace.jsonl",
		Example: "  mur trace show ses_01J9Z3",
	}
	var asJSON bool
	var htmlOut string
	show := &cobra.Command{
		Use:   "show SESSION",
		Short: "Print a session's timeline: tasks, turns, tool calls with durations, tokens, spend, errors",
		Long: `Print a session's timeline from its trace.jsonl: each task, each turn
(model call) with its duration, tokens and charge, the tool calls it made
with their status and duration, and what went wrong (failed calls,
retries, spend refusals, task failures).

SESSION is a session id (ses_…, looked up under ~/.murmur/records/), a
session's records directory, or a trace.jsonl file. --html FILE writes the
same timeline as one HTML page that needs nothing else: a chart of every
turn and tool call on the session's clock, and their tables.`,
		Example: "  mur trace show ses_01J9Z3 --html ses_01J9Z3.html\n  mur trace show ~/.murmur/records/demo/ses_01J9Z3/trace.jsonl --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := tracePath(args[0])
			if err != nil {
				return err
			}
			s, err := timeline.ReadFile(path)
			if err != nil {
				return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: %w", path, err)}
			}
			if htmlOut != "" {
				return writeHTMLFile(env, s, htmlOut)
			}
			if asJSON {
				return writeJSON(env.Stdout, s)
			}
			printTimeline(env.Stdout, s)
			return nil
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print the timeline as one JSON document")
	show.Flags().StringVar(&htmlOut, "html", "", "write the timeline as one self-contained HTML page to this file")
	var diffJSON bool
	diff := &cobra.Command{
		Use:   "diff A B",
		Short: "Show where two sessions diverged: the first differing turn or tool call, and their totals",
		Long: `Compare two sessions step by step — each turn's stop reason and error,
each tool call's name and status, task by task — and print the first step
where they differ, then both sessions' exit status, turns, tokens, charge
and duration. Exits 0 when every step and the exit status match, 1 when
they diverge. A and B are what mur trace show takes.`,
		Example: "  mur trace diff ses_01J9Z3 ses_01J9Z4",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ss [2]*timeline.Session
			for i, a := range args {
				path, err := tracePath(a)
				if err != nil {
					return err
				}
				if ss[i], err = timeline.ReadFile(path); err != nil {
					return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: %w", path, err)}
				}
			}
			d := timeline.Compare(ss[0], ss[1])
			if diffJSON {
				if err := writeJSON(env.Stdout, d); err != nil {
					return err
				}
			} else {
				printDiff(env.Stdout, ss[0], ss[1], d)
			}
			if !d.Same {
				return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s and %s diverge", ss[0].ID, ss[1].ID), Silent: true}
			}
			return nil
		},
	}
	diff.Flags().BoolVar(&diffJSON, "json", false, "print the comparison as one JSON document")
	cmd.AddCommand(show, diff, newTraceReportCmd(env))
	return cmd
}

func printDiff(w io.Writer, a, b *timeline.Session, d timeline.Diff) {
	step := func(s *timeline.Step) string {
		if s == nil {
			return "(no more steps)"
		}
		return s.String()
	}
	switch {
	case d.Same:
		fmt.Fprintf(w, "same: %d steps match\n", d.At)
	case d.StepA == nil && d.StepB == nil:
		fmt.Fprintf(w, "same %d steps; the sessions ended differently\n", d.At)
	default:
		fmt.Fprintf(w, "diverge at step %d:\n  A %s\n  B %s\n", d.At+1, step(d.StepA), step(d.StepB))
	}
	fmt.Fprintf(w, "%-14s %-28s %s\n", "", "A "+a.ID, "B "+b.ID)
	fmt.Fprintf(w, "%-14s %-28s %s\n", "exit status", d.ExitStatus[0], d.ExitStatus[1])
	for _, r := range []struct {
		name string
		v    [2]int64
	}{{"turns", d.Turns}, {"input tokens", d.InputTokens}, {"output tokens", d.OutputTokens}, {"charged", d.Charged}, {"duration ms", d.DurationMS}} {
		fmt.Fprintf(w, "%-14s %-28d %d\n", r.name, r.v[0], r.v[1])
	}
}

// tracePath finds the trace a SESSION argument names.
func tracePath(arg string) (string, error) {
	if fi, err := os.Stat(arg); err == nil {
		if fi.IsDir() {
			return filepath.Join(arg, "trace.jsonl"), nil
		}
		return arg, nil
	}
	if !strings.HasPrefix(arg, "ses_") || strings.ContainsAny(arg, `/\`) {
		return "", usageError(fmt.Errorf("%s: no such file, and not a session id (ses_…); give a session id, its records directory or its trace.jsonl", arg))
	}
	home, err := config.MurmurDir()
	if err != nil {
		return "", err
	}
	root := filepath.Join(home, "records")
	if found := findSession(root, arg); found != "" {
		return found, nil
	}
	return "", &ExitError{Code: ExitFailed, Err: fmt.Errorf("session %s: no trace under %s; give its records directory or trace.jsonl if it lives elsewhere", arg, root)}
}

// findSession is the trace.jsonl of session id under root, or "". A
// capsule's records group mirrors its manifest directory's path
// (session.RecordsGroup), so sessions sit at any depth; a session's own
// folder is never walked into.
func findSession(root, id string) string {
	var found string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if !strings.HasPrefix(d.Name(), session.Prefix) {
			return nil
		}
		if d.Name() == id {
			if _, err := os.Stat(filepath.Join(p, "trace.jsonl")); err == nil {
				found = filepath.Join(p, "trace.jsonl")
				return filepath.SkipAll
			}
		}
		return filepath.SkipDir
	})
	return found
}

// writeHTMLFile writes s's HTML page to path, whole or not at all.
func writeHTMLFile(env *Env, s *timeline.Session, path string) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*")
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: err}
	}
	defer os.Remove(f.Name())
	err = s.WriteHTML(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("write %s: %w", path, err)}
	}
	fmt.Fprintf(env.Stderr, "mur: wrote %s\n", path)
	return nil
}

func ms(n int64) string { return (time.Duration(n) * time.Millisecond).String() }

func printTimeline(w io.Writer, s *timeline.Session) {
	status := s.ExitStatus
	if status == "" {
		status = "no session_end (running, or ended without closing)"
	}
	fmt.Fprintf(w, "session %s  %s  model %s  %s  %s\n", s.ID, s.Capsule, s.Model, status, ms(s.DurationMS))
	fmt.Fprintf(w, "  turns %d  tokens %d in / %d out  charged %d  tasks %d\n", s.Turns, s.InputTokens, s.OutputTokens, s.Charged, len(s.Tasks))
	for _, n := range s.Notes {
		fmt.Fprintf(w, "  %s  %s %s\n", offset(s, n.Time), n.Event, n.Text)
	}
	for _, t := range s.Tasks {
		st := t.ExitStatus
		if st == "" {
			st = "no task_end"
		}
		fmt.Fprintf(w, "task %s (%s)  %s  %s  tokens %d in / %d out  charged %d\n", t.ID, t.Origin, st, ms(t.DurationMS), t.InputTokens, t.OutputTokens, t.Charged)
		if t.Reason != "" {
			fmt.Fprintf(w, "  reason: %s\n", t.Reason)
		}
		for _, u := range t.Turns {
			fmt.Fprintf(w, "  %s  turn %d  %s  %d in / %d out  charged %d  %s", offset(s, u.Start), u.N, ms(u.DurationMS), u.InputTokens, u.OutputTokens, u.Charged, u.StopReason)
			if u.Attempts > 1 {
				fmt.Fprintf(w, "  %d attempts", u.Attempts)
			}
			if u.Error != "" {
				fmt.Fprintf(w, "  error: %s", u.Error)
			}
			fmt.Fprintln(w)
			for _, c := range u.Tools {
				fmt.Fprintf(w, "      %-20s %-7s %8s", c.Name, c.Status, ms(c.DurationMS))
				if c.Error != "" {
					fmt.Fprintf(w, "  error: %s", c.Error)
				}
				fmt.Fprintln(w)
			}
		}
		for _, e := range t.Errors {
			fmt.Fprintf(w, "  %s  ! %s %s\n", offset(s, e.Time), e.Event, e.Text)
		}
	}
}

// offset is a time as seconds since the session started.
func offset(s *timeline.Session, t time.Time) string {
	if s.Start.IsZero() {
		return t.Format(time.TimeOnly)
	}
	return fmt.Sprintf("+%.3fs", t.Sub(s.Start).Seconds())
}
