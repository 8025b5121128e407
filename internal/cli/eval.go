package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/eval"
)

func init() { register(newEvalCmd) }

func newEvalCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "eval",
		Short:   "Read the scores murmur/hook-eval wrote for a session (hooks/eval.jsonl), and compare two sessions'",
		Example: "  mur eval show ses_01J9Z3\n  mur eval diff ses_01J9Z3 ses_01J9Z4",
	}
	var showJSON bool
	show := &cobra.Command{
		Use:     "show SESSION",
		Example: "  mur eval show ses_01J9Z3\n  mur eval show --json ses_01J9Z3",
		Short:   "Print a session's scores: each scorer, passed or failed, the value measured and its bound",
		Long: `Print the scores murmur/hook-eval wrote for a session in its records
directory's hooks/eval.jsonl: one line per scorer (exit_ok, max_turns,
max_tokens, tool_sequence) with passed or FAILED, the value measured and
the bound or sequence it was held to, then the dataset_run record when
observability.eval.dataset_id labels the run. SESSION is what mur trace
show takes. Exit status 1 when a scorer failed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rs, err := evalRecords(args[0])
			if err != nil {
				return err
			}
			if showJSON {
				if err := writeJSON(env.Stdout, rs); err != nil {
					return err
				}
			} else {
				printScores(env.Stdout, rs)
			}
			for _, r := range rs {
				if r.Passed != nil && !*r.Passed {
					return &ExitError{Code: ExitFailed, Silent: true}
				}
			}
			return nil
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print the records as one JSON array")
	var diffJSON bool
	diff := &cobra.Command{
		Use:     "diff A B",
		Example: "  mur eval diff ses_01J9Z3 ses_01J9Z4",
		Short:   "Compare two sessions' scores scorer by scorer",
		Long: `Compare two sessions' hooks/eval.jsonl scorer by scorer (matched by
scorer name): passed in each, and the value each measured. Exit status 0
when every scorer passed or failed alike in both, 1 when one differs or
is scored in only one of them.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := evalRecords(args[0])
			if err != nil {
				return err
			}
			b, err := evalRecords(args[1])
			if err != nil {
				return err
			}
			rows, same := diffScores(a, b)
			if diffJSON {
				if err := writeJSON(env.Stdout, map[string]any{"same": same, "scorers": rows}); err != nil {
					return err
				}
			} else {
				for _, r := range rows {
					mark := " "
					if !r.Same {
						mark = "!"
					}
					fmt.Fprintf(env.Stdout, "%s %-20s %-28s %s\n", mark, r.Scorer, r.A, r.B)
				}
				if same {
					fmt.Fprintln(env.Stdout, "same: every scorer passed or failed alike")
				}
			}
			if !same {
				return &ExitError{Code: ExitFailed, Silent: true}
			}
			return nil
		},
	}
	diff.Flags().BoolVar(&diffJSON, "json", false, "print the comparison as one JSON document")
	cmd.AddCommand(show, diff, newEvalRunCmd(env))
	return cmd
}

