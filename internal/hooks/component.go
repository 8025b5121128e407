package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sync"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
)

// Memory is the linear-memory ceiling of a hook's store. The spec keeps
// capabilities.limits.memory_bytes from governing hooks (W-SEC-006), so
// the runtime sets its own bound: a hook that balloons traps at it
// instead of taking the host's memory.
const Memory = 256 << 20

// Grant is what one hook may reach, from its own entry in the capsule
// manifest only (spec 004 "Hook capabilities": default-deny; the
// capsule-wide block does not reach hooks).
type Grant struct {
	// Network is the hook's own network.allow; empty denies every
	// destination.
	Network []string
	// Scope is filesystem.scope, relative to the work folder; "" (with
	// Records false) grants no directory at all.
	Scope string
	// Records mounts the records directory's hooks/ as the hook's current
	// directory in place of a scope.
	Records bool
	// StateDir is the hook's durable store (~/.murmur/state/<store>/),
	// mounted as state/; "" mounts none.
	StateDir string
	// TaskIO grants murmur:task-io/read.
	TaskIO bool
	// Conversation grants murmur:conversation/read.
	Conversation bool
	// Env is the hook's whole environment (MURMUR_ARTIFACT_CONFIG,
	// MURMUR_OTEL_ENDPOINT).
	Env [][2]string
}

// Policy is the WASI policy of g for a session with the given work folder
// and records directory; the hook's stderr goes to stderr.
func (g Grant) Policy(workdir, records string, name string, stderr io.Writer) (wasi.Policy, error) {
	p := wasi.Policy{Env: g.Env, Args: []string{path.Base(name)}, Stderr: stderr, StateDir: g.StateDir}
	switch {
	case g.Records:
		p.Workdir, p.Scope = records, "hooks"
	case g.Scope != "":
		p.Workdir, p.Scope = workdir, g.Scope
	}
	if len(g.Network) > 0 {
		a, err := wasi.ParseAllow(g.Network)
		if err != nil {
			return p, fmt.Errorf("hook %q: %w", name, err)
		}
		p.Network = a
	}
	return p, nil
}

// Component is a hook's WebAssembly component under its grant: one
// instance for the session, so state it keeps in memory survives across
// calls. A call that traps leaves its instance unusable; the next call
// gets a fresh one.
type Component struct {
	rt   *component.Runtime
	comp *cm.Component
	opts component.Options

	mu   sync.Mutex
	inst *component.Instance
	hook *component.Hook
	has  map[string]bool
}

// NewComponent instantiates comp under o now, so a hook that lacks a
// required handler or exports another lifecycle version refuses the
// launch rather than failing at its first event.
func NewComponent(ctx context.Context, rt *component.Runtime, comp *cm.Component, o component.Options) (*Component, error) {
	c := &Component{rt: rt, comp: comp, opts: o}
	if err := c.instantiate(ctx); err != nil {
		return nil, err
	}
	c.has = map[string]bool{}
	for _, h := range component.HookHandlers {
		c.has[h.Name] = c.hook.Has(h.Name)
	}
	return c, nil
}

func (c *Component) instantiate(ctx context.Context) error {
	inst, err := c.rt.Instantiate(ctx, c.comp, c.opts)
	if err != nil {
		return err
	}
	h, err := inst.Hook()
	if err != nil {
		inst.Close()
		return err
	}
	c.inst, c.hook = inst, h
	return nil
}

// Has implements Caller.
func (c *Component) Has(handler string) bool { return c.has[handler] }

// Call implements Caller. Calls are serialised: an instance is
// single-threaded.
func (c *Component) Call(ctx context.Context, handler string, ev any) (component.HookOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inst == nil {
		if err := c.instantiate(ctx); err != nil {
			return component.HookOutput{}, err
		}
	}
	out, err := c.hook.Call(ctx, handler, ev)
	var he *component.HookError
	if err != nil && !errors.As(err, &he) {
		// A trap (a panic, the deadline, the memory ceiling) leaves the
		// instance in an unknown state: drop it.
		c.inst.Close()
		c.inst, c.hook = nil, nil
	}
	return out, err
}

// Close releases the instance.
func (c *Component) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inst == nil {
		return nil
	}
	err := c.inst.Close()
	c.inst = nil
	return err
}
