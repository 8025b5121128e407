package capsule

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/agent/wasmtool"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/gateway"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/sandbox"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/shell"
	"github.com/murmur/mur/internal/shell/shelltool"
	"github.com/murmur/mur/internal/store"
)

// launcher holds one launch's pieces between staging and the session.
type launcher struct {
	c     *manifest.Capsule
	res   *store.Resolution
	rt    *component.Runtime
	gws   map[string]*gateway.Gateway
	dirs  *sessionDirs
	scope manifest.Scope
	text  textSource
	// policy is the capsule's sandbox policy; the session's folders are
	// filled in when its shell layer starts.
	policy sandbox.Policy

	lazies  []*lazyComponent
	late    []*lateShellTool
	natives []nativeTool
	runner  lateRunner
	shell   *shell.Session
	sbox    *sandbox.Session
	// endSession ends the run with a cause of the sandbox's own.
	endSession context.CancelCauseFunc
	// started is closed once the shell layer is up (or failed to come up).
	started chan struct{}
	// stderr is mur run's stderr, where end reports what it could not
	// close.
	stderr io.Writer
	// capsuleURL is the door's URL, "" without a door.
	capsuleURL string
	// input serves murmur:task/task request-input for the door task in
	// progress.
	input taskInput
	// harnessBin is the transport: process harness, which runs in the
	// sandbox; "" under transport: http.
	harnessBin string
	// hookList are the capsule's runtime: hook entries; holder hands the
	// hooks, once instantiated, to the tools Open put behind them.
	hookList []hookEntry
	holder   hookHolder
	// loops serves run-inference to hooks and tools once the session's
	// loop exists.
	loops loopRef
	// script is a script capsule's entry point; nil for an agent capsule.
	script *scriptComponent
	// completions stamps task_end with the background commands still
	// running and hands their exits to the door's bg lane.
	completions completions
	// installs is capabilities.install; nil when the capsule grants none.
	installs *installs
}

// driver builds the component-backed driver of inference.driver.artifact.
func (l *launcher) driver() (agent.Driver, error) {
	name := l.c.Inference.Driver.Artifact
	r, ok := l.res.Get(name)
	if !ok {
		return nil, fmt.Errorf("inference.driver.artifact %q is not among the staged artifacts", name)
	}
	own, _ := l.res.Artifact(name)
	file, err := componentFile(r, own)
	if err != nil {
		return nil, err
	}
	g := grantFor(l.c, l.scope, name, l.gws[name], true, osGetenv)
	lc := &lazyComponent{rt: l.rt, wasm: file, id: componentID(r, file), g: g, dirs: l.dirs, eager: true, host: func() *component.Host {
		return &component.Host{Text: &l.text}
	}}
	l.lazies = append(l.lazies, lc)
	return turnEnd{wasmtool.Driver{R: lc}, &l.text}, nil
}

// turnEnd marks the end of each model call's streamed text.
type turnEnd struct {
	agent.Driver
	text *textSource
}

func (t turnEnd) Run(ctx context.Context, data []byte) (agent.Result, error) {
	defer t.text.end()
	return t.Driver.Run(ctx, data)
}