func newEvalRunCmd(env *Env) *cobra.Command {
	var (
		manifestPath string
		asJSON       bool
	)
	run := &cobra.Command{
		Use:     "run DATASET",
		Example: "  mur eval run dataset.jsonl",
		Short:   "Run each task of a dataset through the capsule, one session each, and print one report of their scores",
		Long: `Run reads DATASET, a JSON Lines file of tasks ({"id": "…", "task": "…"}
per line; id defaults to the line number), and runs each task through the
capsule at --manifest as mur run --task does, one session per task, one
after another. Each session is scored by the capsule's murmur/hook-eval;
the report lists each task's session, exit status and scores, then each
scorer's passes across the dataset. Exit status 1 when any score failed
or a session wrote no scores.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := needProject(cmd, manifestPath); err != nil {
				return err
			}
			tasks, err := readDataset(args[0])
			if err != nil {
				return usageError(err)
			}
			rep := evalReport{Dataset: args[0]}
			ok := true
			for _, t := range tasks {
				s, err := capsule.Open(env.Ctx, capsule.Options{Manifest: manifestPath, LaunchTask: t.Task, Stderr: env.Stderr})
				if err != nil {
					return &ExitError{Code: reportRefusal(env, err), Silent: true}
				}
				out := s.RunLaunchTask(env.Ctx, nil)
				closeSession(env, s, out)
				r := evalRun{ID: t.ID, Session: s.ID(), ExitStatus: string(out.Status)}
				if r.Scores, err = evalRecords(s.Dirs().Records); err != nil {
					r.Error = err.Error()
					ok = false
				}
				for _, sc := range r.Scores {
					if sc.Event == "score" && !passed(sc) {
						ok = false
					}
				}
				rep.Runs = append(rep.Runs, r)
			}
			rep.total()
			if asJSON {
				if err := writeJSON(env.Stdout, rep); err != nil {
					return err
				}
			} else {
				rep.print(env.Stdout)
			}
			if !ok {
				return &ExitError{Code: ExitFailed, Silent: true}
			}
			return nil
		},
	}
	run.Flags().StringVar(&manifestPath, "manifest", "murmur.yaml", "capsule manifest")
	run.Flags().BoolVar(&asJSON, "json", false, "print the report as one JSON document")
	return run
}

// datasetTask is one line of a dataset.
type datasetTask struct {
	ID   string `json:"id"`
	Task string `json:"task"`
}

// readDataset reads a JSON Lines dataset; every line needs a task.
func readDataset(path string) ([]datasetTask, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []datasetTask
	for n, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var t datasetTask
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil || t.Task == "" {
			return nil, fmt.Errorf("%s:%d: want {\"id\": \"…\", \"task\": \"…\"} with a task", path, n+1)
		}
		if t.ID == "" {
			t.ID = strconv.Itoa(n + 1)
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no tasks", path)
	}
	return out, nil
}

// evalReport is mur eval run's report.
type evalReport struct {
	Dataset string        `json:"dataset"`
	Runs    []evalRun     `json:"runs"`
	Scorers []scorerTotal `json:"scorers"`
}

type evalRun struct {
	ID         string        `json:"id"`
	Session    string        `json:"session"`
	ExitStatus string        `json:"exit_status"`
	Scores     []eval.Record `json:"scores"`
	Error      string        `json:"error,omitempty"`
}

type scorerTotal struct {
	Scorer string `json:"scorer"`
	Passed int    `json:"passed"`
	Scored int    `json:"scored"`
}

// total counts each scorer's passes over the runs, in first-seen order.
func (r *evalReport) total() {
	at := map[string]int{}
	for _, run := range r.Runs {
		for _, s := range run.Scores {
			if s.Event != "score" {
				continue
			}
			i, ok := at[s.Scorer]
			if !ok {
				i = len(r.Scorers)
				at[s.Scorer] = i
				r.Scorers = append(r.Scorers, scorerTotal{Scorer: s.Scorer})
			}
			r.Scorers[i].Scored++
			if passed(s) {
				r.Scorers[i].Passed++
			}
		}
	}
}

func (r *evalReport) print(w io.Writer) {
	for _, run := range r.Runs {
		n, p := 0, 0
		for _, s := range run.Scores {
			if s.Event == "score" {
				n++
				if passed(s) {
					p++
				}
			}
		}
		fmt.Fprintf(w, "%-12s %s  %-10s %d/%d scores passed", run.ID, run.Session, run.ExitStatus, p, n)
		if run.Error != "" {
			fmt.Fprintf(w, "  %s", run.Error)
		}
		fmt.Fprintln(w)
	}
	for _, s := range r.Scorers {
		fmt.Fprintf(w, "%-20s passed %d of %d\n", s.Scorer, s.Passed, s.Scored)
	}
}

// evalRecords reads the eval.jsonl of the session arg names.
func evalRecords(arg string) ([]eval.Record, error) {
	tp, err := tracePath(arg)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(filepath.Dir(tp), "hooks", eval.File)
	f, err := os.Open(path)
	if err != nil {
		return nil, &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: no scores (%w); a session is scored when its capsule runs murmur/hook-eval with filesystem.records: true and observability.eval.scorers", arg, err)}
	}
	defer f.Close()
	rs, err := eval.Read(f)
	if err != nil {
		return nil, &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: %w", path, err)}
	}
	return rs, nil
}

// scoreText is a score's passed/FAILED word and its value against its bound.
func scoreText(r eval.Record) string {
	word := "FAILED"
	if r.Passed != nil && *r.Passed {
		word = "passed"
	}
	v := fmt.Sprint(r.Value)
	if list, ok := r.Value.([]any); ok {
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = fmt.Sprint(x)
		}
		v = "[" + strings.Join(parts, " ") + "]"
	}
	switch {
	case r.Max != nil:
		v += fmt.Sprintf(" (max %d)", *r.Max)
	case r.Type == eval.ToolSequence:
		v += " (expected [" + strings.Join(r.Expected, " ") + "])"
	}
	return word + " " + v
}

func printScores(w io.Writer, rs []eval.Record) {
	for _, r := range rs {
		switch r.Event {
		case "score":
			fmt.Fprintf(w, "%-20s %-14s %s\n", r.Scorer, r.Type, scoreText(r))
		case "dataset_run":
			n := 0
			if r.PassedN != nil {
				n = *r.PassedN
			}
			fmt.Fprintf(w, "dataset %s  session %s  %s  %d/%d scores passed\n", r.DatasetID, r.SessionID, r.ExitStatus, n, r.Scores)
		}
	}
}

// scoreRow is one scorer in mur eval diff.
type scoreRow struct {
	Scorer string `json:"scorer"`
	A      string `json:"a"`
	B      string `json:"b"`
	Same   bool   `json:"same"`
}

func diffScores(a, b []eval.Record) ([]scoreRow, bool) {
	index := func(rs []eval.Record) (map[string]eval.Record, []string) {
		m := map[string]eval.Record{}
		var order []string
		for _, r := range rs {
			if r.Event != "score" {
				continue
			}
			if _, ok := m[r.Scorer]; !ok {
				order = append(order, r.Scorer)
			}
			m[r.Scorer] = r
		}
		return m, order
	}
	ma, oa := index(a)
	mb, ob := index(b)
	for _, n := range ob {
		if _, ok := ma[n]; !ok {
			oa = append(oa, n)
		}
	}
	same := true
	var rows []scoreRow
	for _, n := range oa {
		ra, okA := ma[n]
		rb, okB := mb[n]
		row := scoreRow{Scorer: n, A: "(not scored)", B: "(not scored)"}
		if okA {
			row.A = scoreText(ra)
		}
		if okB {
			row.B = scoreText(rb)
		}
		row.Same = okA && okB && passed(ra) == passed(rb)
		same = same && row.Same
		rows = append(rows, row)
	}
	return rows, same
}

func passed(r eval.Record) bool { return r.Passed != nil && *r.Passed }
