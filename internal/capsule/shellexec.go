package capsule

import (
	"context"
	"errors"

	"github.com/murmur/mur/internal/component"
)

// shellExecutor serves murmur:shell/execute to tool components when the
// capsule allows shell binaries; nil (the import answers not available)
// when it allows none.
func (l *launcher) shellExecutor() component.ShellExecutor {
	if l.c.Capabilities == nil || l.c.Capabilities.Shell == nil || len(l.c.Capabilities.Shell.Allow) == 0 {
		return nil
	}
	return shellExec{l}
}

// shellExec runs a component's command through the session's one shell
// layer — the allow-list, the read-only check, the sandbox, its limits and
// the shell records a shell tool call gets — once that layer is up.
type shellExec struct{ l *launcher }

func (x shellExec) Run(ctx context.Context, binary string, args []string, env []component.Pair) (component.ShellResult, error) {
	if x.l.started == nil {
		return component.ShellResult{}, errNoSession
	}
	select {
	case <-x.l.started:
	case <-ctx.Done():
		return component.ShellResult{}, ctx.Err()
	}
	if x.l.shell == nil {
		return component.ShellResult{}, errors.New("the session's shell layer did not start")
	}
	// The on-shell policy hooks gate a component's command as they gate
	// the model's: a denied command does not run.
	if err := hooksFrom(ctx).gateShell(ctx, binary, args); err != nil {
		return component.ShellResult{}, err
	}
	kv := make([][2]string, len(env))
	for i, p := range env {
		kv[i] = p
	}
	r, err := x.l.shell.Execute(ctx, binary, args, kv)
	if err != nil {
		return component.ShellResult{}, err
	}
	return component.ShellResult{ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr, Truncated: r.Truncated, FullOutputPath: r.FullOutputPath}, nil
}
