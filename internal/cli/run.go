package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/event"
)

func init() { register(newRunCmd) }

func newRunCmd(env *Env) *cobra.Command {
	var (
		f            capsule.Options
		serve        serveFlags
		explain      bool
		asJSON       bool
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

Exit status: 0 ok, 1 the task ended other than ok, 2 the launch was
refused before any session existed, 130 canceled.`,
		Example: `  cd capsules/hello && mur run --task "Write a short hello note in notes/hello.md."
  mur run --explain-scope --manifest capsules/hello/murmur.yaml
  mur run --deadline 10m --workdir /tmp/work
  mur run --context ctx_support_42 --task "And the second question?"
  mur run --resume ses_01k4m2y7xq8f9v3n5r7t9w1c2e --task "Go on."`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := needProject(cmd, f.Manifest); err != nil {
				return err
			}
			if explain {
				return explainScope(env, f.Manifest, asJSON)
			}
			if cmd.Flags().Changed("system-prompt") {
				f.SystemPrompt = &systemPrompt
			}
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
	fl.BoolVar(&asJSON, "json", false, "with --explain-scope, print JSON")
	fl.StringVar(&f.LaunchTask, "task", "", "the launch's task (default: task.md or input.txt in the work folder)")
	fl.StringVar(&f.Workdir, "workdir", "", "work folder (default: <manifest-dir>/workdir/<session-id>)")
	fl.StringVar(&f.ContextID, "context", "", "run the launch task in this conversation context: it continues the context's record under lifecycle.conversation: threaded, and is recorded in it either way")
	fl.StringVar(&f.Resume, "resume", "", "continue the conversation of this recorded session (ses_…) of the capsule, under any lifecycle.conversation; reports its lost background work")
	fl.DurationVar(&f.Deadline, "deadline", 0, "end the session after this long (e.g. 10m); the agent is told before")
	fl.StringVar(&systemPrompt, "system-prompt", "", "replace the manifest's system prompt for this launch")
	fl.StringVar(&serve.bind, "bind", "", "serve the A2A door on this address (default: 127.0.0.1 and network.internal_port or a free port)")
	fl.StringVar(&serve.taskAcceptance, "lifecycle-task-acceptance", "", "override lifecycle.task_acceptance: none, single or queue")
	fl.StringVar(&serve.afterTask, "lifecycle-after-task", "", "override lifecycle.after_task: exit or sleep")
	return cmd
}

// runCapsule opens the capsule's session, runs its launch task with the
// model's text streaming to stdout, closes the session and returns mur
// run's exit status.
func runCapsule(env *Env, o capsule.Options) int {
	o.Stderr = env.Stderr
	s, err := capsule.Open(env.Ctx, o)
	if err != nil {
		return reportRefusal(env, err)
	}
	p := &textPrinter{w: env.Stdout}
	out := s.RunLaunchTask(env.Ctx, p)
	p.endLine()
	return closeSession(env, s, out)
}

// textPrinter prints a task's streamed text, ending each model call's text
// with a newline.
type textPrinter struct {
	w       io.Writer
	mu      sync.Mutex
	midLine bool
}

// Emit implements event.Sink.
func (p *textPrinter) Emit(e event.Event) {
	switch e.Type {
	case event.TextDelta:
		text, _ := e.Fields["text"].(string)
		p.mu.Lock()
		defer p.mu.Unlock()
		if text != "" {
			p.midLine = !strings.HasSuffix(text, "\n")
			io.WriteString(p.w, text)
		}
	case event.TextEnd:
		p.endLine()
	}
}

func (p *textPrinter) endLine() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.midLine {
		io.WriteString(p.w, "\n")
		p.midLine = false
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
