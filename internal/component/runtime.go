// Package component runs murmur worlds: it gives typed Go calls for the
// exports of tool, driver, hook and capsule components and serves their
// imports (WASI from internal/wasi, the murmur host interfaces from Host),
// over the wasmtime binding in internal/wasm/cm.
package component

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
)

// ErrVersion means a component does not export the exact versioned
// interface this host resolves; there is no fallback to another version.
var ErrVersion = errors.New("component interface version mismatch")

// ErrMissingHandler means a hook component lacks a required lifecycle
// handler.
var ErrMissingHandler = errors.New("hook component lacks a required handler")

// errMissingFunc means the component exports the interface at exactly the
// right version but not the function asked for.
var errMissingFunc = errors.New("interface lacks the function")

// TypeInterfaces are interfaces a component imports only for their
// types, when its world uses their records; they are served empty. An
// ACT component built from act:tools-sync imports all three. (A Go tool
// calling run-inference imports murmur:hook/lifecycle for the message
// record murmur:runtime/inference uses; defineHost links that interface,
// its functions as traps for JS guests, which import them all.)
var TypeInterfaces = []string{"act:core/types@0.4.0", "act:tools/types@0.2.0", "act:sessions/types@0.2.0"}

// Runtime is one engine with one linker that serves WASI and every murmur
// host import. It is safe for concurrent use; each instance gets its own
// store, WASI context and Host.
type Runtime struct {
	engine *cm.Engine
	linker *cm.Linker
}

// New builds a runtime with cfg (set CacheDir for the on-disk compile
// cache).
func New(cfg cm.Config) (*Runtime, error) {
	e, err := cm.NewEngine(cfg)
	if err != nil {
		return nil, err
	}
	l := e.NewLinker()
	if err := wasi.Define(l); err != nil {
		e.Close()
		return nil, err
	}
	defineHost(l)
	for _, iface := range TypeInterfaces {
		l.Instance([]string{iface})
	}
	return &Runtime{engine: e, linker: l}, nil
}

// Imports lists the interfaces the runtime's linker serves (WASI and the
// murmur host imports), sorted.
func (r *Runtime) Imports() []string { return r.linker.Instances() }

// Exports lists the murmur interfaces the host resolves and calls on a
// component, at exactly the versions it resolves: a tool's or http
// driver's run, a hook's lifecycle, a process driver's process and a
// script capsule's run (Instance.Capsule: a session of a script capsule
// calls it; mur build checks a runtime: capsule artifact against it).
var Exports = []string{IfaceToolRun, IfaceLifecycle, IfaceProcess, IfaceCapsuleRun}

// Close releases the engine and linker.
func (r *Runtime) Close() error {
	r.linker.Close()
	return r.engine.Close()
}

// Compile compiles a component binary (through the compile cache when the
// runtime has one).
func (r *Runtime) Compile(wasm []byte) (*cm.Component, error) { return r.engine.Compile(wasm) }

// CompileFrom compiles the component load returns, cached under id (see
// cm.Engine.CompileFrom): a warm launch neither reads nor hashes it.
func (r *Runtime) CompileFrom(id [32]byte, load func() ([]byte, error)) (*cm.Component, error) {
	return r.engine.CompileFrom(id, load)
}

// Cached reports whether the compile cache holds id (cm.Engine.Cached).
func (r *Runtime) Cached(id [32]byte) bool { return r.engine.Cached(id) }

// CompileText compiles component text; for fixtures.
func (r *Runtime) CompileText(text string) (*cm.Component, error) {
	return r.engine.CompileText(text)
}

// Instance is one instantiated component with its own store.
type Instance struct {
	inst  *cm.Instance
	store *cm.Store
	data  *storeData
	comp  *cm.Component
	// Name is the artifact name, for messages.
	Name string
}

// Options configure one instantiation.
type Options struct {
	Name   string      // artifact name for messages
	Policy wasi.Policy // what the guest may reach through WASI
	Host   *Host       // murmur host imports; nil grants none
	Limits cm.Limits   // memory, tables, instances, deadline per call
}

