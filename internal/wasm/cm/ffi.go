//go:build cgo

package cm

// The static libwasmtime.a lives in the wasmtime-go module; importing that
// package for its side effect puts its "#cgo LDFLAGS: -L<module>/build/<os-arch>
// -lwasmtime -lm -ldl -pthread" on the final link, so a clean machine needs
// only "go mod download". See docs/wasm.md.

/*
#include "capi.h"

extern wasmtime_error_t *goHostFunc(uintptr_t, wasmtime_context_t *, wasmtime_component_val_t *, size_t,
                                    wasmtime_component_val_t *, size_t);
extern wasmtime_error_t *goResourceDtor(uintptr_t, wasmtime_context_t *, uint32_t);
extern wasmtime_error_t *goEpochDeadline(wasmtime_context_t *, uintptr_t, uint64_t *);
extern void goRelease(uintptr_t);

wasmtime_error_t *mur_host_func(void *data, wasmtime_context_t *ctx,
                                       const wasmtime_component_func_type_t *ty, wasmtime_component_val_t *args,
                                       size_t nargs, wasmtime_component_val_t *results, size_t nresults) {
  (void)ty;
  return goHostFunc((uintptr_t)data, ctx, args, nargs, results, nresults);
}

wasmtime_error_t *mur_resource_dtor(void *data, wasmtime_context_t *ctx, uint32_t rep) {
  return goResourceDtor((uintptr_t)data, ctx, rep);
}

wasmtime_error_t *mur_epoch_deadline(wasmtime_context_t *ctx, void *data, uint64_t *delta,
                                            wasmtime_update_deadline_kind_t *kind) {
  (void)data;
  *kind = 0; // continue
  return goEpochDeadline(ctx, (uintptr_t)wasmtime_context_get_data(ctx), delta);
}

void mur_release(void *data) { goRelease((uintptr_t)data); }

wasmtime_error_t *mur_add_func(wasmtime_component_linker_instance_t *li, const char *name, size_t len,
                                      uintptr_t data) {
  return wasmtime_component_linker_instance_add_func(li, name, len, mur_host_func, (void *)data, mur_release);
}

wasmtime_error_t *mur_add_resource(wasmtime_component_linker_instance_t *li, const char *name, size_t len,
                                          uint32_t ty, uintptr_t data) {
  wasmtime_component_resource_type_t *rt = wasmtime_component_resource_type_new_host(ty);
  wasmtime_error_t *err =
      wasmtime_component_linker_instance_add_resource(li, name, len, rt, mur_resource_dtor, (void *)data, mur_release);
  wasmtime_component_resource_type_delete(rt);
  return err;
}

// The store's data is a cgo.Handle of its Go state, released with the
// store; host callbacks and the epoch callback find the state through it.
wasmtime_store_t *mur_store_new(wasm_engine_t *engine, uintptr_t data) {
  wasmtime_store_t *s = wasmtime_store_new(engine, (void *)data, mur_release);
  wasmtime_store_epoch_deadline_callback(s, mur_epoch_deadline, NULL, NULL);
  return s;
}

uintptr_t mur_store_data(const wasmtime_context_t *ctx) {
  return (uintptr_t)wasmtime_context_get_data(ctx);
}

size_t mur_sizeof_val(void) { return sizeof(wasmtime_component_val_t); }
size_t mur_sizeof_entry(void) { return sizeof(wasmtime_component_valrecord_entry_t); }
size_t mur_sizeof_item(void) { return sizeof(wasmtime_component_item_t); }
*/
import "C"

import (
	"errors"
	"unsafe"

	_ "github.com/bytecodealliance/wasmtime-go/v39" // links libwasmtime.a; see above
)

// wasmtimeVersion is part of every compile-cache key: a cached artifact is
// only valid for the wasmtime that produced it.
const wasmtimeVersion = "wasmtime-39.0.1"

// takeError turns an owned wasmtime error into a Go error (nil for nil),
// deleting the C object.
func takeError(e *C.wasmtime_error_t) error {
	if e == nil {
		return nil
	}
	defer C.wasmtime_error_delete(e)
	return errors.New(errorMessage(e))
}

func errorMessage(e *C.wasmtime_error_t) string {
	var msg C.wasm_name_t
	C.wasmtime_error_message(e, &msg)
	defer C.wasm_byte_vec_delete(&msg)
	return nameString(&msg)
}

// trapFrames reads the wasm backtrace of an error.
func trapFrames(e *C.wasmtime_error_t) []Frame {
	var fv C.wasm_frame_vec_t
	C.wasmtime_error_wasm_trace(e, &fv)
	defer C.wasm_frame_vec_delete(&fv)
	if fv.size == 0 {
		return nil
	}
	frames := unsafe.Slice(fv.data, fv.size)
	out := make([]Frame, len(frames))
	for i, f := range frames {
		out[i].Index = uint32(C.wasm_frame_func_index(f))
		if n := C.wasmtime_frame_func_name(f); n != nil {
			out[i].Func = nameString(n)
		}
		if n := C.wasmtime_frame_module_name(f); n != nil {
			out[i].Module = nameString(n)
		}
	}
	return out
}

func nameString(n *C.wasm_name_t) string {
	if n.size == 0 {
		return ""
	}
	return C.GoStringN(n.data, C.int(n.size))
}

// newCError makes a wasmtime error for returning from a callback.
func newCError(msg string) *C.wasmtime_error_t {
	cs := C.CString(msg)
	defer C.free(unsafe.Pointer(cs))
	return C.wasmtime_error_new(cs)
}

// strPtr returns a C view of a Go string for the duration of one C call;
// the caller keeps s alive (runtime.KeepAlive) until the call returns.
func strPtr(s string) (*C.char, C.size_t) {
	if len(s) == 0 {
		return nil, 0
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s))), C.size_t(len(s))
}

// cSizeofVal and friends report the C layout sizes for TestABILayout
// (test files cannot use cgo).
func cSizeofVal() int   { return int(C.mur_sizeof_val()) }
func cSizeofEntry() int { return int(C.mur_sizeof_entry()) }
func cSizeofItem() int  { return int(C.mur_sizeof_item()) }
