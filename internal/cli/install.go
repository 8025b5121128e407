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
		path, registry string
		asJSON, global bool
		allPlatforms   bool
	)
	cmd := &cobra.Command{
		Use:   "install [NAME[@VERSION]...]",
		Short: "Install artifacts and pin them in murmur.lock",
		Long: `install with no NAME resolves every artifacts: entry of the capsule (source:
entries are skipped: they are read from disk on every run) through the
resolution order in config.yaml, verifies each package against the digest its
source reports and against murmur.lock's pin, and only when all of them check
out writes them to the project store (.murmur/ beside murmur.yaml) and updates
murmur.lock (origin: operator). Any refusal writes nothing. An artifact whose
scope config.yaml's trusted_keys names must carry a signature by one of that
scope's keys (mur publish --sign): unsigned is E-REG-013, signed by no trusted
key E-REG-014, a signature that does not verify E-REG-015, only keyless
signatures E-REG-019; murmur.lock records the key (verified:), and every
mur run checks that signature again under the trusted_keys of the day.

install NAME@VERSION installs that version; a bare NAME (<scope>/<name>) the
newest version, by semver precedence, that fits the WIT level this mur serves
and has a payload for this platform (on a tie the earlier source wins). Each
is pinned, and added to murmur.yaml's artifacts: (or its version there
updated) so mur run stages it. An unknown version is refused with the versions
that exist; an unknown name with the closest one held (E-REG-001).

A scope with a source in config.yaml (sources.<scope>.repo: a GitHub
repository, api_url for GitHub Enterprise, token from $GITHUB_TOKEN or
token_env) is tried last, for a version no store or registry holds: the
release tagged <version> or v<version>, asset <name>-<version>.mur.zip, with
the same checks; murmur.lock records the owner's GitHub account id
(owner_id). A later fetch from a repository owned by another account is
E-REG-017; no such repository E-REG-016; no asset in the release E-REG-018.

  -g, --global       install NAME... into the global store (~/.murmur/store),
                     from the registries in the resolution order; no project,
                     no murmur.lock
  --registry NAME    resolve from that registry of config.yaml only
  --all-platforms    also take a native payload built for another platform
                     (a version has one payload: this installs it whatever
                     platform it is for, e.g. to ship a project to another host)`,
		Example: `  cd capsules/hello && mur install
  mur install --manifest capsules/hello/murmur.yaml
  mur install ana/echo-go@0.1.0
  mur install ana/echo-go                 # the newest version that fits
  mur config set -g sources.ana.repo ana-org/mur-artifacts && mur install ana/echo-go@0.2.0
  mur install -g ana/echo-go --registry hub
  mur install --all-platforms ana/jq-native@1.7.1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if global {
				return installGlobal(env, args, registry, allPlatforms, asJSON)
			}
			if err := needProject(cmd, path); err != nil {
				return err
			}
			c, ds := manifest.LoadCapsule(path)
			if c == nil || ds.HasErrors() {
				printDiags(env.Stderr, ds)
				return &ExitError{Code: 1, Silent: true}
			}
			open, err := store.OpenFromConfig(projectDirOf(path))
			if err != nil {
				return reportErr(env, err)
			}
			srcs, err := installSources(open, registry, false)
			if err != nil {
				return reportErr(env, err)
			}
			var refs []artifact.Ref
			var local []string
			if len(args) > 0 {
				if refs, err = installArgs(env, args, srcs); err != nil {
					return err
				}
			} else {
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
			trust, err := open.Trust()
			if err != nil {
				return reportErr(env, err)
			}
			in := &store.Installer{Project: open.Project, Sources: srcs, Check: store.InstallChecker, AnyPlatform: allPlatforms, Trust: trust}
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
			if len(args) > 0 {
				// Named on the command line: the capsule declares them too,
				// or mur run would not stage what was just pinned.
				added, err := declareInstalled(path, done)
				if err != nil {
					return reportErr(env, err)
				}
				out.Declared = added
			}
			if asJSON {
				return writeJSON(env.Stdout, out)
			}
			for _, d := range out.Installed {
				fmt.Fprintf(env.Stdout, "%s %s from %s %s\n", d.State, d.Ref, d.From, d.Digest)
			}
			for _, d := range out.Declared {
				fmt.Fprintf(env.Stdout, "declared %s in %s\n", d, path)
			}
			fmt.Fprintf(env.Stdout, "pinned %d artifact(s) in %s\n", len(done), out.Lock)
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "manifest", "murmur.yaml", "capsule manifest")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.Flags().BoolVarP(&global, "global", "g", false, "install NAME... into the global store, from the registries")
	cmd.Flags().StringVar(&registry, "registry", "", "resolve from this registry of config.yaml only")
	cmd.Flags().BoolVar(&allPlatforms, "all-platforms", false, "also take a native payload built for another platform")
	return cmd
}

// installGlobal is mur install -g NAME...: each resolved from the
// registries, verified as a project install is, and put into the global
// store.
func installGlobal(env *Env, args []string, registry string, allPlatforms, asJSON bool) error {
	if len(args) == 0 {
		return usageError(fmt.Errorf("mur install -g needs the artifacts to install: mur install -g <scope>/<name>[@<version>]"))
	}
	open, err := store.OpenFromConfig("")
	if err != nil {
		return reportErr(env, err)
	}
	srcs, err := installSources(open, registry, true)
	if err != nil {
		return reportErr(env, err)
	}
	refs, err := installArgs(env, args, srcs)
	if err != nil {
		return err
	}
	trust, err := open.Trust()
	if err != nil {
		return reportErr(env, err)
	}
	in := &store.Installer{Sources: srcs, Check: store.InstallChecker, AnyPlatform: allPlatforms, Trust: trust}
	dst := store.GlobalStore(open.MurmurDir)
	done, err := in.InstallTo(env.Ctx, dst, refs)
	if err != nil {
		return reportErr(env, err)
	}
	out := installJSON{Installed: []installedJSON{}}
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
	fmt.Fprintf(env.Stdout, "stored %d artifact(s) in %s\n", len(done), dst.Root())
	return nil
}

// installJSON is mur install --json.
type installJSON struct {
	Installed []installedJSON `json:"installed"`
	// Skipped names the local-source entries, never locked.
	Skipped []string `json:"skipped,omitempty"`
	Lock    string   `json:"lock,omitempty"`
	// Declared names the artifacts mur install NAME added to, or whose
	// version it changed in, murmur.yaml's artifacts:.
	Declared []string `json:"declared,omitempty"`
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
