//go:build cgo

package cm

/*
#include "capi.h"
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// Instance is an instantiated component living in a store.
type Instance struct {
	inst  C.wasmtime_component_instance_t
	store *Store
	comp  *Component
}

// Instantiate instantiates c in s with l's definitions, under s's limits
// and ctx. A component importing anything l does not define fails with
// ErrMissingImport naming each such import.
func (l *Linker) Instantiate(ctx context.Context, s *Store, c *Component) (*Instance, error) {
	b, err := l.linkerFor(c)
	if err != nil {
		return nil, err
	}
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	var inst C.wasmtime_component_instance_t
	cerr := C.mur_instantiate(s.acct, b.ptr, s.ctx, c.ptr, &inst)
	debugGC()
	runtime.KeepAlive(b)
	runtime.KeepAlive(c)
	if cerr != nil {
		return nil, fmt.Errorf("instantiate: %w", s.callError(cerr))
	}
	return &Instance{inst: inst, store: s, comp: c}, nil
}

// Func looks up an exported function: Func("run") for a root export,
// Func("wasi:cli/run@0.2.0", "run") for one inside an exported instance.
func (i *Instance) Func(path ...string) (*Func, error) {
	if len(path) == 0 {
		return nil, fmt.Errorf("%w: empty export path", ErrNoExport)
	}
	var idx *C.wasmtime_component_export_index_t
	for _, name := range path {
		p, n := strPtr(name)
		next := C.wasmtime_component_get_export_index(i.comp.ptr, idx, p, n)
		runtime.KeepAlive(name)
		if idx != nil {
			C.wasmtime_component_export_index_delete(idx)
		}
		if next == nil {
			return nil, fmt.Errorf("%w: %q", ErrNoExport, strings.Join(path, "#"))
		}
		idx = next
	}
	defer C.wasmtime_component_export_index_delete(idx)
	f := &Func{store: i.store, inst: i, name: strings.Join(path, "#")}
	if !C.wasmtime_component_instance_get_func(&i.inst, i.store.ctx, idx, &f.fn) {
		return nil, fmt.Errorf("%w: %q is not a function", ErrNoExport, f.name)
	}
	ty := C.wasmtime_component_func_type(&f.fn, i.store.ctx)
	defer C.wasmtime_component_func_type_delete(ty)
	f.nparams = int(C.wasmtime_component_func_type_param_count(ty))
	var rt C.wasmtime_component_valtype_t
	if C.wasmtime_component_func_type_result(ty, &rt) {
		f.nresults = 1
		C.wasmtime_component_valtype_delete(&rt)
	}
	runtime.KeepAlive(i)
	return f, nil
}

// Func is an exported function of an instance.
type Func struct {
	fn       C.wasmtime_component_func_t
	store    *Store
	inst     *Instance
	name     string
	nparams  int
	nresults int
}

// Call calls the function with args and returns its result (the zero Val
// for a function without one), then runs the guest's post-return cleanup.
// The call runs under the store's limits and ctx: a deadline, a canceled
// context, exhausted fuel or a trap come back as a *TrapError.
func (f *Func) Call(ctx context.Context, args ...Val) (Val, error) {
	if len(args) != f.nparams {
		return Val{}, fmt.Errorf("%w: %s takes %d arguments, got %d", ErrBadValue, f.name, f.nparams, len(args))
	}
	for i := range args {
		if err := args[i].check(); err != nil {
			return Val{}, fmt.Errorf("%s argument %d: %w", f.name, i, err)
		}
	}
	s := f.store
	if err := s.enter(ctx); err != nil {
		return Val{}, err
	}
	defer s.leave()
	// Arguments and results live in C memory: wasmtime frees what it
	// allocated, and Go never hands it pointers into the Go heap.
	buf := C.calloc(C.size_t(len(args)+f.nresults+1), C.size_t(cvalSize))
	defer C.free(buf)
	cargs := cvals(buf, 0, len(args))
	cres := cvals(buf, len(args), f.nresults)
	defer func() {
		for i := range cargs {
			C.wasmtime_component_val_delete(asC(&cargs[i]))
		}
	}()
	for i := range args {
		if err := toC(s.ctx, &args[i], &cargs[i]); err != nil {
			return Val{}, fmt.Errorf("%s argument %d: %w", f.name, i, err)
		}
	}
	cerr := C.wasmtime_component_func_call(&f.fn, s.ctx, ptrOrNil(cargs), C.size_t(len(cargs)),
		ptrOrNil(cres), C.size_t(len(cres)))
	debugGC()
	if cerr != nil {
		return Val{}, fmt.Errorf("call %s: %w", f.name, s.callError(cerr))
	}
	var out Val
	if len(cres) > 0 {
		out = fromC(&cres[0])
		C.wasmtime_component_val_delete(asC(&cres[0]))
	}
	if cerr := C.wasmtime_component_func_post_return(&f.fn, s.ctx); cerr != nil {
		return Val{}, fmt.Errorf("post-return of %s: %w", f.name, s.callError(cerr))
	}
	runtime.KeepAlive(f)
	return out, nil
}

// cvals views n values at index off of a C array.
func cvals(p unsafe.Pointer, off, n int) []cval {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*cval)(unsafe.Add(p, uintptr(off)*cvalSize)), n)
}

func ptrOrNil(s []cval) *C.wasmtime_component_val_t {
	if len(s) == 0 {
		return nil
	}
	return asC(&s[0])
}
