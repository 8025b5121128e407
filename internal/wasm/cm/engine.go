//go:build cgo

package cm

/*
#include "capi.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Engine compiles components and drives epoch interruption. It is safe for
// concurrent use; make one per process (or per configuration).
type Engine struct {
	ptr   *C.wasm_engine_t
	cfg   Config
	pace  *pacer
	stop  chan struct{}
	close sync.Once
}

// NewEngine makes an engine. Epoch interruption is always on: a goroutine
// advances the epoch every Config.EpochTick while guest code runs, so
// deadlines and cancellation can stop a running guest (see pacer).
func NewEngine(cfg Config) (*Engine, error) {
	conf := C.wasm_config_new()
	C.wasmtime_config_wasm_component_model_set(conf, true)
	C.wasmtime_config_epoch_interruption_set(conf, true)
	C.wasmtime_config_consume_fuel_set(conf, C.bool(cfg.Fuel))
	if cfg.MaxWasmStack > 0 {
		C.wasmtime_config_max_wasm_stack_set(conf, C.size_t(cfg.MaxWasmStack))
	}
	if cfg.ownMemory() {
		C.mur_use_memory_creator(conf)
	}
	if cfg.Pooling > 0 {
		pc := C.wasmtime_pooling_allocation_config_new()
		n := C.uint32_t(cfg.Pooling)
		C.wasmtime_pooling_allocation_config_total_component_instances_set(pc, n)
		// A component made by today's toolchains holds a handful of core
		// instances (guest, adapter, shims), each with a memory or table.
		C.wasmtime_pooling_allocation_config_total_core_instances_set(pc, n*8)
		C.wasmtime_pooling_allocation_config_total_memories_set(pc, n*4)
		C.wasmtime_pooling_allocation_config_total_tables_set(pc, n*8)
		C.wasmtime_pooling_allocation_config_total_stacks_set(pc, n)
		C.wasmtime_pooling_allocation_config_max_memory_size_set(pc, C.size_t(cfg.poolingMaxMemory()))
		C.wasmtime_pooling_allocation_strategy_set(conf, pc)
		C.wasmtime_pooling_allocation_config_delete(pc)
	}
	ptr := C.wasm_engine_new_with_config(conf) // takes ownership of conf
	if ptr == nil {
		return nil, fmt.Errorf("wasmtime refused the engine configuration %s", cfg.settingsKey())
	}
	e := &Engine{ptr: ptr, cfg: cfg, pace: newPacer(), stop: make(chan struct{})}
	// The ticker owns its own reference so it never keeps e reachable and
	// the finalizer can stop it.
	go tick(C.wasmtime_engine_clone(ptr), e.pace, cfg.tick(), e.stop)
	runtime.SetFinalizer(e, (*Engine).Close)
	return e, nil
}

func tick(ptr *C.wasm_engine_t, p *pacer, every time.Duration, stop chan struct{}) {
	defer C.wasm_engine_delete(ptr)
	p.run(every, func() { C.wasmtime_engine_increment_epoch(ptr) }, stop)
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Close stops the epoch ticker and releases the engine. Components and
// stores made from it keep their own references and stay usable.
func (e *Engine) Close() error {
	e.close.Do(func() {
		close(e.stop)
		C.wasm_engine_delete(e.ptr)
		runtime.SetFinalizer(e, nil)
	})
	return nil
}

func (e *Engine) cptr() (*C.wasm_engine_t, error) {
	select {
	case <-e.stop:
		return nil, fmt.Errorf("engine: %w", ErrClosed)
	default:
		return e.ptr, nil
	}
}
