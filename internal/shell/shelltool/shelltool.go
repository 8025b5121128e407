// Package shelltool offers a shell.Session to the agent loop: an
// agent.Tool per allowed binary, background-command, native tools, and the
// done check's command runner, all through the session's one contained
// path.
package shelltool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/shell"
	"github.com/murmur/mur/internal/shell/readonly"
)

// Tools returns the session's synthetic tools: one per allowed binary and,
// when lifecycle.shell_grace_secs is set, background-command.
func Tools(s *shell.Session) []agent.Tool {
	var out []agent.Tool
	for _, t := range s.Tools() {
		def := agent.ToolDef{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.InputSchema), Kind: agent.KindShell}
		if t.Name == shell.BackgroundTool {
			def.Kind = agent.KindRuntime
			out = append(out, &background{s: s, def: def})
			continue
		}
		out = append(out, &binary{s: s, def: def})
	}
	return out
}

// Prechecker is implemented by the shell and native tools this package
// returns. The dispatcher calls Precheck before asking any policy hook; a
// non-nil denial is already recorded (protected_path_denied), its Message
// is the model's reply, and the call is neither run nor given a tool_call
// line. Call repeats the check, so a dispatcher that skips Precheck still
// refuses, only later.
type Prechecker interface {
	Precheck(input json.RawMessage) *readonly.Denial
}

type binary struct {
	s   *shell.Session
	def agent.ToolDef
}

func (b *binary) Def() agent.ToolDef { return b.def }

// Precheck implements Prechecker. Malformed input is left to Call.
func (b *binary) Precheck(input json.RawMessage) *readonly.Denial {
	var in struct {
		Command *string `json:"command"`
	}
	if json.Unmarshal(input, &in) != nil || in.Command == nil {
		return nil
	}
	d, err := b.s.Check(b.def.Name, *in.Command)
	if err != nil || d == nil {
		return nil
	}
	b.s.Record(d)
	return d
}

// Call runs the command. A read-only refusal is a result the model reads
// (the record is already written); a non-zero exit is a failed result
// carrying the same text.
func (b *binary) Call(ctx context.Context, input json.RawMessage) (agent.Result, error) {
	var in struct {
		Command *string `json:"command"`
	}
	if err := json.Unmarshal(input, &in); err != nil || in.Command == nil {
		return agent.Result{Status: agent.StatusError, Summary: fmt.Sprintf(
			`%s takes {"command": "<string>"}; this call did not run.`, b.def.Name)}, nil
	}
	r, err := b.s.Call(ctx, b.def.Name, *in.Command)
	return result(r, err)
}

func result(r shell.Result, err error) (agent.Result, error) {
	var d *readonly.Denial
	switch {
	case errors.As(err, &d):
		return agent.Result{Status: agent.StatusError, Summary: d.Message()}, nil
	case err != nil:
		return agent.Result{}, err
	}
	st := agent.StatusPassed
	if r.WorkID == "" && r.ExitCode != 0 {
		st = agent.StatusFailed
	}
	return agent.Result{Status: st, Data: r.Text()}, nil
}

type background struct {
	s   *shell.Session
	def agent.ToolDef
}

func (b *background) Def() agent.ToolDef { return b.def }

func (b *background) Call(ctx context.Context, input json.RawMessage) (agent.Result, error) {
	var req shell.BackgroundRequest
	if err := json.Unmarshal(input, &req); err != nil {
		return agent.Result{Status: agent.StatusError, Summary: fmt.Sprintf("%s: the input is not valid: %v", shell.BackgroundTool, err)}, nil
	}
	out, err := b.s.Background(ctx, req)
	if errors.Is(err, shell.ErrUnknownWork) || errors.Is(err, shell.ErrBadRequest) {
		return agent.Result{Status: agent.StatusError, Summary: err.Error()}, nil
	}
	if err != nil {
		return agent.Result{}, err
	}
	return agent.Result{Status: agent.StatusPassed, Data: out}, nil
}

// Native returns the agent.Tool for a native tool: its input is checked
// against read_only (with its schema's annotations) before it runs.
func Native(s *shell.Session, t shell.NativeTool, def agent.ToolDef) (agent.Tool, error) {
	schema, err := readonly.ParseSchema(def.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("native tool %q: %w", t.Name, err)
	}
	def.Kind = agent.KindNative
	return &native{s: s, t: t, def: def, schema: schema}, nil
}

type native struct {
	s      *shell.Session
	t      shell.NativeTool
	def    agent.ToolDef
	schema *readonly.Schema
}

func (n *native) Def() agent.ToolDef { return n.def }

// Precheck implements Prechecker.
func (n *native) Precheck(input json.RawMessage) *readonly.Denial {
	d, err := n.s.CheckInput(n.t.Name, input, n.schema)
	if err != nil {
		return nil
	}
	return d
}

func (n *native) Call(ctx context.Context, input json.RawMessage) (agent.Result, error) {
	d, err := n.s.CheckInput(n.t.Name, input, n.schema)
	if err != nil {
		return agent.Result{Status: agent.StatusError, Summary: fmt.Sprintf("%s: the input is not valid JSON; this call did not run.", n.t.Name)}, nil
	}
	if d != nil {
		return agent.Result{Status: agent.StatusError, Summary: d.Message()}, nil
	}
	r, err := n.s.RunNative(ctx, n.t, input)
	return result(r, err)
}

// Runner runs the done check's command through the session (contained,
// the shell environment, the workdir): it implements agent.CommandRunner.
type Runner struct {
	S *shell.Session
	// Workdir is the session's work folder; a check asked to run anywhere
	// else is refused.
	Workdir string
}

// ErrDir is returned when a check names a directory other than the
// session's work folder, where every command runs.
var ErrDir = errors.New("done check must run in the work folder")

// RunCheck implements agent.CommandRunner.
func (r Runner) RunCheck(ctx context.Context, argv []string, dir string, timeout time.Duration) (agent.CheckResult, error) {
	if len(argv) == 0 {
		return agent.CheckResult{}, fmt.Errorf("empty done check command: %w", shell.ErrNotAllowed)
	}
	if dir != "" && dir != r.Workdir {
		return agent.CheckResult{}, fmt.Errorf("%q: %w", dir, ErrDir)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := r.S.Run(ctx, argv[0], argv[1:])
	out := agent.CheckResult{ExitCode: res.ExitCode, Output: res.Stdout + res.Stderr}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			out.TimedOut = true
			return out, nil
		}
		return out, err
	}
	return out, nil
}

var _ agent.CommandRunner = Runner{}
