//go:build cgo

package cm

/*
#include "capi.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"
)

// cancelCheckTicks bounds how many epoch ticks pass between checks of the
// call's context, i.e. the cancellation latency in ticks.
const cancelCheckTicks = 10

// noDeadline is an epoch delta that never arrives.
const noDeadline = 1 << 62

// Store holds instances and their state. A store is used by one goroutine
// at a time; a second concurrent call fails instead of corrupting it.
type Store struct {
	*storeState
}

type storeState struct {
	ptr    *C.wasmtime_store_t
	ctx    *C.wasmtime_context_t
	engine *Engine
	limits Limits
	data   any
	acct   *C.mur_mem_account // memory budget, for engines with cm's memories

	busy sync.Mutex
	// Set for the duration of a call into wasm.
	callCtx   context.Context
	deadline  time.Time
	interrupt error // ErrDeadline or ErrCanceled, from the epoch callback
	hostErr   error // the first host function failure of the call
	closed    bool
}

// NewStore makes a store with the given limits. data is handed to host
// functions (Caller.Data) so they can find the policy of the store that
// called them.
func (e *Engine) NewStore(limits Limits, data any) (*Store, error) {
	ep, err := e.cptr()
	if err != nil {
		return nil, err
	}
	st := &storeState{engine: e, limits: limits, data: data}
	// The handle is released by wasmtime together with the store.
	st.ptr = C.mur_store_new(ep, C.uintptr_t(cgo.NewHandle(st)))
	st.ctx = C.wasmtime_store_context(st.ptr)
	perMemory := limit(limits.MemoryBytes)
	if e.cfg.ownMemory() {
		// cm's memories enforce the limit on their sum and record refusals.
		st.acct = (*C.mur_mem_account)(C.calloc(1, C.size_t(unsafe.Sizeof(C.mur_mem_account{}))))
		st.acct.limit = perMemory
		perMemory = -1
	}
	C.wasmtime_store_limiter(st.ptr, perMemory, limit(limits.TableElements), limit(limits.Instances), -1, -1)
	if e.cfg.Fuel {
		if err := takeError(C.wasmtime_context_set_fuel(st.ctx, C.uint64_t(limits.Fuel))); err != nil {
			C.wasmtime_store_delete(st.ptr)
			C.free(unsafe.Pointer(st.acct))
			return nil, fmt.Errorf("set fuel: %w", err)
		}
	}
	runtime.KeepAlive(e)
	s := &Store{st}
	runtime.SetFinalizer(s, (*Store).Close)
	return s, nil
}

func limit(n int64) C.int64_t {
	if n <= 0 {
		return -1
	}
	return C.int64_t(n)
}

// MemoryUsed returns the bytes of linear memory the store's instances hold
// (engines with cm's memories; -1 otherwise).
func (s *Store) MemoryUsed() int64 {
	if s.acct == nil {
		return -1
	}
	return int64(s.acct.used)
}

// Data returns the value given to NewStore.
func (s *Store) Data() any { return s.data }

// Fuel returns the fuel left when the engine counts fuel.
func (s *Store) Fuel() (uint64, error) {
	var f C.uint64_t
	if err := takeError(C.wasmtime_context_get_fuel(s.ctx, &f)); err != nil {
		return 0, fmt.Errorf("get fuel: %w", err)
	}
	return uint64(f), nil
}

// SetFuel refills the store's fuel.
func (s *Store) SetFuel(f uint64) error {
	if err := takeError(C.wasmtime_context_set_fuel(s.ctx, C.uint64_t(f))); err != nil {
		return fmt.Errorf("set fuel: %w", err)
	}
	return nil
}

// Close frees the store and everything instantiated in it.
func (s *Store) Close() error {
	s.busy.Lock()
	defer s.busy.Unlock()
	if !s.closed {
		s.closed = true
		C.wasmtime_store_delete(s.ptr)
		// After the store: deleting it frees the memories, which update
		// the account.
		C.free(unsafe.Pointer(s.acct))
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

// enter prepares the store for a call into wasm under ctx; leave undoes it.
func (st *storeState) enter(ctx context.Context) error {
	if !st.busy.TryLock() {
		return errors.New("store is in use by another call; a store serves one goroutine at a time")
	}
	if st.closed {
		st.busy.Unlock()
		return fmt.Errorf("store: %w", ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		st.busy.Unlock()
		return &TrapError{Kind: ErrCanceled, Msg: "context done before the call", Cause: err}
	}
	st.callCtx, st.interrupt, st.hostErr = ctx, nil, nil
	if st.acct != nil {
		st.acct.hit = 0
	}
	st.deadline = time.Time{}
	if st.limits.Deadline > 0 {
		st.deadline = time.Now().Add(st.limits.Deadline)
	}
	if d, ok := ctx.Deadline(); ok && (st.deadline.IsZero() || d.Before(st.deadline)) {
		st.deadline = d
	}
	C.wasmtime_context_set_epoch_deadline(st.ctx, C.uint64_t(st.nextCheck()))
	st.engine.pace.guestRuns()
	return nil
}

func (st *storeState) leave() {
	st.engine.pace.guestWaits()
	st.callCtx = nil
	st.busy.Unlock()
}

// nextCheck returns how many ticks may pass before the epoch callback must
// look at the deadline and the context again.
func (st *storeState) nextCheck() uint64 {
	ticks := uint64(noDeadline)
	if !st.deadline.IsZero() {
		tick := st.engine.cfg.tick()
		ticks = 1 // a deadline already passed: check at the next tick
		if left := time.Until(st.deadline); left > 0 {
			ticks = max(uint64((left+tick-1)/tick), 1)
		}
		// The epoch moves at the fast tick only while guest code runs
		// (pacer): time the guest spent waiting on the host passed with
		// few ticks, so a check is never further off than idleTick's worth
		// of fast ticks, and the wall clock decides in the callback.
		ticks = min(ticks, max(uint64(idleTick/tick), 1))
	}
	if st.callCtx != nil && st.callCtx.Done() != nil {
		ticks = min(ticks, cancelCheckTicks)
	}
	return ticks
}

// callError turns a failed call's wasmtime error into a TrapError saying
// what stopped the guest.
func (st *storeState) callError(e *C.wasmtime_error_t) error {
	defer C.wasmtime_error_delete(e)
	te := &TrapError{Frames: trapFrames(e)}
	switch {
	case st.interrupt != nil:
		te.Kind = st.interrupt
		if st.callCtx != nil && st.callCtx.Err() != nil {
			te.Cause = st.callCtx.Err()
		}
	case st.hostErr != nil:
		te.Kind, te.Cause = ErrHost, st.hostErr
		if errors.Is(st.hostErr, ErrHostPanic) {
			te.Kind = ErrHostPanic
		}
	default:
		te.Msg = trimBacktrace(errorMessage(e))
		te.Kind = classify(te.Msg)
		if st.acct != nil && st.acct.hit != 0 {
			// A refused growth returns -1 to the guest, which then
			// usually traps: the limit is the cause.
			te.Kind = ErrMemoryLimit
		}
	}
	return te
}

// Caller is what a host function sees of the store that called it. It is
// valid only until the host function returns.
type Caller struct {
	st  *storeState
	ctx *C.wasmtime_context_t
}

func callerFor(ctx *C.wasmtime_context_t) *Caller {
	st := cgo.Handle(C.mur_store_data(ctx)).Value().(*storeState)
	return &Caller{st: st, ctx: ctx}
}

// Context returns the context of the call into wasm that led here.
func (c *Caller) Context() context.Context {
	if c.st.callCtx == nil {
		return context.Background()
	}
	return c.st.callCtx
}

// Data returns the store's data (NewStore's data argument).
func (c *Caller) Data() any { return c.st.data }

// HostHandle resolves a resource value received from the guest to the
// host's (type, rep). An own handle is thereby taken over by the host,
// which then owns the resource's lifetime.
func (c *Caller) HostHandle(v Val) (HostHandle, error) {
	return hostHandle(c.ctx, v)
}

// DropResource drops a resource the guest handed over (an own of a
// guest-defined resource), running its destructor in the guest under ctx
// and the store's limits.
func (s *Store) DropResource(ctx context.Context, v Val) error {
	if v.kind != KindResource || v.res == nil || v.res.anyp == nil {
		return fmt.Errorf("%w: not a resource received from wasm", ErrBadValue)
	}
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave()
	cerr := C.wasmtime_component_resource_any_drop(s.ctx, (*C.wasmtime_component_resource_any_t)(v.res.anyp))
	debugGC()
	runtime.KeepAlive(v.res)
	if cerr != nil {
		return fmt.Errorf("drop resource: %w", s.callError(cerr))
	}
	return nil
}
