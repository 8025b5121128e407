package capsule

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
)

// scriptComponent is a script capsule's entry point (spec 000, world
// capsule of murmur:runtime-guest@0.1.0): a component exporting
// murmur:capsule/run@0.1.0 whose run drives the capsule's tools through
// murmur:tool-registry/invoke. It is granted nothing else: no folder, no
// network, no environment; its stdout is the task's answer and the tail
// of its stderr explains a trap (docs/script-capsules.md).
type scriptComponent struct {
	name string // the entry's full artifact name
	lc   *lazyComponent
	// out and errs are the current run's stdout and stderr; text
	// streams the stdout to whoever follows the task (mur run's stdout,
	// a door's SSE stream) as a model's text is.
	text *textSource
	out  capped
	errs capped
}

// maxScriptOutput bounds what a script's stdout (its answer) and stderr
// keep: a script printing without end must not grow mur's memory.
const maxScriptOutput = 1 << 20

// scriptEntry builds the runtime: capsule entry artifacts[i]'s component. The
// artifact must be built as a capsule (runtime: capsule in its own
// murmur.yaml); whether it exports murmur:capsule/run@0.1.0 is checked
// when it is instantiated, before run is called.
func (l *launcher) scriptEntry(i int) (*scriptComponent, error) {
	e := l.c.Artifacts[i]
	r, ok := l.res.Get(e.Name)
	if !ok {
		return nil, fmt.Errorf("artifact %q is not staged", e.Name)
	}
	own, _ := l.res.Artifact(e.Name)
	if own != nil && own.Runtime != manifest.RoleCapsule {
		field := fmt.Sprintf("artifacts[%d].runtime", i)
		return nil, refusal(diag.List{diag.New(diag.ManInvalid, l.c.Pos(field), field, fmt.Sprintf(
			"%s is declared runtime: capsule here, but its own murmur.yaml says runtime: %s: a script capsule's entry is a component built as runtime: capsule (exporting murmur:capsule/run@0.1.0); name such an artifact, or declare this one runtime: %s", e.Name, own.Runtime, own.Runtime))})
	}
	file, err := componentFile(r, own)
	if err != nil {
		return nil, err
	}
	l.loops.script.Store(true)
	sc := &scriptComponent{name: e.Name, text: &l.text}
	// The capsule-wide limits bound the script like any component: its
	// memory, and limits.deadline_seconds its one call, run, tool calls
	// included.
	g := grant{name: e.Name, limits: grantFor(l.c, l.scope, e.Name, nil, false, osGetenv).limits}
	sc.lc = &lazyComponent{rt: l.rt, wasm: file, id: componentID(r, file), g: g, dirs: l.dirs, instanceOnly: true,
		host: func() *component.Host { return &component.Host{Tools: toolInvoker{}, Artifacts: l.artifactManager()} },
		policy: func(wasi.Policy) wasi.Policy {
			return wasi.Policy{Args: []string{path.Base(e.Name)}, Stdout: liveOut{sc}, Stderr: &sc.errs}
		},
	}
	l.lazies = append(l.lazies, sc.lc)
	return sc, nil
}

// bare is the script's bare name: the caller its tool calls record.
func (sc *scriptComponent) bare() string { return bareName(sc.name) }

// run instantiates the component (once per session) and calls its run:
// the task's dispatch is in ctx, so every invoke goes through the loop's
// one dispatch path. It returns what the script wrote to stdout.
func (sc *scriptComponent) run(ctx context.Context) (string, error) {
	l := sc.lc
	l.mu.Lock()
	defer l.mu.Unlock()
	sc.out.reset()
	sc.errs.reset()
	if !l.ready {
		_, l.err = l.instantiate(ctx)
		l.ready = true
	}
	if l.err != nil {
		return "", l.err
	}
	entry, err := l.inst.Capsule()
	if err != nil {
		return "", fmt.Errorf("artifact %q does not export %s: rebuild it in the capsule world (tools/guest/build.sh capsule): %w", sc.name, component.IfaceCapsuleRun, err)
	}
	l.inst.SetHost(l.host())
	parent := ctx
	if d := l.g.limits.Deadline; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	err = entry(ctx)
	sc.text.end()
	switch {
	case err == nil:
		return sc.out.String(), nil
	case errors.Is(err, cm.ErrDeadline) || (errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil):
		err = fmt.Errorf("run ran past capabilities.limits.deadline_seconds (%s), its tool calls included; raise it, or make the script shorter: %w", l.g.limits.Deadline, err)
	}
	// The trap's first line names it; the wasm backtrace after it says
	// nothing to the person reading the task's reason. What the script
	// said on stderr last (a Go guest's panic line) comes first.
	what := firstLine(err.Error())
	if tail := sc.errs.tail(); tail != "" {
		what = tail + " (" + what + ")"
	}
	err = errors.New(what)
	return sc.out.String(), err
}

