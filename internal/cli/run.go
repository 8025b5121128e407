package cli

import (
	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/capsule"
)

func init() { register(newRunCmd) }

func newRunCmd(env *Env) *cobra.Command {
	var (
		f            capsule.Flags
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
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if explain {
				return explainScope(env, f.Manifest, asJSON)
			}
			if cmd.Flags().Changed("system-prompt") {
				f.SystemPrompt = &systemPrompt
			}
			if code := capsule.Run(env.Ctx, f, env.Stdout, env.Stderr); code != 0 {
				return &ExitError{Code: code, Silent: true}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Manifest, "manifest", "murmur.yaml", "capsule manifest")
	fl.BoolVar(&explain, "explain-scope", false, "print the effective grants and exit, without launching")
	fl.BoolVar(&asJSON, "json", false, "with --explain-scope, print JSON")
	fl.StringVar(&f.Task, "task", "", "the launch's task (default: task.md or input.txt in the work folder)")
	fl.StringVar(&f.Workdir, "workdir", "", "work folder (default: <manifest-dir>/workdir/<session-id>)")
	fl.DurationVar(&f.Deadline, "deadline", 0, "end the session after this long (e.g. 10m); the agent is told before")
	fl.StringVar(&systemPrompt, "system-prompt", "", "replace the manifest's system prompt for this launch")
	return cmd
}
