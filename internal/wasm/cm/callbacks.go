//go:build cgo

package cm

// Every function C calls back into lives here: a file with //export may
// only declare C, so the trampolines are defined in ffi.go.

/*
#include "capi.h"
*/
import "C"

import (
	"context"
	"fmt"
	"runtime/cgo"
	"time"
	"unsafe"

	"github.com/murmur/mur/internal/wasm/rewrite"
)

//export goRelease
func goRelease(h C.uintptr_t) { cgo.Handle(h).Delete() }

//export goEpochDeadline
func goEpochDeadline(_ *C.wasmtime_context_t, h C.uintptr_t, delta *C.uint64_t) (cerr *C.wasmtime_error_t) {
	defer func() {
		// A panic must not unwind through wasmtime's frames: stop the guest.
		if r := recover(); r != nil {
			cerr = newCError(fmt.Sprintf("epoch callback panicked: %v", r))
		}
	}()
	st := cgo.Handle(h).Value().(*storeState)
	ctx := st.callCtx
	if ctx == nil { // wasm running outside enter/leave: only the deadline applies
		ctx = context.Background()
	}
	deadlinePassed := !st.deadline.IsZero() && !time.Now().Before(st.deadline)
	if deadlinePassed || ctx.Err() == context.DeadlineExceeded {
		st.interrupt = ErrDeadline
		return newCError(ErrDeadline.Error())
	}
	if err := ctx.Err(); err != nil {
		st.interrupt = ErrCanceled
		return newCError("call canceled: " + err.Error())
	}
	*delta = C.uint64_t(st.nextCheck())
	return nil
}

//export goHostFunc
func goHostFunc(h C.uintptr_t, ctx *C.wasmtime_context_t, args *C.wasmtime_component_val_t, nargs C.size_t,
	results *C.wasmtime_component_val_t, nresults C.size_t) (cerr *C.wasmtime_error_t) {
	hf := cgo.Handle(h).Value().(*hostFunc)
	c := callerFor(ctx)
	// The guest waits while the host works: the epoch need not advance
	// for it (pacer; nextCheck bounds how stale that leaves a deadline).
	c.st.engine.pace.guestWaits()
	defer c.st.engine.pace.guestRuns()
	defer func() {
		if r := recover(); r != nil {
			cerr = c.fail(fmt.Errorf("%w: %s: %v", ErrHostPanic, hf.name, r))
		}
	}()
	in := make([]Val, int(nargs))
	for i, a := range unsafe.Slice((*cval)(unsafe.Pointer(args)), int(nargs)) {
		in[i] = fromC(&a)
		if hf.streams != rewrite.Slow {
			in[i] = bytesFromLatin1(in[i])
		}
	}
	out, err := hf.fn(c, in)
	if err != nil {
		return c.fail(fmt.Errorf("%s: %w", hf.name, err))
	}
	if nresults == 0 {
		return nil
	}
	if err := out.check(); err != nil {
		return c.fail(fmt.Errorf("%s returned a bad value: %w", hf.name, err))
	}
	switch hf.streams {
	case rewrite.ReadWrite:
		out = bytesToStrings(out, rewrite.Latin1Encode) // valid UTF-8 by construction
	case rewrite.Shim:
		out = bytesToStrings(out, rewrite.ShimString) // likewise
	}
	dst := (*cval)(unsafe.Pointer(results))
	if err := toC(ctx, &out, dst); err != nil {
		return c.fail(fmt.Errorf("%s result: %w", hf.name, err))
	}
	return nil
}

//export goResourceDtor
func goResourceDtor(h C.uintptr_t, ctx *C.wasmtime_context_t, rep C.uint32_t) (cerr *C.wasmtime_error_t) {
	hr := cgo.Handle(h).Value().(*hostResource)
	c := callerFor(ctx)
	defer func() {
		if r := recover(); r != nil {
			cerr = c.fail(fmt.Errorf("%w: destructor of %s: %v", ErrHostPanic, hr.name, r))
		}
	}()
	if hr.dtor == nil {
		return nil
	}
	if err := hr.dtor(c, uint32(rep)); err != nil {
		return c.fail(fmt.Errorf("destructor of %s: %w", hr.name, err))
	}
	return nil
}

// fail records a host failure for the call's error and makes the trap
// that unwinds the guest.
func (c *Caller) fail(err error) *C.wasmtime_error_t {
	if c.st.hostErr == nil {
		c.st.hostErr = err
	}
	return newCError(err.Error())
}
