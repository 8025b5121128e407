//go:build cgo

package cm

/*
#include "capi.h"
*/
import "C"

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/murmur/mur/internal/wasm/rewrite"
)

// Component is a compiled component, ready to instantiate in any store of
// its engine. It is safe for concurrent use.
type Component struct {
	ptr    *C.wasmtime_component_t
	engine *Engine
	digest [32]byte // sha256 of the component binary; zero when deserialized
	// streams: how the binary was rewritten for the streams byte fast
	// path, so host functions of wasi:io/streams see latin1 strings for
	// bytes (internal/wasm/rewrite).
	streams rewrite.Mode
	// imports is read once: instantiation matches it against the linker.
	importsOnce sync.Once
	imports     []Import
	exportsOnce sync.Once
	exports     []Import
	close       sync.Once
}

// Import is one top-level import (or export) of a component: a function, a
// resource type, or an instance (interface) with the names it uses (or
// offers) from it.
type Import struct {
	Name string
	// Instance is true for an interface import such as wasi:io/streams@0.2.3.
	Instance bool
	// Func is true for a function import; Resource for a resource type.
	// An import that is none of these is a type with an equality bound,
	// which needs no definition.
	Func, Resource bool
	// Funcs and Resources list what the component uses from an instance.
	Funcs     []string
	Resources []string
}

// Compile compiles a component binary, through the engine's compile cache
// when it has one.
func (e *Engine) Compile(wasm []byte) (*Component, error) {
	digest := sha256.Sum256(wasm)
	if e.cfg.CacheDir != "" {
		return e.compileCached(wasm, digest)
	}
	return e.compileFast(wasm, digest)
}

// compileFast compiles wasm with as much of the streams fast path as
// compiles: a rewritten form that does not (a shape the rewrite misjudged)
// falls back to the in-place rewrite, then to the guest as given, whose
// error is the one reported.
func (e *Engine) compileFast(wasm []byte, digest [32]byte) (*Component, error) {
	code, mode := e.rewrite(wasm)
	c, err := e.compile(code, digest)
	if err != nil && mode == rewrite.Shim {
		code, mode = rewrite.InPlace(wasm, true)
		c, err = e.compile(code, digest)
	}
	if err != nil && mode != rewrite.Slow {
		mode = rewrite.Slow
		c, err = e.compile(wasm, digest)
	}
	if err != nil {
		return nil, err
	}
	c.streams = mode
	return c, nil
}

func (e *Engine) compile(wasm []byte, digest [32]byte) (*Component, error) {
	ep, err := e.cptr()
	if err != nil {
		return nil, err
	}
	if len(wasm) == 0 {
		return nil, fmt.Errorf("%w: empty input", ErrCompile)
	}
	var out *C.wasmtime_component_t
	cerr := C.wasmtime_component_new(ep, (*C.uint8_t)(unsafe.Pointer(&wasm[0])), C.size_t(len(wasm)), &out)
	runtime.KeepAlive(wasm)
	runtime.KeepAlive(e)
	if cerr != nil {
		return nil, fmt.Errorf("%w: %w", ErrCompile, takeError(cerr))
	}
	return e.wrap(out, digest), nil
}

// CompileText compiles a component written in component text (the WAT
// form of the component model); used for fixtures.
func (e *Engine) CompileText(text string) (*Component, error) {
	wasm, err := Wat2Wasm(text)
	if err != nil {
		return nil, err
	}
	return e.Compile(wasm)
}

// Wat2Wasm converts core or component text to its binary form.
func Wat2Wasm(text string) ([]byte, error) {
	var out C.wasm_byte_vec_t
	p, n := strPtr(text)
	cerr := C.wasmtime_wat2wasm(p, n, &out)
	runtime.KeepAlive(text)
	if cerr != nil {
		return nil, fmt.Errorf("%w: component text: %w", ErrCompile, takeError(cerr))
	}
	defer C.wasm_byte_vec_delete(&out)
	return C.GoBytes(unsafe.Pointer(out.data), C.int(out.size)), nil
}

// Serialize returns the compiled form, loadable by Deserialize on an
// engine with the same settings and wasmtime version.
func (c *Component) Serialize() ([]byte, error) {
	var out C.wasm_byte_vec_t
	cerr := C.wasmtime_component_serialize(c.ptr, &out)
	runtime.KeepAlive(c)
	if cerr != nil {
		return nil, fmt.Errorf("serialize component: %w", takeError(cerr))
	}
	defer C.wasm_byte_vec_delete(&out)
	return C.GoBytes(unsafe.Pointer(out.data), C.int(out.size)), nil
}

// Deserialize loads a compiled form made by Serialize. Only trusted bytes
// may be given: wasmtime runs the machine code inside as is.
func (e *Engine) Deserialize(b []byte) (*Component, error) {
	ep, err := e.cptr()
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("deserialize component: empty input")
	}
	var out *C.wasmtime_component_t
	cerr := C.wasmtime_component_deserialize(ep, (*C.uint8_t)(unsafe.Pointer(&b[0])), C.size_t(len(b)), &out)
	runtime.KeepAlive(b)
	runtime.KeepAlive(e)
	if cerr != nil {
		return nil, fmt.Errorf("deserialize component: %w", takeError(cerr))
	}
	return e.wrap(out, [32]byte{}), nil
}

