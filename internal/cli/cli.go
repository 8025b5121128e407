// Package cli is mur's command line: one file per subcommand, each
// registering itself with register so that adding a command touches no
// shared file.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Env is what a command may touch of the outside world. Tests build one
// in-process; main builds one from the real process.
type Env struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

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
	}
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	for _, f := range constructors {
		root.AddCommand(f(env))
	}
	return root
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
	return 2
}
