package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/manifest"
)

func init() { register(newRunCmd) }

// errNoLaunch is returned by mur run without --explain-scope: this build
// cannot launch a capsule yet.
var errNoLaunch = errors.New("launching a capsule is not available in this build; mur run --explain-scope shows what a launch would grant")

func newRunCmd(env *Env) *cobra.Command {
	var (
		path    string
		explain bool
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a capsule (this build: --explain-scope only)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if explain {
				return explainScope(env, path, asJSON)
			}
			// An invalid manifest is refused with its diagnostics first,
			// as every command that reads one does.
			c, ds := manifest.LoadCapsule(path)
			if c == nil || ds.HasErrors() {
				writeDiagnostics(env.Stderr, ds, true)
				return &ExitError{Code: 1, Silent: true}
			}
			return &ExitError{Code: 2, Err: errNoLaunch}
		},
	}
	cmd.Flags().StringVar(&path, "manifest", "murmur.yaml", "capsule manifest")
	cmd.Flags().BoolVar(&explain, "explain-scope", false, "print the effective grants and exit, without launching")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --explain-scope, print JSON")
	return cmd
}
