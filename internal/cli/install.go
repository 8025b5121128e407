package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/store"
)

func init() {
	register(newInstallCmd)
	RegisterDoctorCheck(installedCheck)
}

func newInstallCmd(env *Env) *cobra.Command {
	var (
		path   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install a capsule's artifacts and pin them in murmur.lock",
		Long: `install resolves every artifacts: entry of the capsule (source: entries are
skipped: they are read from disk on every run) through the resolution order in
config.yaml, verifies each package against the digest its source reports and
against murmur.lock's pin, and only when all of them check out writes them to
the project store (.murmur/ beside murmur.yaml) and updates murmur.lock
(origin: operator). Any refusal writes nothing.`,
		Example: `  cd capsules/hello && mur install
  mur install --manifest capsules/hello/murmur.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := needProject(cmd, path); err != nil {
				return err
			}
			c, ds := manifest.LoadCapsule(path)
			if c == nil || ds.HasErrors() {
				printDiags(env.Stderr, ds)
				return &ExitError{Code: 1, Silent: true}
			}
			var refs []artifact.Ref
			var local []string
			for i, a := range c.Artifacts {
				if a.Source != "" {
					local = append(local, a.Name)
					continue
				}
				r, err := artifact.ParseFullName(a.Name)
				if err != nil {
					field := fmt.Sprintf("artifacts[%d].name", i)
					return reportErr(env, diag.New(diag.ManInvalid, c.Pos(field), field, err.Error()))
				}
				r.Version = a.Version
				refs = append(refs, r)
			}
			if !asJSON {
				for _, n := range local {
					fmt.Fprintf(env.Stdout, "skipped %s: a local source, read from disk on every run and never locked\n", n)
				}
			}
			if len(refs) == 0 {
				if asJSON {
					return writeJSON(env.Stdout, installJSON{Installed: []installedJSON{}, Skipped: local})
				}
				fmt.Fprintln(env.Stdout, "nothing to install")
				return nil
			}
			open, err := store.OpenFromConfig(projectDirOf(path))
			if err != nil {
				return reportErr(env, err)
			}
			srcs, err := open.Sources()
			if err != nil {
				return reportErr(env, err)
			}
			in := &store.Installer{Project: open.Project, Sources: srcs, Check: store.InstallChecker}
			done, err := in.Install(env.Ctx, refs)
			if err != nil {
				return reportErr(env, err)
			}
			out := installJSON{Installed: []installedJSON{}, Skipped: local, Lock: open.Project.LockPath()}
			for _, d := range done {
				state := "installed"
				if !d.Changed {
					state = "verified"
				}
				out.Installed = append(out.Installed, installedJSON{d.Ref.String(), state, d.From, d.Digest})
			}
			if asJSON {
				return writeJSON(env.Stdout, out)
			}
			for _, d := range out.Installed {
				fmt.Fprintf(env.Stdout, "%s %s from %s %s\n", d.State, d.Ref, d.From, d.Digest)
			}
			fmt.Fprintf(env.Stdout, "pinned %d artifact(s) in %s\n", len(done), out.Lock)
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "manifest", "murmur.yaml", "capsule manifest")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// installJSON is mur install --json.
type installJSON struct {
	Installed []installedJSON `json:"installed"`
	// Skipped names the local-source entries, never locked.
	Skipped []string `json:"skipped,omitempty"`
	Lock    string   `json:"lock,omitempty"`
}

type installedJSON struct {
	Ref    string `json:"ref"`
	State  string `json:"state"` // installed, or verified (already as pinned)
	From   string `json:"from"`
	Digest string `json:"digest"`
}

// installedCheck is mur doctor's check that every artifact resolves as a
// launch would (pinned, stored, bytes matching the pin; local sources from
// disk) and that the staging checks needing their own manifests pass.
func installedCheck(env *Env, c *manifest.Capsule) diag.List {
	floor := ""
	if c.Capabilities != nil {
		floor = c.Capabilities.Containment
	}
	_, ds := store.Stage(env.Ctx, c, floor)
	return ds
}