// DeserializeFile loads a compiled form from a file by memory-mapping it.
// Only trusted files may be given.
func (e *Engine) DeserializeFile(path string) (*Component, error) {
	ep, err := e.cptr()
	if err != nil {
		return nil, err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var out *C.wasmtime_component_t
	cerr := C.wasmtime_component_deserialize_file(ep, cpath, &out)
	runtime.KeepAlive(e)
	if cerr != nil {
		return nil, fmt.Errorf("deserialize component %q: %w", path, takeError(cerr))
	}
	return e.wrap(out, [32]byte{}), nil
}

func (e *Engine) wrap(p *C.wasmtime_component_t, digest [32]byte) *Component {
	c := &Component{ptr: p, engine: e, digest: digest}
	runtime.SetFinalizer(c, (*Component).Close)
	return c
}

// Close releases the component. Instances already made from it keep
// working.
func (c *Component) Close() error {
	c.close.Do(func() {
		C.wasmtime_component_delete(c.ptr)
		runtime.SetFinalizer(c, nil)
	})
	return nil
}

// Imports lists the component's top-level imports.
func (c *Component) Imports() []Import {
	c.importsOnce.Do(func() { c.imports = c.readImports() })
	return c.imports
}

// Exports lists the component's top-level exports, in the same shape as
// Imports: for an exported instance, the functions and resources it offers.
func (c *Component) Exports() []Import {
	c.exportsOnce.Do(func() { c.exports = c.readItems(false) })
	return c.exports
}

func (c *Component) readImports() []Import { return c.readItems(true) }

// readItems lists imports or exports through the component types API.
func (c *Component) readItems(imports bool) []Import {
	ep := c.engine.ptr
	ty := C.wasmtime_component_type(c.ptr)
	defer C.wasmtime_component_type_delete(ty)
	var n int
	if imports {
		n = int(C.wasmtime_component_type_import_count(ty, ep))
	} else {
		n = int(C.wasmtime_component_type_export_count(ty, ep))
	}
	out := make([]Import, 0, n)
	for i := range n {
		var name *C.char
		var nameLen C.size_t
		var item C.wasmtime_component_item_t
		var ok C.bool
		if imports {
			ok = C.wasmtime_component_type_import_nth(ty, ep, C.size_t(i), &name, &nameLen, &item)
		} else {
			ok = C.wasmtime_component_type_export_nth(ty, ep, C.size_t(i), &name, &nameLen, &item)
		}
		if !ok {
			continue
		}
		imp := Import{Name: C.GoStringN(name, C.int(nameLen)),
			Func: item.kind == C.MUR_ITEM_COMPONENT_FUNC, Resource: item.kind == C.MUR_ITEM_RESOURCE}
		if item.kind == C.MUR_ITEM_COMPONENT_INSTANCE {
			imp.Instance = true
			it := *(**C.wasmtime_component_instance_type_t)(unsafe.Pointer(&item.of))
			m := int(C.wasmtime_component_instance_type_export_count(it, ep))
			for j := range m {
				var en *C.char
				var enLen C.size_t
				var sub C.wasmtime_component_item_t
				if !C.wasmtime_component_instance_type_export_nth(it, ep, C.size_t(j), &en, &enLen, &sub) {
					continue
				}
				switch sub.kind {
				case C.MUR_ITEM_COMPONENT_FUNC:
					imp.Funcs = append(imp.Funcs, C.GoStringN(en, C.int(enLen)))
				case C.MUR_ITEM_RESOURCE:
					imp.Resources = append(imp.Resources, C.GoStringN(en, C.int(enLen)))
				}
				C.wasmtime_component_item_delete(&sub)
			}
		}
		C.wasmtime_component_item_delete(&item)
		out = append(out, imp)
	}
	runtime.KeepAlive(c)
	return out
}

// CompileFrom compiles the component that load returns, through the
// compile cache under id instead of the binary's own digest, so a cache
// hit reads and hashes nothing. id must name exactly these bytes — for
// instance a verified package digest and the file's path in it. Without a
// cache dir it is Compile(load()).
func (e *Engine) CompileFrom(id [32]byte, load func() ([]byte, error)) (*Component, error) {
	if e.cfg.CacheDir != "" {
		if c, mode := e.loadCached(e.cfg.CacheDir, e.cacheKey(id)); c != nil {
			c.digest = id
			c.streams = mode
			return c, nil
		}
	}
	wasm, err := load()
	if err != nil {
		return nil, err
	}
	if e.cfg.CacheDir == "" {
		return e.Compile(wasm)
	}
	return e.compileCached(wasm, id)
}

// rewrite applies the streams fast path unless the engine turned it off.
func (e *Engine) rewrite(wasm []byte) ([]byte, rewrite.Mode) {
	if e.cfg.SlowStreams {
		return wasm, rewrite.Slow
	}
	return rewrite.Streams(wasm, Wat2Wasm)
}