// Instantiate instantiates c under o. The caller closes the instance.
func (r *Runtime) Instantiate(ctx context.Context, c *cm.Component, o Options) (*Instance, error) {
	x, err := wasi.NewCtx(o.Policy)
	if err != nil {
		return nil, fmt.Errorf("component %q: %w", o.Name, err)
	}
	data := &storeData{wasi: x, host: o.Host}
	if data.host == nil {
		data.host = &Host{}
	}
	s, err := r.engine.NewStore(o.Limits, data)
	if err != nil {
		x.Close()
		return nil, err
	}
	inst, err := r.linker.Instantiate(ctx, s, c)
	if err != nil {
		s.Close()
		x.Close()
		return nil, fmt.Errorf("component %q: %w", o.Name, err)
	}
	return &Instance{inst: inst, store: s, data: data, comp: c, Name: o.Name}, nil
}

// Close drops the store and the WASI context.
func (i *Instance) Close() error {
	err := i.store.Close()
	if cerr := i.data.wasi.Close(); err == nil {
		err = cerr
	}
	return err
}

// SetHost replaces the host imports for the calls that follow (e.g. a new
// text sink per driver turn).
func (i *Instance) SetHost(h *Host) {
	if h == nil {
		h = &Host{}
	}
	i.data.host = h
}

// Exited reports the status a guest passed to wasi:cli/exit, if it did.
func (i *Instance) Exited() (int, bool) { return i.data.wasi.Exited() }

// export resolves fn of the versioned interface iface, exactly. A
// component that exports only the unversioned name, or nothing of it,
// fails naming the version expected and how to rebuild.
func (i *Instance) export(iface, fn string) (*cm.Func, error) {
	f, err := i.inst.Func(iface, fn)
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, cm.ErrNoExport) {
		return nil, err
	}
	bare := iface[:strings.LastIndex(iface, "@")]
	hint := fmt.Sprintf("rebuild the artifact against %s (mur install for a default artifact, or rebuild it from source)", iface)
	for _, e := range i.comp.Exports() {
		switch {
		case e.Name == iface:
			return nil, fmt.Errorf("%w: component %q exports %s without %s", errMissingFunc, i.Name, iface, fn)
		case e.Name == bare:
			return nil, fmt.Errorf("%w: component %q exports the unversioned %s; this host resolves only %s: %s", ErrVersion, i.Name, bare, iface, hint)
		case e.Name != iface && strings.HasPrefix(e.Name, bare+"@"):
			return nil, fmt.Errorf("%w: component %q exports %s; this host resolves only %s: %s", ErrVersion, i.Name, e.Name, iface, hint)
		}
	}
	return nil, fmt.Errorf("%w: component %q does not export %s#%s: %s", ErrVersion, i.Name, iface, fn, hint)
}

// Func resolves fn of the exported interface iface, at exactly that
// version, for a world this package does not type (internal/act hosts
// ACT components with it).
func (i *Instance) Func(iface, fn string) (*cm.Func, error) { return i.export(iface, fn) }

// Exports lists the component's top-level exports.
func (i *Instance) Exports() []cm.Import { return i.comp.Exports() }

// Tool is the tool/driver world's murmur:tool/run@0.1.0 export.
type Tool struct {
	inst *Instance
	run  *cm.Func
}

// Tool resolves the instance's run export.
func (i *Instance) Tool() (*Tool, error) {
	f, err := i.export(IfaceToolRun, "run")
	if err != nil {
		return nil, err
	}
	return &Tool{inst: i, run: f}, nil
}

// Run calls run(input). A trap, deadline or limit comes back as the error.
func (t *Tool) Run(ctx context.Context, in ToolInput) (ToolResult, error) {
	v, err := t.run.Call(ctx, lower(in))
	if err != nil {
		return ToolResult{}, fmt.Errorf("component %q run: %w", t.inst.Name, err)
	}
	var r ToolResult
	if err := lift(v, &r); err != nil {
		return ToolResult{}, fmt.Errorf("component %q run: %w", t.inst.Name, err)
	}
	return r, nil
}

// Capsule resolves a script capsule's murmur:capsule/run@0.1.0 entry point.
func (i *Instance) Capsule() (func(ctx context.Context) error, error) {
	f, err := i.export(IfaceCapsuleRun, "run")
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		_, err := f.Call(ctx)
		return err
	}, nil
}
