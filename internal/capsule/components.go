package capsule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/agent/wasmtool"
	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/gateway"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/store"
	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
	"go.yaml.in/yaml/v3"
)

// grant is what one component may reach, fixed at launch; the work folder
// is filled in once the session exists.
type grant struct {
	name    string
	scope   string   // filesystem scope relative to the work folder
	network []string // effective network.allow after narrowing
	env     [][2]string
	gateway *gateway.Gateway
	limits  cm.Limits
	// state is the entry's capabilities.state.store, "" without a store.
	state string
}

// lazyComponent instantiates a component on its first call, once the
// session's work folder exists, and serves every later call from the same
// instance. Calls are serialised: a component instance is single-threaded.
type lazyComponent struct {
	rt    *component.Runtime
	wasm  string    // host path of the component binary
	id    *[32]byte // the verified bytes' identity, for the compile cache
	g     grant
	host  func() *component.Host
	dirs  *sessionDirs
	mu    sync.Mutex
	tool  *component.Tool
	inst  *component.Instance
	err   error
	ready bool

	// eager: prepare loads this component even from a warm cache (the
	// driver: every session calls it first).
	eager bool
	// compiled, when prepare ran, delivers the compilation started then,
	// or a zero result when loading was left to the first call.
	compiled chan compileResult
	// instanceOnly: the component is not of the tool world (an ACT
	// component); its instance is made without resolving murmur:tool/run.
	instanceOnly bool
	// beforeClose runs before the instance is dropped (an ACT component
	// closes its session there).
	beforeClose func()
	// policy, when set, replaces the grant's WASI policy (a script
	// capsule's component reaches no folder and no network).
	policy func(wasi.Policy) wasi.Policy
}

// errClosed answers a call made after the launch closed its components.
var errClosed = errors.New("component closed")

type compileResult struct {
	c   *cm.Component
	err error
}

// prepare compiles, on one goroutine, every component whose first call
// would otherwise wait: the eager ones (the driver) and any the compile
// cache does not hold, whose compilation takes seconds. That overlaps the
// session's setup. A tool the cache holds is loaded at its first call
// (a fraction of a millisecond), so a capsule that has not called it does
// not keep its code mapped. A component's first call waits for its own
// compilation.
func prepare(lazies []*lazyComponent) {
	for _, l := range lazies {
		l.compiled = make(chan compileResult, 1)
	}
	// Read the hook here, not on the goroutine: a caller's Close waits for
	// the compilations, not for this collection, so the goroutine can
	// outlive its caller.
	release := releaseMemory
	go func() {
		compiled := false
		for _, l := range lazies {
			cached := l.id != nil && l.rt.Cached(*l.id)
			if !l.eager && cached {
				l.compiled <- compileResult{}
				continue
			}
			compiled = compiled || !cached
			c, err := l.compile()
			l.compiled <- compileResult{c, err}
		}
		// A compilation leaves the component's bytes and the compiler's
		// copies as garbage; hand their pages back so an idle capsule
		// stays small. Loading from the cache leaves none, and a forced
		// collection then only costs: it runs the collector's code and
		// walks every stack's frame tables, pages of the binary an idle
		// capsule that never collects again keeps mapped for nothing.
		if compiled {
			release()
		}
	}()
}

// releaseMemory is debug.FreeOSMemory; tests count its calls.
var releaseMemory = debug.FreeOSMemory

func (l *lazyComponent) compile() (*cm.Component, error) {
	load := func() ([]byte, error) { return os.ReadFile(l.wasm) }
	var c *cm.Component
	var err error
	if l.id != nil {
		c, err = l.rt.CompileFrom(*l.id, load)
	} else {
		var b []byte
		if b, err = load(); err == nil {
			c, err = l.rt.Compile(b)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("artifact %q: %w", l.g.name, err)
	}
	return c, nil
}

// componentID names a stored artifact's component file by what staging
// verified: the pinned package digest and the file's path in it. Staging
// re-verifies (or stamps) the unpacked tree against that digest on every
// launch, so these bytes are the ones the id names and the compile cache
// can be consulted without reading or hashing them. A local source has no
// pin and is hashed as usual.
func componentID(r *store.Resolved, file string) *[32]byte {
	if r.Local || r.Digest == "" {
		return nil
	}
	for rel, host := range r.Files {
		if host == file {
			id := artifact.ComponentID(r.Digest, rel)
			return &id
		}
	}
	return nil
}

// sessionDirs is set once the session exists.
type sessionDirs struct {
	mu       sync.Mutex
	workdir  string
	records  string
	readOnly []string
}

func (d *sessionDirs) get() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.workdir
}

