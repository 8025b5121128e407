//go:build cgo

package cm

// The static libwasmtime.a lives in the wasmtime-go module; importing that
// package for its side effect puts its "#cgo LDFLAGS: -L<module>/build/<os-arch>
// -lwasmtime -lm -ldl -pthread" on the final link, so a clean machine needs
// only "go mod download". See docs/wasm.md.

/*
#include "capi.h"
#include <sys/mman.h>

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

// Linear memories made by us rather than wasmtime, so a store's memory
// limit covers all its memories together and a refused growth is known to
// the host (wasmtime's own limiter only makes memory.grow return -1).
// Each memory reserves its whole address range PROT_NONE up front and
// never moves; growing makes more of it read-write.
static __thread mur_mem_account *mur_current_account;

typedef struct mur_mem {
  uint8_t *base;
  size_t size, reserve, guard;
  mur_mem_account *acct;
} mur_mem;

static uint8_t *mur_mem_get(void *env, size_t *size, size_t *cap) {
  mur_mem *m = env;
  *size = m->size;
  *cap = m->reserve;
  return m->base;
}

static int mur_mem_over(mur_mem_account *a, size_t more) {
  if (a == NULL || a->limit < 0 || a->used + (int64_t)more <= a->limit) return 0;
  a->hit = 1;
  return 1;
}

static wasmtime_error_t *mur_mem_grow(void *env, size_t new_size) {
  mur_mem *m = env;
  if (new_size <= m->size) return NULL;
  if (new_size > m->reserve) return wasmtime_error_new("linear memory reservation exhausted");
  size_t more = new_size - m->size;
  if (mur_mem_over(m->acct, more)) return wasmtime_error_new("memory limit exceeded");
  if (mprotect(m->base + m->size, more, PROT_READ | PROT_WRITE) != 0) return wasmtime_error_new("mprotect failed");
  if (m->acct) m->acct->used += more;
  m->size = new_size;
  return NULL;
}

static void mur_mem_free(void *env) {
  mur_mem *m = env;
  munmap(m->base, m->reserve + m->guard);
  if (m->acct) m->acct->used -= m->size;
  free(m);
}

static wasmtime_error_t *mur_new_memory(void *env, const wasm_memorytype_t *ty, size_t minimum, size_t maximum,
                                        size_t reserved, size_t guard, wasmtime_linear_memory_t *out) {
  (void)env;
  (void)ty;
  size_t reserve = reserved;
  if (reserve == 0) reserve = maximum < ((size_t)4 << 30) ? maximum : ((size_t)4 << 30);
  if (minimum > reserve) return wasmtime_error_new("linear memory minimum exceeds its reservation");
  mur_mem_account *acct = mur_current_account;
  if (mur_mem_over(acct, minimum)) return wasmtime_error_new("memory limit exceeded by a memory's minimum size");
  void *p = mmap(NULL, reserve + guard, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return wasmtime_error_new("mmap of a linear memory failed");
  if (minimum > 0 && mprotect(p, minimum, PROT_READ | PROT_WRITE) != 0) {
    munmap(p, reserve + guard);
    return wasmtime_error_new("mprotect failed");
  }
  mur_mem *m = calloc(1, sizeof *m);
  m->base = p;
  m->size = minimum;
  m->reserve = reserve;
  m->guard = guard;
  m->acct = acct;
  if (acct) acct->used += minimum;
  out->env = m;
  out->get_memory = mur_mem_get;
  out->grow_memory = mur_mem_grow;
  out->finalizer = mur_mem_free;
  return NULL;
}

void mur_use_memory_creator(wasm_config_t *config) {
  wasmtime_memory_creator_t c = {NULL, mur_new_memory, NULL};
  wasmtime_config_host_memory_creator_set(config, &c);
  // Copy-on-write images need wasmtime's own mmap memories; data segments
  // are copied in instead.
  wasmtime_config_memory_init_cow_set(config, false);
}

// mur_instantiate runs one instantiation with acct as the account of the
// memories it creates; one C call, so one thread.
wasmtime_error_t *mur_instantiate(mur_mem_account *acct, const wasmtime_component_linker_t *l,
                                  wasmtime_context_t *ctx, const wasmtime_component_t *c,
                                  wasmtime_component_instance_t *out) {
  mur_current_account = acct;
  wasmtime_error_t *err = wasmtime_component_linker_instantiate(l, ctx, c, out);
  mur_current_account = NULL;
  return err;
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
