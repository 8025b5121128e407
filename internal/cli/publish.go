package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/store"
)

func init() { register(newPublishCmd) }

func newPublishCmd(env *Env) *cobra.Command {
	var (
		to, scope, path string
		platform        string
		signKey         string
		asJSON          bool
	)
	cmd := &cobra.Command{
		Use:   "publish [FILE|DIR]",
		Short: "Publish an artifact to a store or an OCI registry",
		Long: `publish puts a built .mur.zip (FILE), or the artifact DIR builds to (default .),
into a store (project, global) or a registry named in config.yaml, as
<scope>/<name>:<version>. A DIR is packed and checked as mur build does
(E-BLD-…: the payload for its role, a component compiled into the cache).
--to defaults to config.yaml's publish:, else global.
A reserved version (latest, stable, edge: E-REG-004) or a malformed driver
models: (E-REG-011) is refused and nothing is written. --sign KEY signs the
package's digest with a key from mur key generate and attaches the signature
(a Sigstore bundle) beside it, which mur install checks where config.yaml's
trusted_keys demands one.`,
		Example: `  mur publish echo-go-0.1.0.mur.zip --scope me
  mur publish examples/echo-go --scope me --to hub
  mur publish echo-go-0.1.0.mur.zip --scope me --to hub --sign ~/.murmur/keys/me.key
  mur publish jq-native-1.7.1.mur.zip --scope me --platform darwin/arm64`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src := "."
			if len(args) == 1 {
				src = args[0]
			}
			fi, err := os.Stat(src)
			if err != nil {
				return reportErr(env, diag.New(diag.IONotFound, diag.Pos{File: src}, "", fmt.Sprintf("%v", err)))
			}
			var b *artifact.Built
			if fi.IsDir() {
				var ds diag.List
				b, _, ds = buildChecked(src)
				printDiags(env.Stderr, ds)
				if b == nil || ds.HasErrors() {
					return &ExitError{Code: 1, Silent: true}
				}
			} else {
				data, err := os.ReadFile(src)
				if err != nil {
					return reportErr(env, err)
				}
				var ds diag.List
				b, _, ds, err = artifact.Inspect(data, src)
				if err != nil {
					return reportErr(env, err)
				}
				// A packed manifest's malformed models: is E-REG-011 here,
				// reported by Publish, not the build's E-BLD-005.
				var keep diag.List
				for _, d := range ds {
					if d.Code != diag.BldModels {
						keep = append(keep, d)
					}
				}
				printDiags(env.Stderr, keep)
				if b == nil || keep.HasErrors() {
					return &ExitError{Code: 1, Silent: true}
				}
			}
			open, err := store.OpenFromConfig(projectIfAny(path))
			if err != nil {
				return reportErr(env, err)
			}
			if to == "" {
				to = open.Config.PublishTarget()
			}
			target, err := open.Source(to)
			if err != nil {
				return reportErr(env, err)
			}
			ref, err := store.PublishFor(env.Ctx, target, b, scope, platform)
			if errors.Is(err, store.ErrPlatform) {
				return usageError(err)
			}
			if err != nil {
				return reportErr(env, err)
			}
			out := map[string]string{"ref": ref.String(), "target": target.Name(), "digest": b.Digest}
			if signKey != "" {
				if out["signed_by"], err = signPublished(env, target, ref, b.Digest, signKey); err != nil {
					return reportErr(env, err)
				}
			}
			if asJSON {
				return writeJSON(env.Stdout, out)
			}
			fmt.Fprintf(env.Stdout, "published %s to %s\n%s\n", ref, target.Name(), b.Digest)
			if signKey != "" {
				fmt.Fprintf(env.Stdout, "signed by %s\n", out["signed_by"])
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "project, global, or a registry name from config.yaml")
	cmd.Flags().StringVar(&platform, "platform", "", "GOOS/GOARCH a native payload is for (default: this host's)")
	cmd.Flags().StringVar(&scope, "scope", "local", "scope to publish under: the artifact becomes <scope>/<name>")
	cmd.Flags().StringVar(&path, "manifest", "murmur.yaml", "capsule manifest whose project store and config apply")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.Flags().StringVar(&signKey, "sign", "", "private key file (mur key generate) to sign the published package with")
	return cmd
}

// projectIfAny is the manifest's directory when it exists, else "".
func projectIfAny(manifestPath string) string {
	if inProject(manifestPath) {
		return projectDirOf(manifestPath)
	}
	return ""
}