func (l *lazyComponent) Run(ctx context.Context, in component.ToolInput) (component.ToolResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ready {
		l.tool, l.err = l.instantiate(ctx)
		l.ready = true
	}
	if l.err != nil {
		return component.ToolResult{}, l.err
	}
	l.inst.SetHost(l.host())
	parent := ctx
	if d := l.g.limits.Deadline; d > 0 {
		// The store's deadline stops guest code; the context also ends a
		// guest blocked in a host call (poll, an HTTP response).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	r, err := l.tool.Run(ctx, in)
	if errors.Is(err, cm.ErrDeadline) || (errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil) {
		err = fmt.Errorf("artifact %q: the call ran past capabilities.limits.deadline_seconds (%s); raise it, or make the call shorter: %w", l.g.name, l.g.limits.Deadline, err)
	}
	return r, err
}

func (l *lazyComponent) instantiate(ctx context.Context) (*component.Tool, error) {
	var c *cm.Component
	var err error
	if l.compiled != nil {
		r := <-l.compiled
		c, err = r.c, r.err
	}
	if c == nil && err == nil {
		c, err = l.compile()
	}
	if err != nil {
		return nil, err
	}
	pol := wasi.Policy{Workdir: l.dirs.get(), Scope: l.g.scope, ReadOnly: l.dirs.readOnly, Env: l.g.env,
		Args: []string{path.Base(l.g.name)}, Stderr: io.Discard, HTTPHook: httpHook(l.g.gateway)}
	if len(l.g.network) > 0 {
		a, err := wasi.ParseAllow(l.g.network)
		if err != nil {
			return nil, fmt.Errorf("artifact %q: %w", l.g.name, err)
		}
		pol.Network = a
	}
	if l.g.state != "" {
		// The store is a second preopen, "state", beside the scope at ".".
		if pol.StateDir, err = stateDir(l.g.state); err != nil {
			return nil, fmt.Errorf("artifact %q: capabilities.state: %w", l.g.name, err)
		}
	}
	if l.policy != nil {
		pol = l.policy(pol)
	}
	inst, err := l.rt.Instantiate(ctx, c, component.Options{Name: l.g.name, Policy: pol, Limits: l.g.limits})
	if err != nil {
		return nil, err
	}
	if l.instanceOnly {
		l.inst = inst
		return nil, nil
	}
	t, err := inst.Tool()
	if err != nil {
		inst.Close()
		return nil, err
	}
	l.inst = inst
	return t, nil
}

// Close drops the instance, if one was made, and waits for a compilation
// prepare started: the engine must outlive it.
func (l *lazyComponent) Close() {
	if l.beforeClose != nil {
		l.beforeClose()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.compiled != nil && !l.ready {
		if r := <-l.compiled; r.c != nil {
			r.c.Close()
		}
		l.ready, l.err = true, errClosed
	}
	if l.inst != nil {
		l.inst.Close()
	}
}

// componentFile finds the component binary among a resolved artifact's
// files: the first .wasm its requires_files lists.
func componentFile(r *store.Resolved, own *manifest.Artifact) (string, error) {
	prefix := "tools/" + bareName(r.Name) + "/"
	if own != nil {
		for _, f := range own.RequiresFiles {
			if strings.HasSuffix(f, ".wasm") {
				if host, ok := r.Files[prefix+f]; ok {
					return host, nil
				}
			}
		}
	}
	var names []string
	for rel := range r.Files {
		if strings.HasSuffix(rel, ".wasm") {
			names = append(names, rel)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "", fmt.Errorf("artifact %q has no component (.wasm) among its files; rebuild it with requires_files naming its .wasm", r.Name)
	}
	return r.Files[names[0]], nil
}

func bareName(full string) string {
	if i := strings.LastIndex(full, "/"); i >= 0 {
		return full[i+1:]
	}
	return full
}

// grantFor computes an artifact's own grant from the explained scope.
func grantFor(c *manifest.Capsule, scope manifest.Scope, name string, gw *gateway.Gateway, inference bool, hostEnv func(string) string) grant {
	g := grant{name: name, gateway: gw, network: scope.NetworkAllow, scope: "."}
	for _, v := range scope.Artifacts {
		if v.Name != name {
			continue
		}
		if !v.Inherits {
			g.network = v.Network
		}
		if v.Scope != "" {
			g.scope = v.Scope
		}
		g.state = v.StateStore
	}
	if fs := c.Capabilities; fs != nil && fs.Filesystem != nil && fs.Filesystem.Scope != nil && g.scope == "." {
		g.scope = *fs.Filesystem.Scope
	}
	if gw != nil {
		env := gw.Env(inference)
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			g.env = append(g.env, [2]string{k, env[k]})
		}
	}
	g.env = append(g.env, inferenceEnv(c)...)
	for _, e := range c.Artifacts {
		if e.Name == name && e.Config != nil {
			// Staging has refused a config that cannot travel as JSON (E-CAP-010).
			if b, err := e.Config.JSON(); err == nil {
				g.env = append(g.env, [2]string{"MURMUR_ARTIFACT_CONFIG", string(b)})
			}
		}
	}
	if caps := c.Capabilities; caps != nil && caps.Env != nil {
		for _, k := range caps.Env.Allow {
			if v := hostEnv(k); v != "" {
				g.env = append(g.env, [2]string{k, v})
			}
		}
	}
	if caps := c.Capabilities; caps != nil && caps.Limits != nil {
		l := caps.Limits
		g.limits = cm.Limits{MemoryBytes: deref(l.MemoryBytes), TableElements: deref(l.TableElements), Instances: deref(l.Instances),
			Deadline: time.Duration(deref(l.DeadlineSeconds)) * time.Second}
	}
	return g
}

// toolDef is what the model sees of a WASM tool: its bare name, the first
// paragraph of its description, and its input schema.
func toolDef(name string, own *manifest.Artifact) (agent.ToolDef, error) {
	d := agent.ToolDef{Name: bareName(name), InputSchema: json.RawMessage(`{"type":"object","properties":{}}`), Kind: agent.KindTool}
	if own == nil {
		return d, nil
	}
	d.Description = strings.TrimSpace(own.Description)
	if own.InputSchema != nil {
		b, err := schemaJSON(own.InputSchema)
		if err != nil {
			return d, fmt.Errorf("artifact %q input_schema: %w", name, err)
		}
		d.InputSchema = b
	}
	return d, nil
}

// schemaJSON accepts input_schema written as a mapping or as a string
// holding JSON.
func schemaJSON(r *manifest.Raw) (json.RawMessage, error) {
	if n := r.Node(); n != nil && n.Kind == yaml.ScalarNode {
		if !json.Valid([]byte(n.Value)) {
			return nil, fmt.Errorf("is a string that is not JSON")
		}
		return json.RawMessage(n.Value), nil
	}
	b, err := r.JSON()
	return json.RawMessage(b), err
}

var _ wasmtool.Runner = (*lazyComponent)(nil)

// inferenceEnv is the MURMUR_INFERENCE_* a session's drivers and tools
// see: the primary choice's model and driver, and inference.driver.config
// as compact JSON. (MURMUR_INFERENCE_ENDPOINT is the driver's alone; it
// comes with its gateway.)
func inferenceEnv(c *manifest.Capsule) [][2]string {
	inf := c.Inference
	if inf == nil || inf.Driver == nil {
		return nil
	}
	env := [][2]string{{"MURMUR_INFERENCE_DRIVER", inf.Driver.Artifact}}
	if inf.Model != "" {
		env = append(env, [2]string{"MURMUR_INFERENCE_MODEL", inf.Model})
	}
	if inf.Driver.Config != nil {
		if b, err := inf.Driver.Config.JSON(); err == nil {
			env = append(env, [2]string{"MURMUR_INFERENCE_DRIVER_CONFIG", string(b)})
		}
	}
	return env
}
