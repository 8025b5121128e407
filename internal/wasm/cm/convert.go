//go:build cgo

package cm

/*
#include "capi.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// cval mirrors wasmtime_component_val_t (checked by TestABILayout): a kind
// byte, then a 24-byte union read as three words. Go reads and writes the
// union directly so a list of N values costs one allocation call, not N.
type cval struct {
	kind uint8
	_    [7]byte
	a    uint64
	b    uint64
	c    uint64
}

// centry mirrors wasmtime_component_valrecord_entry_t.
type centry struct {
	nameSize uint64
	nameData uint64
	val      cval
}

const (
	cvalSize   = unsafe.Sizeof(cval{})
	centrySize = unsafe.Sizeof(centry{})
)

// ptrAt reads a C pointer stored in a union word.
func ptrAt(w *uint64) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(w)) }

// setPtr stores a C pointer in a union word.
func setPtr(w *uint64, p unsafe.Pointer) { *(*unsafe.Pointer)(unsafe.Pointer(w)) = p }

func asC(p *cval) *C.wasmtime_component_val_t {
	return (*C.wasmtime_component_val_t)(unsafe.Pointer(p))
}

// newName fills a wasm_name_t (two words at p) with a Rust-owned copy of s.
func newName(p *uint64, s string) {
	v := (*C.wasm_name_t)(unsafe.Pointer(p))
	if len(s) == 0 {
		C.wasm_byte_vec_new_uninitialized(v, 0)
		return
	}
	C.wasm_byte_vec_new(v, C.size_t(len(s)), (*C.char)(unsafe.Pointer(unsafe.StringData(s))))
	runtime.KeepAlive(s)
}

func readName(p *uint64) string {
	v := (*C.wasm_name_t)(unsafe.Pointer(p))
	return nameString(v)
}

// newVec allocates a Rust-owned vector of n elements of size sz with alloc
// and zeroes it, so the zero element (bool false) is what a partly filled
// vector holds if filling stops early.
func newVec(dst *cval, n int, sz uintptr, alloc func(*C.mur_vec, C.size_t)) unsafe.Pointer {
	v := (*C.mur_vec)(unsafe.Pointer(&dst.a))
	alloc(v, C.size_t(n))
	if n == 0 {
		return nil
	}
	clear(unsafe.Slice((*byte)(v.data), uintptr(n)*sz))
	return v.data
}

func vallistNew(v *C.mur_vec, n C.size_t)   { C.wasmtime_component_vallist_new_uninit(v, n) }
func valtupleNew(v *C.mur_vec, n C.size_t)  { C.wasmtime_component_valtuple_new_uninit(v, n) }
func valrecordNew(v *C.mur_vec, n C.size_t) { C.wasmtime_component_valrecord_new_uninit(v, n) }
func valflagsNew(v *C.mur_vec, n C.size_t)  { C.wasmtime_component_valflags_new_uninit(v, n) }

// toC writes v into dst, allocating through wasmtime so wasmtime may free
// it. v must have passed check. On error dst still holds a value that
// wasmtime_component_val_delete can free.
func toC(ctx *C.wasmtime_context_t, v *Val, dst *cval) error {
	*dst = cval{}
	switch v.kind {
	case KindBool, KindS8, KindU8, KindS16, KindU16, KindS32, KindU32, KindS64, KindU64,
		KindF32, KindF64, KindChar:
		dst.kind, dst.a = uint8(v.kind), v.n
		return nil
	case KindString, KindEnum:
		newName(&dst.a, v.s)
		dst.kind = uint8(v.kind)
		return nil
	case KindList:
		dst.kind = uint8(KindList)
		if v.bytes != nil {
			p := newVec(dst, len(v.bytes), cvalSize, vallistNew)
			if p == nil {
				return nil
			}
			elems := unsafe.Slice((*cval)(p), len(v.bytes))
			for i, b := range v.bytes {
				elems[i].kind, elems[i].a = uint8(KindU8), uint64(b)
			}
			return nil
		}
		return fillVals(ctx, v.elems, dst, vallistNew)
	case KindTuple:
		dst.kind = uint8(KindTuple)
		return fillVals(ctx, v.elems, dst, valtupleNew)
	case KindRecord:
		dst.kind = uint8(KindRecord)
		p := newVec(dst, len(v.elems), centrySize, valrecordNew)
		if p == nil {
			return nil
		}
		entries := unsafe.Slice((*centry)(p), len(v.elems))
		for i := range v.elems {
			newName(&entries[i].nameSize, v.names[i])
			if err := toC(ctx, &v.elems[i], &entries[i].val); err != nil {
				return err
			}
		}
		return nil
	case KindFlags:
		dst.kind = uint8(KindFlags)
		p := newVec(dst, len(v.names), 16, valflagsNew)
		if p == nil {
			return nil
		}
		names := unsafe.Slice((*[2]uint64)(p), len(v.names))
		for i, n := range v.names {
			newName(&names[i][0], n)
		}
		return nil
	case KindVariant:
		newName(&dst.a, v.s)
		dst.kind = uint8(KindVariant)
		box, err := boxPayload(ctx, v)
		setPtr(&dst.c, unsafe.Pointer(box))
		return err
	case KindOption:
		dst.kind = uint8(KindOption)
		if !v.IsSome() {
			return nil
		}
		box, err := boxPayload(ctx, v)
		setPtr(&dst.a, unsafe.Pointer(box))
		return err
	case KindResult:
		dst.kind = uint8(KindResult)
		if v.IsOK() {
			dst.a = 1
		}
		box, err := boxPayload(ctx, v)
		setPtr(&dst.b, unsafe.Pointer(box))
		return err
	case KindResource:
		p, err := resourceToC(ctx, v.res)
		if err != nil {
			return err
		}
		dst.kind = uint8(KindResource)
		setPtr(&dst.a, unsafe.Pointer(p))
		return nil
	}
	return fmt.Errorf("%w: unknown kind %d", ErrBadValue, v.kind)
}

func fillVals(ctx *C.wasmtime_context_t, vals []Val, dst *cval, alloc func(*C.mur_vec, C.size_t)) error {
	p := newVec(dst, len(vals), cvalSize, alloc)
	if p == nil {
		return nil
	}
	elems := unsafe.Slice((*cval)(p), len(vals))
	for i := range vals {
		if err := toC(ctx, &vals[i], &elems[i]); err != nil {
			return err
		}
	}
	return nil
}

// boxPayload moves a variant/option/result payload onto a wasmtime heap
// box; nil when there is no payload.
func boxPayload(ctx *C.wasmtime_context_t, v *Val) (*C.wasmtime_component_val_t, error) {
	if len(v.elems) == 0 {
		return nil, nil
	}
	var tmp cval
	err := toC(ctx, &v.elems[0], &tmp)
	return C.wasmtime_component_val_new(asC(&tmp)), err
}

func resourceToC(ctx *C.wasmtime_context_t, r *Resource) (*C.wasmtime_component_resource_any_t, error) {
	if !r.host {
		p := C.wasmtime_component_resource_any_clone((*C.wasmtime_component_resource_any_t)(r.anyp))
		runtime.KeepAlive(r)
		return p, nil
	}
	h := C.wasmtime_component_resource_host_new(C.bool(r.owned), C.uint32_t(r.rep), C.uint32_t(r.ty))
	defer C.wasmtime_component_resource_host_delete(h)
	var out *C.wasmtime_component_resource_any_t
	if err := takeError(C.wasmtime_component_resource_host_to_any(ctx, h, &out)); err != nil {
		return nil, fmt.Errorf("pass %s to wasm: %w", r, err)
	}
	return out, nil
}

// fromC reads a wasmtime value into Go. Resource handles are cloned, so
// the caller may delete p afterwards.
func fromC(p *cval) Val {
	k := Kind(p.kind)
	switch k {
	case KindBool:
		return Val{kind: k, n: p.a & 0xff}
	case KindS8, KindU8:
		return Val{kind: k, n: uint64(uint8(p.a))}
	case KindS16, KindU16:
		return Val{kind: k, n: uint64(uint16(p.a))}
	case KindS32, KindU32, KindF32, KindChar:
		return Val{kind: k, n: uint64(uint32(p.a))}
	case KindS64, KindU64, KindF64:
		return Val{kind: k, n: p.a}
	case KindString, KindEnum:
		return Val{kind: k, s: readName(&p.a)}
	case KindList, KindTuple:
		elems := cslice[cval](p)
		if k == KindList && len(elems) > 0 && elems[0].kind == uint8(KindU8) {
			b := make([]byte, len(elems))
			for i := range elems {
				b[i] = byte(elems[i].a)
			}
			return Val{kind: k, bytes: b}
		}
		out := Val{kind: k, elems: make([]Val, len(elems))}
		for i := range elems {
			out.elems[i] = fromC(&elems[i])
		}
		if k == KindList && out.elems == nil {
			out.elems = []Val{}
		}
		return out
	case KindRecord:
		entries := cslice[centry](p)
		out := Val{kind: k, elems: make([]Val, len(entries)), names: make([]string, len(entries))}
		for i := range entries {
			out.names[i] = readName(&entries[i].nameSize)
			out.elems[i] = fromC(&entries[i].val)
		}
		return out
	case KindFlags:
		names := cslice[[2]uint64](p)
		out := Val{kind: k, names: make([]string, len(names))}
		for i := range names {
			out.names[i] = readName(&names[i][0])
		}
		return out
	case KindVariant:
		return Val{kind: k, s: readName(&p.a), elems: unbox(&p.c)}
	case KindOption:
		if p.a == 0 {
			return Val{kind: k}
		}
		return Val{kind: k, n: 1, elems: unbox(&p.a)}
	case KindResult:
		return Val{kind: k, n: p.a & 0xff, elems: unbox(&p.b)}
	case KindResource:
		any := C.wasmtime_component_resource_any_clone((*C.wasmtime_component_resource_any_t)(ptrAt(&p.a)))
		r := &Resource{owned: bool(C.wasmtime_component_resource_any_owned(any)), anyp: unsafe.Pointer(any)}
		runtime.SetFinalizer(r, func(r *Resource) {
			C.wasmtime_component_resource_any_delete((*C.wasmtime_component_resource_any_t)(r.anyp))
		})
		return Val{kind: k, res: r}
	}
	// wasmtime 39 also has future, stream and error-context values, which
	// no WIT interface we host uses; they read as their kind alone.
	return Val{kind: k}
}

func unbox(ptr *uint64) []Val {
	if *ptr == 0 {
		return nil
	}
	return []Val{fromC((*cval)(ptrAt(ptr)))}
}

func hostHandle(ctx *C.wasmtime_context_t, v Val) (HostHandle, error) {
	if v.kind != KindResource || v.res == nil {
		return HostHandle{}, fmt.Errorf("%w: %s is not a resource", ErrBadValue, v.kind)
	}
	r := v.res
	if r.host {
		return HostHandle{Type: r.ty, Rep: r.rep, Owned: r.owned}, nil
	}
	var h *C.wasmtime_component_resource_host_t
	err := takeError(C.wasmtime_component_resource_any_to_host(ctx, (*C.wasmtime_component_resource_any_t)(r.anyp), &h))
	runtime.KeepAlive(r)
	if err != nil {
		return HostHandle{}, fmt.Errorf("%w: not a host resource: %w", ErrBadValue, err)
	}
	defer C.wasmtime_component_resource_host_delete(h)
	return HostHandle{
		Type:  ResourceType(C.wasmtime_component_resource_host_type(h)),
		Rep:   uint32(C.wasmtime_component_resource_host_rep(h)),
		Owned: bool(C.wasmtime_component_resource_host_owned(h)),
	}, nil
}

// cslice views the p.a values at p.b that a lifted list, tuple, record or
// flags value holds. An empty one is nil: wasmtime's empty vectors carry
// a dangling non-nil pointer (0x8), which the Go stack copier rejects as
// invalid when a frame holding it grows its stack.
func cslice[T any](p *cval) []T {
	if p.a == 0 {
		return nil
	}
	return unsafe.Slice((*T)(ptrAt(&p.b)), int(p.a))
}