// tools builds every model-visible artifact: WASM tools and skills.
func (l *launcher) tools() ([]agent.Tool, error) {
	var out []agent.Tool
	for _, e := range l.c.Artifacts {
		role := e.Runtime
		if role == "" {
			role = manifest.RoleTool
		}
		switch role {
		case manifest.RoleSkill:
			text, err := l.skillText(e.Name)
			if err != nil {
				return nil, err
			}
			own, _ := l.res.Artifact(e.Name)
			desc := ""
			if own != nil {
				desc = own.Description
			}
			out = append(out, agent.NewSkill(bareName(e.Name), firstParagraph(desc, text), text))
		case manifest.RoleTool:
			r, ok := l.res.Get(e.Name)
			if !ok {
				return nil, fmt.Errorf("artifact %q is not staged", e.Name)
			}
			own, _ := l.res.Artifact(e.Name)
			def, err := toolDef(e.Name, own)
			if err != nil {
				return nil, err
			}
			if own != nil && own.ExecutionType() == "native" {
				t, err := l.nativeTool(e, r, own, def)
				if err != nil {
					return nil, err
				}
				out = append(out, t)
				continue
			}
			file, err := componentFile(r, own)
			if err != nil {
				return nil, err
			}
			g := grantFor(l.c, l.scope, e.Name, l.gws[e.Name], false, osGetenv)
			lc := &lazyComponent{rt: l.rt, wasm: file, id: componentID(r, file), g: g, dirs: l.dirs, host: func() *component.Host {
				return &component.Host{Input: &l.input, Messages: l.peerSender(), Shell: l.shellExecutor(), Tools: toolInvoker{}, Inference: l.loops.inferenceFor(origin("tool", e.Name))}
			}}
			l.lazies = append(l.lazies, lc)
			if acts, ok, err := l.actTools(e, lc); err != nil {
				return nil, err
			} else if ok {
				out = append(out, acts...)
				continue
			}
			out = append(out, wasmtool.Tool{D: def, R: lc})
		}
	}
	return out, nil
}

// skillText reads a staged skill's skill.md.
func (l *launcher) skillText(name string) (string, error) {
	r, ok := l.res.Get(name)
	if !ok {
		return "", fmt.Errorf("artifact %q is not staged", name)
	}
	for rel, host := range r.Files {
		if strings.EqualFold(filepath.Base(rel), "skill.md") {
			b, err := os.ReadFile(host)
			if err != nil {
				return "", fmt.Errorf("skill %q: %w", name, err)
			}
			return string(b), nil
		}
	}
	return "", fmt.Errorf("skill %q has no skill.md", name)
}

// firstParagraph is a skill's description for the model: its manifest's
// description, else the first paragraph of its skill.md.
func firstParagraph(desc, body string) string {
	if s := strings.TrimSpace(desc); s != "" {
		return s
	}
	body = strings.TrimSpace(body)
	if i := strings.Index(body, "\n\n"); i > 0 {
		body = body[:i]
	}
	return strings.TrimSpace(strings.TrimLeft(body, "# "))
}

// start runs once the session exists: it fixes the work folder for the
// components and starts the sandbox and shell layer.
func (l *launcher) start(ctx context.Context, d session.Dirs, sink event.Sink, stderr io.Writer) {
	l.dirs.mu.Lock()
	l.dirs.workdir = d.Workdir
	l.dirs.records = d.Records
	l.dirs.mu.Unlock()
	l.stderr = stderr
	if len(l.late) == 0 && len(l.natives) == 0 && l.runner.wait == nil && l.harnessBin == "" {
		return
	}
	// The sandbox (namespaces, cgroups, the egress proxy, the watcher) is
	// set up while the first turn goes to the model: every shell and native
	// tool, and the done check, waits for it before it runs anything.
	l.started = make(chan struct{})
	go func() {
		defer close(l.started)
		l.startShell(ctx, d, sink, stderr)
	}()
}

