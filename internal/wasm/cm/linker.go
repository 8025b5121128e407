//go:build cgo

package cm

/*
#include "capi.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sort"
	"strings"
	"sync"

	"github.com/murmur/mur/internal/wasm/rewrite"
)

// HostFunc implements an imported function. args are the guest's
// arguments; the returned Val is the function's result (ignored for a
// function without one). An error or a panic becomes a trap in the guest,
// and the call that led here returns it as a *TrapError.
type HostFunc func(c *Caller, args []Val) (Val, error)

// ResourceDtor runs when the guest drops the last own handle of a host
// resource.
type ResourceDtor func(c *Caller, rep uint32) error

// Linker holds host definitions by instance name. Definitions are kept in
// Go and turned into a wasmtime linker per set of names a component
// imports, which lets one definition of an interface serve every
// semver-compatible version a component asks for (wasi:io/streams@0.2.0 …
// @0.2.6 all bind to the highest defined 0.2.x). A Linker is safe for
// concurrent use.
type Linker struct {
	engine *Engine
	mu     sync.Mutex
	root   *linkNode
	// built caches wasmtime linkers by their binding plan; cleared when a
	// definition changes.
	built map[string]*builtLinker
}

type linkNode struct {
	funcs     map[string]HostFunc
	resources map[string]resourceDef
	children  map[string]*linkNode
}

type resourceDef struct {
	ty   ResourceType
	dtor ResourceDtor
}

func newNode() *linkNode {
	return &linkNode{funcs: map[string]HostFunc{}, resources: map[string]resourceDef{}, children: map[string]*linkNode{}}
}

type builtLinker struct {
	ptr *C.wasmtime_component_linker_t
}

// NewLinker makes an empty linker.
func (e *Engine) NewLinker() *Linker {
	return &Linker{engine: e, root: newNode(), built: map[string]*builtLinker{}}
}

// node returns the definition node at path, creating it.
func (l *Linker) node(path []string) *linkNode {
	n := l.root
	for _, p := range path {
		c, ok := n.children[p]
		if !ok {
			c = newNode()
			n.children[p] = c
		}
		n = c
	}
	return n
}

// Func defines function name in the instance at path; an empty path is the
// component's root, ["wasi:io/streams@0.2.3"] an interface, longer paths
// nested instances.
func (l *Linker) Func(path []string, name string, fn HostFunc) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.node(path).funcs[name] = fn
	l.dropBuilt()
}

// Resource defines resource type name in the instance at path. Values of
// it are made with Own(ty, rep) and Borrow(ty, rep); dtor runs when the
// guest drops an own handle.
func (l *Linker) Resource(path []string, name string, ty ResourceType, dtor ResourceDtor) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.node(path).resources[name] = resourceDef{ty: ty, dtor: dtor}
	l.dropBuilt()
}

// Instance defines the instance at path, empty until functions or
// resources are added: it serves an import of an interface that exports
// only types (ACT's act:core/types), which needs no definitions.
func (l *Linker) Instance(path []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.node(path)
	l.dropBuilt()
}

// Instances lists the top-level instance names defined so far, sorted:
// the interfaces this linker serves.
func (l *Linker) Instances() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return sortedKeys(l.root.children)
}

// dropBuilt forgets the built linkers; each is freed by its finalizer once
// no instantiation in flight holds it.
func (l *Linker) dropBuilt() {
	clear(l.built)
}

// Close forgets the wasmtime linkers built so far (freed once unused).
func (l *Linker) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropBuilt()
	return nil
}

// binding maps one top-level import name to the definitions serving it.
type binding struct {
	name    string
	defined string       // the name the definitions were given
	streams rewrite.Mode // bytes cross as latin1 strings (internal/wasm/rewrite)
}

// bindingMode is how the host functions serving import name of c convert
// bytes.
func bindingMode(c *Component, name string) rewrite.Mode {
	if !rewrite.FastStreams(name) {
		return rewrite.Slow
	}
	return c.streams
}

// plan matches the component's imports to definitions, naming every import
// nobody provides.
func (l *Linker) plan(c *Component) ([]binding, error) {
	var missing []string
	var out []binding
	for _, imp := range c.Imports() {
		switch {
		case imp.Func:
			if _, ok := l.root.funcs[imp.Name]; !ok {
				missing = append(missing, fmt.Sprintf("function %q", imp.Name))
			}
			continue
		case imp.Resource:
			if _, ok := l.root.resources[imp.Name]; !ok {
				missing = append(missing, fmt.Sprintf("resource %q", imp.Name))
			}
			continue
		case !imp.Instance:
			continue
		}
		def, ok := l.match(imp.Name)
		if !ok && len(imp.Funcs) == 0 && len(imp.Resources) == 0 {
			// An interface imported only for its types (a WIT use of
			// another interface's records) needs nothing defined: an empty
			// instance satisfies it.
			out = append(out, binding{name: imp.Name})
			continue
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("instance %q", imp.Name))
			continue
		}
		n := l.root.children[def]
		for _, f := range imp.Funcs {
			if _, ok := n.funcs[f]; !ok {
				missing = append(missing, fmt.Sprintf("function %q in %q", f, imp.Name))
			}
		}
		for _, r := range imp.Resources {
			if _, ok := n.resources[r]; !ok {
				missing = append(missing, fmt.Sprintf("resource %q in %q", r, imp.Name))
			}
		}
		out = append(out, binding{name: imp.Name, defined: def, streams: bindingMode(c, imp.Name)})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: the component imports %s, which the host does not provide",
			ErrMissingImport, strings.Join(missing, ", "))
	}
	return out, nil
}

// match finds the defined instance serving import name.
func (l *Linker) match(name string) (string, bool) {
	if _, ok := l.root.children[name]; ok {
		return name, true
	}
	return bestMatch(name, sortedKeys(l.root.children))
}

// linkerFor returns a wasmtime linker that satisfies c's imports.
func (l *Linker) linkerFor(c *Component) (*builtLinker, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	plan, err := l.plan(c)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(plan))
	for i, b := range plan {
		keys[i] = fmt.Sprintf("%s=%s/%d", b.name, b.defined, b.streams)
	}
	sort.Strings(keys)
	key := strings.Join(keys, "\n")
	if b, ok := l.built[key]; ok {
		return b, nil
	}
	b, err := l.build(plan)
	if err != nil {
		return nil, err
	}
	l.built[key] = b
	return b, nil
}

func (l *Linker) build(plan []binding) (*builtLinker, error) {
	ptr := C.wasmtime_component_linker_new(l.engine.ptr)
	root := C.wasmtime_component_linker_root(ptr)
	err := defineFuncs(root, l.root, nil, rewrite.Slow)
	for _, b := range plan {
		if err != nil {
			break
		}
		n := l.root.children[b.defined]
		if b.defined == "" {
			n = newNode()
		}
		err = defineInstance(root, b.name, n, []string{b.name}, b.streams)
	}
	C.wasmtime_component_linker_instance_delete(root)
	if err != nil {
		C.wasmtime_component_linker_delete(ptr)
		return nil, err
	}
	runtime.KeepAlive(l.engine)
	b := &builtLinker{ptr: ptr}
	runtime.SetFinalizer(b, func(b *builtLinker) { C.wasmtime_component_linker_delete(b.ptr) })
	return b, nil
}

func defineInstance(parent *C.wasmtime_component_linker_instance_t, name string, n *linkNode, path []string,
	streams rewrite.Mode) error {
	var li *C.wasmtime_component_linker_instance_t
	p, len_ := strPtr(name)
	err := takeError(C.wasmtime_component_linker_instance_add_instance(parent, p, len_, &li))
	runtime.KeepAlive(name)
	if err != nil {
		return fmt.Errorf("define instance %q: %w", name, err)
	}
	defer C.wasmtime_component_linker_instance_delete(li)
	if err := defineFuncs(li, n, path, streams); err != nil {
		return err
	}
	for _, child := range sortedKeys(n.children) {
		if err := defineInstance(li, child, n.children[child], append(path, child), rewrite.Slow); err != nil {
			return err
		}
	}
	return nil
}

func defineFuncs(li *C.wasmtime_component_linker_instance_t, n *linkNode, path []string, streams rewrite.Mode) error {
	for _, name := range sortedKeys(n.resources) {
		def := n.resources[name]
		h := cgo.NewHandle(&hostResource{name: qualify(path, name), dtor: def.dtor})
		p, len_ := strPtr(name)
		err := takeError(C.mur_add_resource(li, p, len_, C.uint32_t(def.ty), C.uintptr_t(h)))
		runtime.KeepAlive(name)
		if err != nil {
			return fmt.Errorf("define resource %q: %w", qualify(path, name), err)
		}
	}
	for _, name := range sortedKeys(n.funcs) {
		h := cgo.NewHandle(&hostFunc{name: qualify(path, name), fn: n.funcs[name], streams: streams})
		p, len_ := strPtr(name)
		err := takeError(C.mur_add_func(li, p, len_, C.uintptr_t(h)))
		runtime.KeepAlive(name)
		if err != nil {
			return fmt.Errorf("define function %q: %w", qualify(path, name), err)
		}
	}
	return nil
}

type hostFunc struct {
	name    string
	fn      HostFunc
	streams rewrite.Mode
}

type hostResource struct {
	name string
	dtor ResourceDtor
}

func qualify(path []string, name string) string {
	if len(path) == 0 {
		return name
	}
	return strings.Join(path, "/") + "#" + name
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
