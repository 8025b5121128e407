// Package cli is mur's command line: one file per subcommand, each
// registering itself with register so that adding a command touches no
// shared file.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/capsule"
)

// Env is what a command may touch of the outside world. Tests build one
// in-process; main builds one from the real process.
type Env struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Exit statuses shared by every command; docs/cli.md has the table. A
// refused mur run is capsule.ExitRefused (2) and a canceled one 130.
const (
	// ExitFailed: the command ran and failed or found something wrong (a
	// build, publish or install refused, pins not as installed, nothing
	// found, a run's task that ended other than ok).
	ExitFailed = 1
	// ExitRefused: the capsule cannot launch as it stands (mur run refused
	// before a session existed, or mur doctor found what would refuse it).
	ExitRefused = capsule.ExitRefused
	// ExitUsage: the command line is wrong (unknown command or flag, wrong
	// arguments) or the command needs a project and there is none here;
	// sysexits' EX_USAGE.
	ExitUsage = 64
)

// ExitError carries a specific exit status out of a command. Commands that
// have already reported their problem on stderr return it with Silent set.
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// constructors holds every registered subcommand constructor.
var constructors []func(*Env) *cobra.Command

// register adds a subcommand; called from init in each command's file.
func register(f func(*Env) *cobra.Command) { constructors = append(constructors, f) }

// NewRoot builds the root command with every registered subcommand.
func NewRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "mur",
		Short:         "mur runs Murmur capsules: secure, sandboxed AI agents",
		SilenceUsage:  true,
		SilenceErrors: true,
		// completion.go is mur's own completion command.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	// mur --version prints what mur version prints.
	var b strings.Builder
	readVersion().write(&b, false)
	root.Version = Version
	root.SetVersionTemplate(b.String())
	// Defined here so cobra does not take -v for it: -v stays free.
	root.Flags().Bool("version", false, "print what mur version prints")
	for _, f := range constructors {
		root.AddCommand(f(env))
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	usageArgs(root)
	return root
}

// writeJSON prints v as one JSON document: what --json prints on every
// command that prints data.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func usageError(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// needProject refuses, as a usage error, a command that works on a
// capsule when there is no manifest at path: it says where it looked and
// what to do, instead of acting on nothing.
func needProject(cmd *cobra.Command, path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	where, _ := filepath.Abs(path)
	return usageError(fmt.Errorf("not in a project: no capsule manifest at %s; run mur %s in a capsule's folder (beside its murmur.yaml) or pass --manifest PATH", where, cmd.Name()))
}

// usageArgs makes a wrong argument list a usage error for c and every
// command under it.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError(fmt.Errorf("%w; see mur %s --help", err, cmd.Name()))
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// Main runs mur with args and returns the process exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Ctx: ctx, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	root := NewRoot(env)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var xe *ExitError
	if errors.As(err, &xe) {
		if !xe.Silent && xe.Err != nil {
			fmt.Fprintf(stderr, "mur: %v\n", xe.Err)
		}
		return xe.Code
	}
	fmt.Fprintf(stderr, "mur: %v\n", err)
	// cobra reports an unknown command with a plain error.
	if strings.HasPrefix(err.Error(), "unknown command") {
		return ExitUsage
	}
	return ExitFailed
}
