package capsule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/shell"
	"github.com/murmur/mur/internal/shell/readonly"
	"github.com/murmur/mur/internal/shell/shelltool"
	"github.com/murmur/mur/internal/store"
)

// shellPolicy maps the capsule's shell grant and the session's
// directories onto the shell layer's policy. capsuleURL is the door's URL
// (MURMUR_CAPSULE_URL), "" when the session serves no door.
func shellPolicy(c *manifest.Capsule, d session.Dirs, capsuleURL string) shell.Policy {
	p := shell.Policy{
		PATH: os.Getenv("PATH"), HostEnv: os.Environ(),
		Workdir: d.Workdir, Home: d.Home(), Tmp: d.Tmp(),
		RuntimeDir: d.Runtime(), RecordsDir: d.Records, LogsDir: d.Logs(), SessionID: d.ID,
	}
	if caps := c.Capabilities; caps != nil {
		if sh := caps.Shell; sh != nil {
			p.Allow, p.StripEnv, p.BaselineEnv = sh.Allow, sh.StripEnv, sh.BaselineEnv
		}
		if fs := caps.Filesystem; fs != nil {
			p.ReadOnly = fs.ReadOnly
		}
	}
	if lc := c.Lifecycle; lc != nil && lc.ShellGraceSecs != nil {
		g := int(*lc.ShellGraceSecs)
		p.GraceSecs = &g
	}
	if c.Inference != nil {
		p.Identity = [][2]string{{"MURMUR_CAPSULE_NAME", c.Name}, {"MURMUR_CAPSULE_VERSION", c.Version}, {"MURMUR_SESSION_ID", d.ID}}
		if capsuleURL != "" {
			p.Identity = append(p.Identity, [2]string{"MURMUR_CAPSULE_URL", capsuleURL})
		}
		p.Identity = append(p.Identity, inferenceEnv(c)...)
	}
	return p
}

// refuseAll is the container of the shell session that only describes the
// tools before the session exists; it never runs anything.
type refuseAll struct{}

var errNoSession = errors.New("no session yet: shell tools run only inside a session")

func (refuseAll) Prepare(*exec.Cmd) error { return errNoSession }

// shellTools returns the shell tools the model sees, bound to the real
// shell session once it exists. Their definitions come from a session
// that describes the same policy and runs nothing.
func (l *launcher) shellTools() ([]agent.Tool, error) {
	if l.c.Capabilities == nil || l.c.Capabilities.Shell == nil || len(l.c.Capabilities.Shell.Allow) == 0 {
		if l.c.Lifecycle != nil && l.c.Lifecycle.DoneCheck != nil {
			l.runner.wait = make(chan struct{})
		}
		return nil, nil
	}
	placeholder := session.Dirs{ID: "ses_describe", Records: "/nonexistent/records", Workdir: "/nonexistent/work"}
	desc, err := shell.New(shellPolicy(l.c, placeholder, l.capsuleURL), refuseAll{}, nil)
	if err != nil {
		return nil, fmt.Errorf("capabilities.shell: %w", err)
	}
	var out []agent.Tool
	for _, t := range shelltool.Tools(desc) {
		lt := &lateShellTool{def: t.Def(), ready: make(chan struct{})}
		l.late = append(l.late, lt)
		out = append(out, lt)
	}
	l.runner.wait = make(chan struct{})
	return out, nil
}

// lateShellTool is a shell tool whose session starts with the session: it
// answers Def at once and forwards calls once bound.
type lateShellTool struct {
	def   agent.ToolDef
	once  sync.Once
	ready chan struct{}
	t     agent.Tool
	err   error
}

func (t *lateShellTool) bind(real agent.Tool, err error) {
	t.once.Do(func() {
		t.t, t.err = real, err
		if real == nil && err == nil {
			t.err = fmt.Errorf("shell tool %q has no session", t.def.Name)
		}
		close(t.ready)
	})
}

func (t *lateShellTool) Def() agent.ToolDef { return t.def }

func (t *lateShellTool) Call(ctx context.Context, input json.RawMessage) (agent.Result, error) {
	select {
	case <-t.ready:
	case <-ctx.Done():
		return agent.Result{}, ctx.Err()
	}
	if t.err != nil {
		return agent.Result{}, t.err
	}
	return t.t.Call(ctx, input)
}

// Precheck forwards the read-only pre-dispatch check once bound.
func (t *lateShellTool) Precheck(input json.RawMessage) *readonly.Denial {
	select {
	case <-t.ready:
	default:
		return nil
	}
	if p, ok := t.t.(shelltool.Prechecker); ok {
		return p.Precheck(input)
	}
	return nil
}

// lateRunner runs lifecycle.done_check through the shell session once it
// exists.
type lateRunner struct {
	once sync.Once
	wait chan struct{}
	r    agent.CommandRunner
	err  error
}

func (r *lateRunner) bind(real agent.CommandRunner, err error) {
	if r.wait == nil {
		return
	}
	r.once.Do(func() {
		r.r, r.err = real, err
		close(r.wait)
	})
}

func (r *lateRunner) RunCheck(ctx context.Context, argv []string, dir string, timeout time.Duration) (agent.CheckResult, error) {
	select {
	case <-r.wait:
	case <-ctx.Done():
		return agent.CheckResult{}, ctx.Err()
	}
	if r.err != nil {
		return agent.CheckResult{}, r.err
	}
	return r.r.RunCheck(ctx, argv, dir, timeout)
}

// nativeTool is a native tool artifact waiting for the shell session it
// runs through.
type nativeTool struct {
	tool shell.NativeTool
	late *lateShellTool
}

// nativeTool builds a native tool's model-facing tool; it runs through the
// session's shell layer, contained like a shell command, once the session
// exists.
func (l *launcher) nativeTool(e manifest.ArtifactRef, r *store.Resolved, own *manifest.Artifact, def agent.ToolDef) (agent.Tool, error) {
	exe := ""
	prefix := "tools/" + bareName(r.Name) + "/"
	for _, f := range own.RequiresFiles {
		if host, ok := r.Files[prefix+f]; ok {
			if fi, err := os.Stat(host); err == nil && fi.Mode()&0o111 != 0 {
				exe = host
				break
			}
		}
	}
	if exe == "" {
		return nil, fmt.Errorf("native tool %q has no executable among its files; list it first in requires_files and keep its mode executable", e.Name)
	}
	nt := shell.NativeTool{Name: def.Name, Path: exe}
	if e.Config != nil {
		b, err := e.Config.JSON()
		if err != nil {
			return nil, fmt.Errorf("artifact %q config: %w", e.Name, err)
		}
		nt.Config = b
	}
	if store := l.stateStore(e.Name); store != "" {
		dir, err := stateDir(store)
		if err != nil {
			return nil, fmt.Errorf("artifact %q capabilities.state: %w", e.Name, err)
		}
		// The sandbox binds and grants the store, so it must exist first.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("artifact %q capabilities.state: %w", e.Name, err)
		}
		nt.StateDir = dir
	}
	def.Kind = agent.KindNative
	lt := &lateShellTool{def: def, ready: make(chan struct{})}
	l.natives = append(l.natives, nativeTool{tool: nt, late: lt})
	return lt, nil
}
