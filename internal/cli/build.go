package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/store"
)

func init() { register(newBuildCmd) }

func newBuildCmd(env *Env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "build [DIR]",
		Short: "Pack an artifact into a reproducible .mur.zip and print its digest",
		Long: `build packs DIR (default .) into <name>-<version>.mur.zip: its murmur.yaml and
exactly the files requires_files lists. A skill folder with no murmur.yaml
packs every file. The same inputs always give the same bytes; the printed
sha256 digest is what murmur.lock pins once the artifact is installed.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			b, ds := artifact.Build(dir)
			printDiags(env.Stderr, ds)
			if b == nil || ds.HasErrors() {
				return &ExitError{Code: 1, Silent: true}
			}
			a := b.Manifest
			if out == "" {
				out = a.Name + "-" + a.Version + ".mur.zip"
			}
			if err := artifact.WriteFileAtomic(out, b.Data, 0o644); err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			fmt.Fprintf(env.Stdout, "built %s (%s) -> %s\n%s\n", a.ID(), a.ExecutionType(), out, b.Digest)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default <name>-<version>.mur.zip)")
	return cmd
}

// printDiags prints one line per diagnostic, code first. The artifact
// commands keep their own printer so a change to doctor's output format
// does not change theirs.
func printDiags(w io.Writer, ds diag.List) {
	for _, d := range ds {
		fmt.Fprintln(w, d.String())
	}
}

// reportErr prints err as a diagnostic line beginning with its code when
// it has one (one line per error when err joins several), and returns the
// exit error for it.
func reportErr(env *Env, err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			reportErr(env, e)
		}
		return &ExitError{Code: 1, Silent: true}
	}
	var d diag.Diagnostic
	var l diag.ListError
	switch {
	case errors.As(err, &d):
		fmt.Fprintln(env.Stderr, d.String())
	case errors.As(err, &l):
		printDiags(env.Stderr, diag.List(l))
	default:
		if code, ok := store.CodeOf(err); ok {
			fmt.Fprintf(env.Stderr, "%s %v\n", code, err)
		} else {
			fmt.Fprintf(env.Stderr, "mur: %v\n", err)
		}
	}
	return &ExitError{Code: 1, Silent: true}
}

// projectDirOf is the absolute directory of a manifest path.
func projectDirOf(manifestPath string) string {
	d, err := filepath.Abs(filepath.Dir(manifestPath))
	if err != nil {
		return filepath.Dir(manifestPath)
	}
	return d
}

// inProject reports whether manifestPath exists, so commands that work
// with or without a capsule know whether the project store is in play.
func inProject(manifestPath string) bool {
	_, err := os.Stat(manifestPath)
	return err == nil
}
