// Package capsule wires `mur run`: it reads the capsule manifest, refuses
// what cannot run before any session exists, stages the pinned artifacts,
// builds the credential gateways, the driver and tool components, the
// shell tools and the sandbox around them, and hands everything to the
// agent loop.
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
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/agent/wasmtool"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/gateway"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/sandbox"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/shell"
	"github.com/murmur/mur/internal/shell/shelltool"
	"github.com/murmur/mur/internal/store"
	"github.com/murmur/mur/internal/wasm/cm"
)

// Flags are the mur run flags a launch reads.
type Flags struct {
	Manifest     string
	Workdir      string
	Task         string
	Deadline     time.Duration
	SystemPrompt *string
}

// Run launches the capsule and returns mur run's exit status. Every
// refusal is printed to stderr with its code before any session exists.
func Run(ctx context.Context, f Flags, stdout, stderr io.Writer) int {
	refuse := func(ds diag.List) int {
		ds.Sort()
		for _, d := range ds {
			fmt.Fprintln(stderr, d.String())
		}
		return agent.ExitCodeRefused
	}
	path := f.Manifest
	if path == "" {
		path = "murmur.yaml"
	}
	parsed, ds := manifest.LoadCapsule(path)
	if ds.HasErrors() || parsed == nil {
		return refuse(ds)
	}
	warn := ds.Warnings()
	c := parsed.Effective()
	inf := c.Inference
	if inf == nil || inf.Driver == nil || inf.Driver.Artifact == "" {
		return refuse(append(warn, diag.New(diag.ManInvalid, c.Pos("inference"), "inference.driver.artifact",
			"mur run needs an inference driver: declare a runtime: driver artifact and name it in inference.driver.artifact")))
	}
	if inf.Transport != "" && inf.Transport != "http" {
		return refuse(append(warn, diag.New(diag.ManInvalid, c.Pos("inference.transport"), "inference.transport",
			fmt.Sprintf("transport %q is not available in this build of mur; use transport: http", inf.Transport))))
	}

	// A hook can be a policy control (a hook that denies calls); running
	// the capsule without it would drop that control silently, so a build
	// without hooks refuses the capsule instead.
	for i, e := range c.Artifacts {
		if e.Runtime == manifest.RoleHook {
			field := fmt.Sprintf("artifacts[%d].runtime", i)
			return refuse(append(warn, diag.New(diag.ManInvalid, c.Pos(field), field,
				fmt.Sprintf("artifact %q is a hook, and this build of mur does not run hooks; remove the entry to run without it", e.Name))))
		}
	}

	// Containment: a floor above what this host achieves is refused
	// before anything exists. Its W-SEC-001 warnings come with the
	// sandbox session, once one is made.
	sbp, report, cds := containment(c)
	if cds.HasErrors() {
		return refuse(append(warn, cds.Errors()...))
	}
	// Staging judges the capsule by the floor it declares (its effective
	// containment floor); CheckFloor above has made sure this host reaches it.
	floor := ""
	if c.Capabilities != nil {
		floor = c.Capabilities.Containment
	}

	res, sds := store.Stage(ctx, parsed, floor)
	warn = append(warn, sds.Warnings()...)
	if sds.HasErrors() {
		return refuse(append(warn, sds.Errors()...))
	}
	creds, err := config.GlobalCredentials()
	if err != nil {
		return refuse(append(warn, diag.New(diag.ManInvalid, diag.Pos{}, "", err.Error())))
	}
	gws, gds := gateways(c, res, creds, osGetenv)
	warn = append(warn, gds.Warnings()...)
	if gds.HasErrors() {
		return refuse(append(warn, gds.Errors()...))
	}
	for _, w := range warn {
		fmt.Fprintln(stderr, w.String())
	}

	murmurHome, err := config.MurmurDir()
	if err != nil {
		fmt.Fprintf(stderr, "mur: %v\n", err)
		return agent.ExitCodeRefused
	}
	rt, err := component.New(cm.Config{CacheDir: filepath.Join(murmurHome, "cache", "wasm")})
	if err != nil {
		fmt.Fprintf(stderr, "mur: %v\n", err)
		return agent.ExitCodeRefused
	}
	defer rt.Close()

	l := &launcher{c: c, res: res, rt: rt, gws: gws, dirs: &sessionDirs{}, stdout: stdout, scope: manifest.ExplainScope(c)}
	if caps := c.Capabilities; caps != nil && caps.Filesystem != nil {
		l.dirs.readOnly = caps.Filesystem.ReadOnly
	}
	drv, driverManifest, err := l.driver()
	if err != nil {
		fmt.Fprintf(stderr, "mur: %v\n", err)
		return agent.ExitCodeRefused
	}
	tools, err := l.tools()
	if err != nil {
		fmt.Fprintf(stderr, "mur: %v\n", err)
		return agent.ExitCodeRefused
	}
	shellTools, err := l.shellTools()
	if err != nil {
		fmt.Fprintf(stderr, "mur: %v\n", err)
		return agent.ExitCodeRefused
	}
	tools = append(tools, shellTools...)
	defer l.close()
	// Compile while the session is set up; l.close waits for the
	// compilations before the engine closes.
	prepare(l.lazies)

	cfg, err := agentConfig(c, driverManifest, l.res.Artifact)
	if err != nil {
		fmt.Fprintf(stderr, "mur: %v\n", err)
		return agent.ExitCodeRefused
	}
	if gp, err := config.GlobalPath(); err == nil {
		g, err := config.Load(gp)
		if err != nil {
			fmt.Fprintf(stderr, "mur: %v\n", err)
			return agent.ExitCodeRefused
		}
		if g.Spend != nil {
			cfg.MachineTokensPerDay = g.Spend.MachineTokensPerDay
		}
	}
	if name := inf.SystemPromptArtifact; name != "" {
		text, err := l.skillText(name)
		if err != nil {
			fmt.Fprintf(stderr, "mur: %v\n", err)
			return agent.ExitCodeRefused
		}
		cfg.Prompt.ArtifactText = text
	}
	var records []map[string]any
	for _, e := range c.Artifacts {
		if g := gws[e.Name]; g != nil {
			records = append(records, g.Record())
		}
	}
	manifestDir, _ := filepath.Abs(filepath.Dir(path))
	// The sandbox can end the session on its own (the workdir ceiling,
	// E-RUN-013): it cancels the run with that cause.
	ctx, endSession := context.WithCancelCause(ctx)
	defer endSession(nil)
	l.endSession = endSession
	opts := agent.Options{
		Config: cfg, ManifestDir: manifestDir, MurmurHome: murmurHome,
		Workdir: f.Workdir, Task: f.Task, Deadline: f.Deadline, SystemPrompt: f.SystemPrompt,
		Driver: drv, Tools: tools, Gateways: records, Stderr: stderr,
		OnEvents:      func(d session.Dirs, sink event.Sink) { l.start(ctx, d, sink, sbp, stderr) },
		OnEnd:         l.end,
		SessionFields: map[string]any{"effective_grants": l.scope, "containment": ContainmentRecord(report)},
	}
	if cfg.DoneCheck != nil {
		opts.Runner = &l.runner
	}
	code, err := agent.Launch(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "mur: %v\n", err)
	}
	return code
}

