package capsule

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/conversation"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/mcp"
	"github.com/murmur/mur/internal/process"
	"github.com/murmur/mur/internal/spend"
	"github.com/murmur/mur/internal/store"
	"github.com/murmur/mur/internal/wasm/cm"
)

// harness loads the transport: process driver of inference.driver.artifact
// and runs its launch checks (internal/process): the capsule is refused
// before any session exists when one fails. perDay is the machine's daily
// ceiling Open read, the one the plan carries. W-RUN-002 goes to stderr.
// The transport is completed from the session's plan and places in
// bindHarness.
func (l *launcher) harness(ctx context.Context, manifestPath string, perDay int64, stderr io.Writer) (*process.Transport, error) {
	inf := l.c.Inference
	name := inf.Driver.Artifact
	r, ok := l.res.Get(name)
	if !ok {
		return nil, fmt.Errorf("inference.driver.artifact %q is not among the staged artifacts", name)
	}
	own, _ := l.res.Artifact(name)
	file, err := componentFile(r, own)
	if err != nil {
		return nil, err
	}
	load := func() ([]byte, error) { return os.ReadFile(file) }
	var comp *cm.Component
	if id := componentID(r, file); id != nil {
		comp, err = l.rt.CompileFrom(*id, load)
	} else {
		var b []byte
		if b, err = load(); err == nil {
			comp, err = l.rt.Compile(b)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("artifact %q: %w", name, err)
	}
	manifestDir, err := filepath.Abs(filepath.Dir(manifestPath))
	if err != nil {
		return nil, err
	}
	var allow []string
	if caps := l.c.Capabilities; caps != nil && caps.Env != nil {
		allow = caps.Env.Allow
	}
	ceiling := ""
	if inf.MaxSessionTokens != nil {
		ceiling = "inference.max_session_tokens"
	} else if perDay > 0 {
		ceiling = "spend.machine_tokens_per_day"
	}
	t, warn, err := process.Open(ctx, process.Launch{
		Runtime: l.rt, Component: comp, DriverName: name,
		Command: inf.Command, ManifestDir: manifestDir, Path: os.Getenv("PATH"),
		EnvAllow: allow, Getenv: os.LookupEnv, Ceiling: ceiling, At: l.nearest,
	})
	if err != nil {
		return nil, err
	}
	for _, w := range warn {
		fmt.Fprintln(stderr, w.String())
	}
	l.harnessBin = t.Binary
	return t, nil
}

// nearest is the position of field in murmur.yaml, else of its nearest
// written parent, else of the driver it concerns: a refusal for a field
// not written (capabilities.env.allow) points where it goes.
func (l *launcher) nearest(field string) diag.Pos {
	for f := field; f != ""; {
		if p := l.c.Pos(f); p.Line > 0 {
			return p
		}
		i := strings.LastIndex(f, ".")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return l.c.Pos("inference.driver.artifact")
}

// bindHarness completes the transport once the session exists: from the
// session's plan (the one resolver every task runs from) the model, the
// driver config, the turn limit and the spend ceilings; its folders, the
// session's environment row, the event stream, the composed prompt, the
// harness session map, the sandbox it starts the harness in and the
// loopback tool server. The perDay argument is the plan's
// MachineTokensPerDay, which the plan is read for.
func (s *Session) bindHarness(t *process.Transport, prompt agent.Prompt, _ int64, murmurHome string) error {
	d, plan := s.dirs, s.plan
	if m := plan.Inference.Model; m != "" {
		t.Model = &m
	}
	if plan.DriverConfig != nil {
		c := string(plan.DriverConfig)
		t.Config = &c
	}
	t.MaxTurns = int(deref(plan.Inference.MaxTurns))
	t.Workdir, t.Logs, t.Events = d.Workdir, d.Logs(), s.events
	t.Env.Session = [][2]string{{"MURMUR_RUNTIME_DIR", d.Runtime()}, {"MURMUR_RECORDS_DIR", d.Records}}
	if prompt.Set {
		text := prompt.Text
		t.SystemPrompt = &text
	}
	// The harness's turns are charged here; the agent loop makes no call
	// under this transport, so its own ceilings stay unused.
	if n := deref(plan.Inference.MaxSessionTokens); n > 0 {
		t.Session = spend.NewSessionCeiling(n)
		t.Ceilings = append(t.Ceilings, t.Session)
	}
	if n := plan.MachineTokensPerDay; n > 0 {
		t.Ceilings = append(t.Ceilings, spend.NewMachineMeter(spend.MeterPath(murmurHome), n))
	}
	c := s.l.c
	pol, err := conversation.PolicyFor(c, murmurHome)
	if err != nil {
		return err
	}
	// context.record: off turns the harness session map off too.
	if pol.Record {
		t.Sessions = process.OpenSessionMap(pol.Store.Dir)
	}
	t.Threaded = pol.Load
	t.Starter = &sandboxStarter{l: s.l}
	if defs := s.ToolDefs(); len(defs) > 0 {
		t.Tools = s.toolServer(defs)
	}
	return nil
}

// toolServer stands up the loopback tool server (internal/mcp) for one
// harness run: the session's tools, each call through its one dispatch
// path, and every call counted as activity against the inactivity limit.
func (s *Session) toolServer(defs []agent.ToolDef) process.ToolServer {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	sort.Strings(names)
	return func(ctx context.Context, touch func()) (component.ToolServer, func(), error) {
		// The server listens where the harness's 127.0.0.1 is: inside the
		// sandbox's network namespace.
		if s.l.started != nil {
			<-s.l.started
		}
		if s.l.sbox == nil {
			return component.ToolServer{}, nil, errNoSandbox
		}
		ln, err := s.l.sbox.ListenLoopback()
		if err != nil {
			return component.ToolServer{}, nil, err
		}
		lb, err := mcp.ServeLoopbackOn(ln, touchingTools{s, touch}, mcp.Options{Name: s.l.c.Name, Version: s.l.c.Version})
		if err != nil {
			return component.ToolServer{}, nil, err
		}
		return component.ToolServer{URL: lb.URL, Token: lb.Token, ToolNames: names}, func() { lb.Close() }, nil
	}
}

// touchingTools is the session's tools with every call reported as
// harness activity.
type touchingTools struct {
	s     *Session
	touch func()
}

func (t touchingTools) ToolDefs() []agent.ToolDef { return t.s.ToolDefs() }

func (t touchingTools) CallTool(ctx context.Context, c agent.ToolCall) (string, bool) {
	t.touch()
	defer t.touch()
	return t.s.CallTool(ctx, c)
}

// sandboxStarter starts the harness inside the session's sandbox, as a
// shell command runs: the same containment, cgroup scope and limits. It
// waits for the sandbox the session sets up as it opens.
type sandboxStarter struct{ l *launcher }

var errNoSandbox = errors.New("the session's sandbox did not come up, so the harness cannot run contained")

func (st *sandboxStarter) Prepare(cmd *exec.Cmd) error {
	if st.l.started != nil {
		<-st.l.started
	}
	if st.l.sbox == nil {
		return errNoSandbox
	}
	return st.l.sbox.Prepare(cmd)
}

func (st *sandboxStarter) Start(cmd *exec.Cmd) error { return st.l.sbox.Start(cmd) }

// attempt runs one task attempt on the session's model: the harness under
// transport: process, else the agent loop.
func (s *Session) attempt(ctx context.Context, t agent.Task) Outcome {
	if s.harness != nil {
		return s.harness.RunTask(ctx, t)
	}
	if s.isScript() {
		return s.runScript(ctx, t)
	}
	return s.loop.RunTask(ctx, t)
}

// harnessStart is the transport's part of session_start, over the
// loop's: the fields of transport: http that do not apply go.
func harnessStart(start map[string]any, t *process.Transport) {
	for _, k := range []string{"retry", "model_limits", "tool_refresh", "model"} {
		delete(start, k)
	}
	for k, v := range t.Describe() {
		start[k] = v
	}
}

// processOnHTTP is E-RUN-030: a transport: http manifest whose driver
// exports the process interface. It reads the staged component's export
// section only (process.ExportsProcessInterface): no compilation, before
// any session. It runs beside staging's own checks, which refuse such a
// driver's gateway too (a process driver has no upstream_auth:), so the
// refusal names what the artifact is.
func processOnHTTP(c *manifest.Capsule, res *store.Resolution) *diag.Diagnostic {
	inf := c.Inference
	if inf == nil || inf.IsProcess() || inf.Driver == nil || res == nil {
		return nil
	}
	name := inf.Driver.Artifact
	r, ok := res.Get(name)
	if !ok {
		return nil
	}
	own, _ := res.Artifact(name)
	file, err := componentFile(r, own)
	if err != nil {
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	// A binary this cannot read is left to the compiler, whose error
	// names what is wrong with it.
	if exports, err := process.ExportsProcessInterface(f); err != nil || !exports {
		return nil
	}
	d := diag.New(diag.RunProcessOnHTTP, c.Pos("inference.driver.artifact"), "inference.driver.artifact",
		fmt.Sprintf("artifact '%s' is a process driver (it exports %s), so it cannot be the model under transport: http; set inference.transport: process or name an inference driver", name, component.IfaceProcess))
	return &d
}