// startShell creates the session's sandbox and shell layer and binds the
// tools that run through them.
func (l *launcher) startShell(ctx context.Context, d session.Dirs, sink event.Sink, stderr io.Writer) {
	sbp := l.policy
	sbp.Workdir, sbp.Home, sbp.Tmp = d.Workdir, d.Home(), d.Tmp()
	for _, n := range l.natives {
		// A native tool's executable runs from the verified store; that
		// file, and nothing else of the store, is granted execute.
		sbp.ExecPaths = append(sbp.ExecPaths, n.tool.Path)
		if n.tool.StateDir != "" {
			sbp.StateDirs = append(sbp.StateDirs, n.tool.StateDir)
		}
	}
	if l.harnessBin != "" {
		// The harness runs contained like a shell command; its binary is
		// granted execute like a native tool's.
		sbp.ExecPaths = append(sbp.ExecPaths, l.harnessBin)
	}
	sb, err := sandbox.NewSession(ctx, sbp)
	if err != nil {
		l.failShell(fmt.Errorf("sandbox: %w", err))
		return
	}
	l.sbox = sb
	go func() {
		select {
		case <-sb.Ended():
			if err := sb.Err(); err != nil && l.endSession != nil {
				var d diag.Diagnostic
				if errors.As(err, &d) {
					l.endSession(d)
				} else {
					l.endSession(diag.New(diag.RunWorkdirSize, diag.Pos{}, "capabilities.resources.workdir_max_bytes", err.Error()))
				}
			}
		case <-ctx.Done():
		}
	}()
	for _, w := range sb.Warnings() {
		fmt.Fprintln(stderr, w.String())
	}
	for _, n := range sb.Notes() {
		fmt.Fprintf(stderr, "mur: %s\n", n)
	}
	p := shellPolicy(l.c, d, l.capsuleURL)
	p.Stderr = stderr
	p.OnBackgroundExit = l.completions.exited
	s, err := shell.New(p, sb, sink)
	if err != nil {
		l.failShell(err)
		return
	}
	if err := s.WriteManifests(); err != nil {
		l.failShell(err)
		return
	}
	l.shell = s
	l.completions.bind(s)
	byName := map[string]agent.Tool{}
	for _, t := range shelltool.Tools(s) {
		byName[t.Def().Name] = t
	}
	for _, lt := range l.late {
		lt.bind(byName[lt.def.Name], nil)
	}
	for _, n := range l.natives {
		t, err := shelltool.Native(s, n.tool, n.late.def)
		n.late.bind(t, err)
	}
	l.runner.bind(shelltool.Runner{S: s, Workdir: d.Workdir}, nil)
}

func (l *launcher) failShell(err error) {
	for _, lt := range l.late {
		lt.bind(nil, err)
	}
	for _, n := range l.natives {
		n.late.bind(nil, err)
	}
	l.runner.bind(nil, err)
}

// end closes the shell layer before session_end: the session-end kill and
// its shell_abandoned records, then the sandbox scope.
func (l *launcher) end() {
	if l.started != nil {
		<-l.started
	}
	// A failure here is the operator's to know (a session-end report not
	// written, a scope not removed); the session's outcome stands.
	if l.shell != nil {
		if _, err := l.shell.Close(context.Background()); err != nil && l.stderr != nil {
			fmt.Fprintf(l.stderr, "mur: session end: %v\n", err)
		}
	}
	if l.sbox != nil {
		if err := l.sbox.Close(); err != nil && l.stderr != nil {
			fmt.Fprintf(l.stderr, "mur: session end: sandbox: %v\n", err)
		}
	}
}

func (l *launcher) close() {
	for _, lc := range l.lazies {
		lc.Close()
	}
}

// textSource turns the driver's streamed text into live events of the task
// in progress on the session's stream, for whoever follows it (mur run's
// stdout, a door's SSE stream); the trace never records them.
type textSource struct {
	mu       sync.Mutex
	sink     event.Sink
	taskID   string
	streamed bool
}

// Emit implements component.TextSink.
func (s *textSource) Emit(text string) error {
	if text == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink != nil {
		s.sink.Emit(event.Event{Type: event.TextDelta, Live: true, Fields: map[string]any{"task_id": s.taskID, "text": text}})
		s.streamed = true
	}
	return nil
}

// end closes one model call's text, if it streamed any.
func (s *textSource) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streamed {
		s.sink.Emit(event.Event{Type: event.TextEnd, Live: true, Fields: map[string]any{"task_id": s.taskID}})
		s.streamed = false
	}
}

// bind points the text at the session's stream and the task in progress.
func (s *textSource) bind(sink event.Sink, taskID string) {
	s.mu.Lock()
	s.sink, s.taskID = sink, taskID
	s.mu.Unlock()
}