// describe is session_start's plan part for a script capsule: what an
// agent capsule's loop describes, without a model.
func (sc *scriptComponent) describe(p *agent.Plan) map[string]any {
	tools := make([]string, 0, len(p.Tools.Defs()))
	for _, d := range p.Tools.Defs() {
		tools = append(tools, d.Name)
	}
	f := map[string]any{"script": sc.name, "capture": string(p.Capture), "tools": tools}
	if p.Capsule != "" {
		f["capsule"] = p.Capsule
	}
	if d := sc.lc.g.limits.Deadline; d > 0 {
		f["script_deadline_ms"] = d.Milliseconds()
	}
	return f
}

// runScript is a script capsule's task: the loop's RunScript around the
// component's run.
func (s *Session) runScript(ctx context.Context, t agent.Task) Outcome {
	sc := s.l.script
	return s.loop.RunScript(ctx, t, sc.bare(), sc.run)
}

// isScript reports whether the session runs a script capsule.
func (s *Session) isScript() bool { return s.l != nil && s.l.script != nil }

// startFields is the loop's (or the script's) part of session_start.
func (s *Session) startFields() map[string]any {
	if s.isScript() {
		return s.l.script.describe(s.plan)
	}
	return s.loop.Describe()
}

// modelOf is inference.model, "" for a script capsule.
func modelOf(c *manifest.Capsule) string {
	if c.Inference == nil {
		return ""
	}
	return c.Inference.Model
}

// capped is a writer that keeps at most maxScriptOutput bytes.
type capped struct {
	mu  sync.Mutex
	b   bytes.Buffer
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := maxScriptOutput - c.b.Len(); room < len(p) {
		c.b.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	return c.b.Write(p)
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return c.b.String() + "\n[output truncated]"
	}
	return c.b.String()
}

func (c *capped) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b.Reset()
	c.cut = false
}

// tail is the last few lines of what was written, for a failure's reason.
func (c *capped) tail() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(c.b.String()), "\n")
	for i, l := range lines {
		// A Go guest's panic (sdk/go/capsule: an error from its run)
		// names itself on this line; the goroutine dump after it does not.
		if strings.HasPrefix(l, "panic: ") {
			return l
		}
		// A JS guest's uncaught error (componentize-js) is its message,
		// then "Stack:" and the frames, which do not name it.
		if l == "Stack:" && i > 0 {
			return lines[i-1]
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	s := strings.Join(lines, " | ")
	if len(s) > 600 {
		s = s[len(s)-600:]
	}
	return s
}

// newPlan is the session's plan: a script capsule's has no model.
func newPlan(p Parts, script bool, src agent.Sources) (*agent.Plan, error) {
	if script {
		return agent.NewScriptPlan(p.Capsule, p.Tools)
	}
	return agent.NewPlan(p.Capsule, src)
}

// TaskScript is session_start's task_source for a script capsule launched
// without a task: its launch is the script's run all the same.
const TaskScript session.TaskSource = "script"

// liveOut is a script's stdout: kept as the answer and streamed live.
type liveOut struct{ sc *scriptComponent }

func (o liveOut) Write(p []byte) (int, error) {
	o.sc.out.Write(p)
	o.sc.text.Emit(string(p))
	return len(p), nil
}
