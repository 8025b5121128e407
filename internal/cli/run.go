package cli

import (
	"fmt"
	"io"
	"sync"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/progress"
	"github.com/murmur/mur/internal/trace"
)

func init() { register(newRunCmd) }

func newRunCmd(env *Env) *cobra.Command {
	var (
		f            capsule.Options
		serve        serveFlags
		explain      bool
		asJSON       bool
		verbose      bool
		quiet        bool
		systemPrompt string
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a capsule: its agent calls the model through its driver and runs the tools it asks for",
		Long: `Run launches the capsule described by murmur.yaml (or --manifest). The
task comes from --task, or task.md / input.txt in the work folder. The
model's text streams to stdout; the answer is written to out/result.txt in
the session's records directory, and the last line on stderr is the
session's status.

When stderr is a terminal, mur shows the run as it goes: one line per tool
call (✓ or ✗, the tool, its arguments cut short, its duration, a failure's
status and error), a failed model call and its retry, and a wait with its
elapsed seconds while the capsule starts, the model thinks or a tool runs.
Off a terminal it prints only the model's text and the status line. -v adds
a line per model call and per other record, on a terminal or not; -q shows
only the text. --json streams the session's events on stdout instead of the
text, one JSON object a line (docs/run.md, "Watching a run").

Exit status: 0 ok, 1 the task ended other than ok, 2 the launch was
refused before any session existed, 130 canceled.`,
		Example: `  cd capsules/hello && mur run --task "Write a short hello note in notes/hello.md."
  mur run --explain-scope --manifest capsules/hello/murmur.yaml
  mur run --deadline 10m --workdir /tmp/work
  mur run --json --task "Summarise notes/" | jq -c 'select(.event == "tool_call")'
  mur run -v --task "Write a short hello note in notes/hello.md." 2>run.log
  mur run --context ctx_support_42 --task "And the second question?"
  mur run --resume ses_01k4m2y7xq8f9v3n5r7t9w1c2e --task "Go on."
  mur run --resume ses_01k4m2y7xq8f9v3n5r7t9w1c2e --resume-mode compact --task "Go on."`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := needProject(cmd, f.Manifest); err != nil {
				return err
			}
			if explain {
				return explainScope(env, f.Manifest, asJSON)
			}
			if verbose && quiet {
				return usageError(fmt.Errorf("-v and -q contradict each other: give one"))
			}
			if cmd.Flags().Changed("system-prompt") {
				f.SystemPrompt = &systemPrompt
			}
			level := progress.Normal
			switch {
			case verbose:
				level = progress.Verbose
			case quiet:
				level = progress.Quiet
			}
			env, done := watchRun(env, &f, level, asJSON)
			defer done()
			dp, err := planDoor(f.Manifest, serve)
			if err != nil {
				fmt.Fprintf(env.Stderr, "mur: %v\n", err)
				return &ExitError{Code: capsule.ExitRefused, Silent: true}
			}
			if dp != nil {
				if code := serveCapsule(env, f, dp); code != 0 {
					return &ExitError{Code: code, Silent: true}
				}
				return nil
			}
			if code := runCapsule(env, f); code != 0 {
				return &ExitError{Code: code, Silent: true}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Manifest, "manifest", "murmur.yaml", "capsule manifest")
	fl.BoolVar(&explain, "explain-scope", false, "print the effective grants and exit, without launching")
	fl.BoolVar(&asJSON, "json", false, "stream the session's events on stdout as NDJSON instead of the text (with --explain-scope: print the grants as JSON)")
	fl.BoolVarP(&verbose, "verbose", "v", false, "also show a line per model call and per other record, on a terminal or not")
	fl.BoolVarP(&quiet, "quiet", "q", false, "show only the model's text and the status line, never tool lines or waits")
	fl.StringVar(&f.LaunchTask, "task", "", "the launch's task (default: task.md or input.txt in the work folder)")
	fl.StringVar(&f.Workdir, "workdir", "", "work folder (default: <manifest-dir>/workdir/<session-id>)")
	fl.StringVar(&f.ContextID, "context", "", "run the launch task in this conversation context: it continues the context's record under lifecycle.conversation: threaded, and is recorded in it either way")
	fl.StringVar(&f.Resume, "resume", "", "continue the conversation of this recorded session (ses_…) of the capsule, under any lifecycle.conversation; reports its lost background work")
	fl.StringVar(&f.ResumeMode, "resume-mode", capsule.ResumeFull, "with --resume: full starts from the whole record; compact first hands it to the capsule's on-compaction hooks and starts from their summary")
	fl.DurationVar(&f.Deadline, "deadline", 0, "end the session after this long (e.g. 10m); the agent is told before")
	fl.StringVar(&systemPrompt, "system-prompt", "", "replace the manifest's system prompt for this launch")
	fl.StringVar(&serve.bind, "bind", "", "serve the A2A door on this address (default: 127.0.0.1 and network.internal_port or a free port)")
	fl.StringVar(&serve.taskAcceptance, "lifecycle-task-acceptance", "", "override lifecycle.task_acceptance: none, single or queue")
	fl.StringVar(&serve.afterTask, "lifecycle-after-task", "", "override lifecycle.after_task: exit or sleep")
	return cmd
}

// watchRun points the session's one event stream at what the person
// running mur sees: with asJSON every event as NDJSON on stdout, else the
// progress view (the launch task's text on stdout, tool lines and waits on
// stderr). The Env it returns has stderr routed through the view, so a
// warning never lands inside a wait's line; done erases the last wait.
func watchRun(env *Env, o *capsule.Options, level progress.Level, asJSON bool) (*Env, func()) {
	if asJSON {
		o.Watch = &jsonEvents{w: env.Stdout}
		return env, func() {}
	}
	v := progress.New(env.Stdout, env.Stderr, level, progress.Terminal(env.Stderr))
	o.Watch = v
	watched := *env
	watched.Stderr = v.Stderr()
	// Staging, the gateways, the sandbox and the driver's compile all
	// happen before session_start, which ends this wait.
	v.Wait("starting the capsule")
	return &watched, v.Close
}

// runCapsule opens the capsule's session, runs its launch task (its text
// and events go to o.Watch), closes the session and returns mur run's
// exit status.
func runCapsule(env *Env, o capsule.Options) int {
	o.Stderr = env.Stderr
	s, err := capsule.Open(env.Ctx, o)
	if err != nil {
		return reportRefusal(env, err)
	}
	return closeSession(env, s, s.RunLaunchTask(env.Ctx, nil))
}

// jsonEvents writes each event of the session as one JSON object a line:
// a trace line's shape (event, ts, then the fields), live events
// (text_delta, text_end, tool_start) included.
type jsonEvents struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// Emit implements event.Sink.
func (j *jsonEvents) Emit(e event.Event) {
	b, err := trace.Marshal(e)
	j.mu.Lock()
	defer j.mu.Unlock()
	if err == nil && j.err == nil {
		_, j.err = j.w.Write(b)
	}
}

// closeSession closes s and returns mur's exit status. A session whose
// trace or records could not be written exits non-zero whatever its task
// did: an ok status over a trace that stopped midway (a full disk, a limit
// lowered under mur) would vouch for steps nobody can read back.
func closeSession(env *Env, s *capsule.Session, final capsule.Outcome) int {
	code := capsule.ExitStatus(final)
	if err := s.Close(final); err != nil {
		fmt.Fprintf(env.Stderr, "mur: the session's records are incomplete: %v\n", err)
		if code == capsule.ExitOK {
			code = capsule.ExitTask
		}
	}
	return code
}
