package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/timeline"
)

func newTraceReportCmd(env *Env) *cobra.Command {
	var asJSON bool
	var manifestPath string
	cmd := &cobra.Command{
		Use:   "report [SESSION...]",
		Short: "Total sessions' turns, tokens, charge and tool calls, and list their redundant reads",
		Long: `Report totals across sessions — exit status, tasks, turns, tokens, charge,
duration, tool calls and failed ones — one line a session and a total, then
every redundant read: a tool call that read a resource (state_effect: read,
with a resource_id) an earlier read in the same task had already read, with
no call in between that may have changed it.

With no SESSION, every session of the capsule at --manifest (its records
group under ~/.murmur/records) is reported, oldest first. A SESSION is what
mur trace show takes.`,
		Example: "  mur trace report\n  mur trace report ses_01J9Z3 ses_01J9Z4 --json",
		RunE: func(cmd *cobra.Command, args []string) error {
			paths := []string{}
			if len(args) == 0 {
				if err := needProject(cmd, manifestPath); err != nil {
					return err
				}
				var err error
				if paths, err = groupTraces(manifestPath); err != nil {
					return &ExitError{Code: ExitFailed, Err: err}
				}
			}
			for _, a := range args {
				p, err := tracePath(a)
				if err != nil {
					return err
				}
				paths = append(paths, p)
			}
			var ss []*timeline.Session
			for _, p := range paths {
				s, err := timeline.ReadFile(p)
				if err != nil {
					return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: %w", p, err)}
				}
				ss = append(ss, s)
			}
			r := timeline.NewReport(ss)
			if asJSON {
				return writeJSON(env.Stdout, r)
			}
			printReport(env.Stdout, r)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as one JSON document")
	cmd.Flags().StringVar(&manifestPath, "manifest", "murmur.yaml", "with no SESSION, report every session of this capsule")
	return cmd
}

// groupTraces lists the trace of every session in the records group of
// the capsule at manifestPath, oldest first.
func groupTraces(manifestPath string) ([]string, error) {
	home, err := config.MurmurDir()
	if err != nil {
		return nil, err
	}
	group, err := session.RecordsGroup(home, filepath.Dir(manifestPath))
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(group)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		p := filepath.Join(group, e.Name(), "trace.jsonl")
		if !e.IsDir() || !strings.HasPrefix(e.Name(), session.Prefix) {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("no sessions under %s: run the capsule first, or name sessions", group)
	}
	return out, nil
}

func printReport(w io.Writer, r timeline.Report) {
	fmt.Fprintf(w, "%-30s %-22s %5s %6s %10s %9s %9s %10s %6s %6s %9s\n", "SESSION", "STATUS", "TASKS", "TURNS", "IN", "OUT", "CHARGED", "DURATION", "CALLS", "FAILED", "REDUNDANT")
	for _, s := range r.Sessions {
		st := s.ExitStatus
		if st == "" {
			st = "(no session_end)"
		}
		fmt.Fprintf(w, "%-30s %-22s %5d %6d %10d %9d %9d %10s %6d %6d %9d\n", s.ID, st, s.Tasks, s.Turns, s.InputTokens, s.OutputTokens, s.Charged, ms(s.DurationMS), s.ToolCalls, s.FailedCalls, s.Redundant)
	}
	var statuses []string
	for k, v := range r.Statuses {
		if k == "" {
			k = "no session_end"
		}
		statuses = append(statuses, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(statuses)
	fmt.Fprintf(w, "%-30s %-22s %5s %6d %10d %9d %9d %10s %6d %6d %9d\n", fmt.Sprintf("total (%d sessions)", len(r.Sessions)), strings.Join(statuses, ", "), "", r.Turns, r.InputTokens, r.OutputTokens, r.Charged, ms(r.DurationMS), r.ToolCalls, r.FailedCalls, len(r.Redundant))
	if len(r.Redundant) == 0 {
		fmt.Fprintln(w, "no redundant reads")
		return
	}
	fmt.Fprintln(w, "redundant reads:")
	for _, x := range r.Redundant {
		fmt.Fprintf(w, "  %s %s turn %d: %s %s (call %s) repeats the read at turn %d (call %s)\n", x.SessionID, x.TaskID, x.Turn, x.Tool, x.ResourceID, x.CallID, x.FirstTurn, x.FirstCallID)
	}
}