// launcher holds one launch's pieces between staging and the session.
type launcher struct {
	c      *manifest.Capsule
	res    *store.Resolution
	rt     *component.Runtime
	gws    map[string]*gateway.Gateway
	dirs   *sessionDirs
	stdout io.Writer
	scope  manifest.Scope

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
}

// driver builds the component-backed driver of inference.driver.artifact.
func (l *launcher) driver() (agent.Driver, *manifest.Artifact, error) {
	name := l.c.Inference.Driver.Artifact
	r, ok := l.res.Get(name)
	if !ok {
		return nil, nil, fmt.Errorf("inference.driver.artifact %q is not among the staged artifacts", name)
	}
	own, _ := l.res.Artifact(name)
	file, err := componentFile(r, own)
	if err != nil {
		return nil, nil, err
	}
	g := grantFor(l.c, l.scope, name, l.gws[name], true, osGetenv)
	out := &lineWriter{w: l.stdout}
	lc := &lazyComponent{rt: l.rt, wasm: file, id: componentID(r, file), g: g, dirs: l.dirs, eager: true, host: func() *component.Host {
		return &component.Host{Text: out}
	}}
	l.lazies = append(l.lazies, lc)
	return turnEnd{wasmtool.Driver{R: lc}, out}, own, nil
}

// turnEnd ends each turn's streamed text with a newline.
type turnEnd struct {
	agent.Driver
	out *lineWriter
}

func (t turnEnd) Run(ctx context.Context, data []byte) (agent.Result, error) {
	defer t.out.endLine()
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
			lc := &lazyComponent{rt: l.rt, wasm: file, id: componentID(r, file), g: g, dirs: l.dirs, host: func() *component.Host { return &component.Host{} }}
			l.lazies = append(l.lazies, lc)
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
func (l *launcher) start(ctx context.Context, d session.Dirs, sink event.Sink, sbp sandbox.Policy, stderr io.Writer) {
	l.dirs.mu.Lock()
	l.dirs.workdir = d.Workdir
	l.dirs.mu.Unlock()
	if len(l.late) == 0 && len(l.natives) == 0 && l.runner.wait == nil {
		return
	}
	// The sandbox (namespaces, cgroups, the egress proxy, the watcher) is
	// set up while the first turn goes to the model: every shell and native
	// tool, and the done check, waits for it before it runs anything.
	l.started = make(chan struct{})
	go func() {
		defer close(l.started)
		l.startShell(ctx, d, sink, sbp, stderr)
	}()
}

// startShell creates the session's sandbox and shell layer and binds the
// tools that run through them.
func (l *launcher) startShell(ctx context.Context, d session.Dirs, sink event.Sink, sbp sandbox.Policy, stderr io.Writer) {
	sbp.Workdir, sbp.Home, sbp.Tmp = d.Workdir, d.Home(), d.Tmp()
	for _, n := range l.natives {
		// A native tool's executable runs from the verified store; that
		// file, and nothing else of the store, is granted execute.
		sbp.ExecPaths = append(sbp.ExecPaths, n.tool.Path)
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
	p := shellPolicy(l.c, d)
	p.Stderr = stderr
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
	if l.shell != nil {
		_, _ = l.shell.Close(context.Background())
	}
	if l.sbox != nil {
		_ = l.sbox.Close()
	}
}

func (l *launcher) close() {
	for _, lc := range l.lazies {
		lc.Close()
	}
}

// lineWriter streams a driver's text chunks to mur run's stdout and
// remembers whether the last one ended its line.
type lineWriter struct {
	w       io.Writer
	mu      sync.Mutex
	midLine bool
}

// Emit implements component.TextSink.
func (s *lineWriter) Emit(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if text == "" {
		return nil
	}
	s.midLine = !strings.HasSuffix(text, "\n")
	_, err := io.WriteString(s.w, text)
	return err
}

func (s *lineWriter) endLine() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.midLine {
		io.WriteString(s.w, "\n")
		s.midLine = false
	}
}
