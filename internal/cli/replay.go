package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/replay"
)

func init() { register(newReplayCmd) }

func newReplayCmd(env *Env) *cobra.Command {
	var (
		manifestPath, workdir string
		asJSON                bool
	)
	cmd := &cobra.Command{
		Use:   "replay SESSION",
		Short: "Re-run a recorded session with the model's recorded answers, offline, and report the first divergence",
		Long: `Replay re-runs a session recorded under trace.capture: content: the
capsule at --manifest runs each of the session's tasks again with its own
driver, tools and hooks as installed now, while the model's answers come
from the recording's blobs, served on a loopback port in the provider's
wire shape (no provider is reached, no key is needed). Every record the
replay writes (each request's hashes, each model answer, each tool call's
status and output, each task's outcome) is compared with the recording's
as it is written; the first that differs is the divergence, and the run
stops there.

SESSION is a session id, its records directory or its trace.jsonl. The
replay is a session of its own, recorded like any other.

Exit status: 0 every record as recorded, 1 a divergence, 2 the session
cannot be replayed (recorded below trace.capture: content, E-RUN-903; a
recording replay cannot serve, E-RUN-904) or the capsule refused to
launch.`,
		Example: "  mur replay ses_01J9Z3\n  mur replay ses_01J9Z3 --manifest capsules/hello/murmur.yaml --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := needProject(cmd, manifestPath); err != nil {
				return err
			}
			path, err := tracePath(args[0])
			if err != nil {
				return err
			}
			code, err := runReplay(env, filepath.Dir(path), manifestPath, workdir, asJSON)
			if err != nil {
				return &ExitError{Code: code, Err: err}
			}
			if code != 0 {
				return &ExitError{Code: code, Silent: true}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&manifestPath, "manifest", "murmur.yaml", "the capsule manifest the session was recorded with")
	fl.StringVar(&workdir, "workdir", "", "work folder of the replay (default: a new one, as mur run makes)")
	fl.BoolVar(&asJSON, "json", false, "print the result as one JSON document")
	return cmd
}

// replayResult is mur replay --json.
type replayResult struct {
	Session    string             `json:"session"`
	Replay     string             `json:"replay"`
	RecordsDir string             `json:"records_dir"`
	Tasks      int                `json:"tasks"`
	Answers    int                `json:"answers"`
	Records    int                `json:"records"`
	Matched    int                `json:"matched"`
	Same       bool               `json:"same"`
	Divergence *replay.Divergence `json:"divergence,omitempty"`
}

// runReplay replays the session in dir through the capsule at
// manifestPath and reports; it returns mur's exit status.
func runReplay(env *Env, dir, manifestPath, workdir string, asJSON bool) (int, error) {
	rec, err := replay.Load(dir)
	var ref *replay.Refusal
	if errors.As(err, &ref) {
		return reportRefusal(env, diag.ListError{ref.Diag}), nil
	}
	if err != nil {
		return ExitFailed, err
	}
	c, ds := manifest.LoadCapsule(manifestPath)
	if ds.HasErrors() || c == nil {
		return reportRefusal(env, diag.ListError(ds.Errors())), nil
	}
	if name := c.Effective().Name; name != rec.Capsule {
		return reportRefusal(env, diag.ListError{diag.New(diag.RunReplayRecords, diag.Pos{File: manifestPath}, "name",
			fmt.Sprintf("session %s was recorded by capsule %q, not %q: pass --manifest with that capsule's murmur.yaml", rec.SessionID, rec.Capsule, name))}), nil
	}
	srv, err := providertest.Serve(rec.Answers...)
	if err != nil {
		return ExitFailed, err
	}
	defer srv.Close()
	endpoint, err := replay.Endpoint(rec.Driver, srv.URL)
	if err != nil {
		return reportRefusal(env, diag.ListError{diag.New(diag.RunReplayRecords, diag.Pos{File: filepath.Join(dir, "trace.jsonl"), Line: 1}, "driver", err.Error())}), nil
	}
	s, err := capsule.Open(env.Ctx, capsule.Options{Manifest: manifestPath, Workdir: workdir, ModelEndpoint: endpoint, Stderr: env.Stderr})
	if err != nil {
		return reportRefusal(env, err), nil
	}
	ctx, cancel := context.WithCancel(env.Ctx)
	defer cancel()
	chk := replay.NewChecker(rec, s.Dirs().Blobs())
	chk.OnDiverge = cancel
	stop := s.Subscribe(chk)
	var last capsule.Outcome
	for _, t := range rec.Tasks {
		if ctx.Err() != nil {
			break
		}
		last = s.RunTask(ctx, capsule.Task{ID: t.ID, Origin: capsule.Origin(t.Origin), Text: t.Text})
	}
	stop()
	closeSession(env, s, last)
	div, matched := chk.Result()
	res := replayResult{Session: rec.SessionID, Replay: s.ID(), RecordsDir: s.Dirs().Records, Tasks: len(rec.Tasks),
		Answers: len(rec.Answers), Records: len(rec.Records), Matched: matched, Same: div == nil, Divergence: div}
	if asJSON {
		if err := writeJSON(env.Stdout, res); err != nil {
			return ExitFailed, err
		}
	} else {
		fmt.Fprintf(env.Stdout, "replayed %s (capsule %s, %s, %s) as %s\n", rec.SessionID, rec.Capsule, count(res.Tasks, "task"), count(res.Answers, "model answer"), res.Replay)
		if div == nil {
			fmt.Fprintf(env.Stdout, "same: %d records match (every request, model answer, tool result and outcome as recorded)\n", matched)
		} else {
			fmt.Fprintf(env.Stdout, "diverge at %s\n", div)
		}
	}
	if div != nil {
		return ExitFailed, nil
	}
	return 0, nil
}

// count is n and the noun, plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
