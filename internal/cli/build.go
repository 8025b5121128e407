package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/store"
)

func init() { register(newBuildCmd) }

func newBuildCmd(env *Env) *cobra.Command {
	var (
		out, version  string
		asJSON, skill bool
	)
	cmd := &cobra.Command{
		Use:   "build [DIR]",
		Short: "Check an artifact's payload for its role, compile it, and pack it into a reproducible .mur.zip",
		Long: `build checks DIR (default .) and packs it into <name>-<version>.mur.zip: its
murmur.yaml and exactly the files requires_files lists, which sit beside it
(tools/guest/build.sh DIR writes a component there as DIR/<name>.wasm). A
skill folder with no murmur.yaml packs every file. The same inputs always
give the same bytes; the printed sha256 digest is what murmur.lock pins once
the artifact is installed.

The payload must fit the declared role, or nothing is written:
  wasm     the first .wasm listed is a WebAssembly component that compiles and
           exports what runtime: needs at the WIT version this mur serves
           (tool: murmur:tool/run; driver: murmur:tool/run or
           murmur:driver/process; hook: murmur:hook/lifecycle; capsule:
           murmur:capsule/run), importing only murmur: versions it serves
           (E-BLD-101, E-BLD-102). It is compiled into the compile cache
           (~/.murmur/cache/wasm) under the key the installed package's first
           run looks for, so that run does not compile it.
  native   the first executable listed is a binary for this OS and processor,
           or a #! script (E-BLD-103).
  skill    skill.md is listed, non-empty UTF-8 text (E-BLD-104).

--skill packs DIR by the skill-folder rules even when it holds a murmur.yaml,
which is then neither read nor packed: every regular file, its skill file
(found case-insensitively) as skill.md, under a murmur.yaml generated from the
skill's front matter (name, version, description; defaults: the folder's
name, 0.1.0). --version V packs V as the version in place of the one
murmur.yaml or the front matter declares, without changing the source; it
must be one segment of letters, digits, '.', '_' and '-' (E-BLD-001).`,
		Example: `  bash tools/guest/build.sh examples/echo-go && mur build examples/echo-go
  mur build examples/echo-go -o echo.mur.zip
  mur build my-skill/                 # a skill folder with no murmur.yaml
  mur build --skill my-skill/         # a skill folder, whatever else it holds
  mur build examples/echo-go --version 0.2.0-rc.1`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			b, checked, ds := buildCheckedWith(dir, artifact.BuildOptions{Skill: skill, Version: version})
			printDiags(env.Stderr, ds)
			if b == nil || ds.HasErrors() {
				return &ExitError{Code: 1, Silent: true}
			}
			if checked != "" && !asJSON {
				fmt.Fprintf(env.Stdout, "checked %s\n", checked)
			}
			a := b.Manifest
			if out == "" {
				out = a.Name + "-" + a.Version + ".mur.zip"
			}
			if err := artifact.WriteFileAtomic(out, b.Data, 0o644); err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			if asJSON {
				return writeJSON(env.Stdout, builtJSON{a.Name, a.Version, a.ExecutionType(), out, b.Digest, checked})
			}
			fmt.Fprintf(env.Stdout, "built %s (%s) -> %s\n%s\n", a.ID(), a.ExecutionType(), out, b.Digest)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default <name>-<version>.mur.zip)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.Flags().BoolVar(&skill, "skill", false, "pack DIR as a skill folder, ignoring a murmur.yaml in it")
	cmd.Flags().StringVar(&version, "version", "", "pack this version instead of the one the manifest declares")
	return cmd
}

// buildChecked packs dir and checks its payload for its role, as mur
// build and mur publish DIR both do: the format (E-BLD-103, E-BLD-104),
// then a component's exports and imports, compiling it into the cache
// (E-BLD-101, E-BLD-102). checked says what the component check found.
func buildChecked(dir string) (b *artifact.Built, checked string, ds diag.List) {
	return buildCheckedWith(dir, artifact.BuildOptions{})
}

// buildCheckedWith is buildChecked with mur build's --skill and --version.
func buildCheckedWith(dir string, opts artifact.BuildOptions) (b *artifact.Built, checked string, ds diag.List) {
	b, ds = artifact.BuildWith(dir, opts)
	if b != nil && !ds.HasErrors() {
		ds = append(ds, artifact.CheckPayloadFormat(b)...)
	}
	if b != nil && !ds.HasErrors() {
		var cds diag.List
		checked, cds = checkComponent(b)
		ds = append(ds, cds...)
	}
	return b, checked, ds
}

// builtJSON is mur build --json.
type builtJSON struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Execution string `json:"execution"`
	Output    string `json:"output"`
	Digest    string `json:"digest"`
	// Checked says what the component check found and where it was
	// compiled; empty for a native or static artifact.
	Checked string `json:"checked,omitempty"`
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
	if errs := joined(err); errs != nil {
		for _, e := range errs {
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

// joined returns the errors errors.Join put together in err, or nil. An
// error wrapping several causes with fmt.Errorf's %w also unwraps to a
// list, but it is one failure with one message: only a list whose
// messages, one per line, make up err's is a join.
func joined(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	errs := j.Unwrap()
	var lines []string
	for _, e := range errs {
		lines = append(lines, e.Error())
	}
	if len(errs) < 2 || strings.Join(lines, "\n") != err.Error() {
		if len(errs) == 1 && errs[0].Error() == err.Error() {
			return errs
		}
		return nil
	}
	return errs
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
