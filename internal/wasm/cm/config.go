package cm

import (
	"fmt"
	"time"
)

// Config configures an Engine. The zero Config is usable: epoch
// interruption on with a 1 ms tick, no fuel, on-demand allocation, no cache.
type Config struct {
	// Fuel makes every store count instructions; a store then needs fuel
	// (Limits.Fuel) to run anything.
	Fuel bool
	// EpochTick is the wall-clock granularity of deadlines and cancellation.
	// Zero means 1 ms.
	EpochTick time.Duration
	// MaxWasmStack bounds the wasm stack in bytes; zero keeps wasmtime's
	// default (512 KiB).
	MaxWasmStack int
	// Pooling pre-reserves slots for this many concurrent component
	// instances (the pooling allocator); zero allocates on demand. It pays
	// off when many short-lived instances are made (see docs/wasm.md).
	Pooling int
	// PoolingMaxMemory bounds each linear memory in pooling mode; zero
	// means 64 MiB.
	PoolingMaxMemory int64
	// AccountMemory makes cm create the linear memories instead of
	// wasmtime: Limits.MemoryBytes then covers all of a store's memories
	// together, and a growth it refuses is reported as ErrMemoryLimit.
	// The price is copy-on-write initialisation: data segments are copied
	// at every instantiation (a JS guest instantiates ~8x slower; see
	// docs/wasm.md). Ignored by pooling engines.
	AccountMemory bool
	// SlowStreams turns off the wasi:io/streams byte fast path (see
	// rewrite.go); for comparison and as an escape hatch.
	SlowStreams bool
	// CacheDir, when set, keeps compiled components there, keyed by
	// component digest, wasmtime version and the settings above.
	CacheDir string
}

func (c Config) tick() time.Duration {
	if c.EpochTick <= 0 {
		return time.Millisecond
	}
	return c.EpochTick
}

// ownMemory reports whether cm creates the engine's linear memories.
func (c Config) ownMemory() bool { return c.Pooling == 0 && c.AccountMemory }

func (c Config) poolingMaxMemory() int64 {
	if c.PoolingMaxMemory <= 0 {
		return 64 << 20
	}
	return c.PoolingMaxMemory
}

// settingsKey names every setting that changes compiled code, for the
// compile-cache key.
func (c Config) settingsKey() string {
	return fmt.Sprintf("fuel=%t,stack=%d,pool=%t,poolmem=%d,epoch=1,slowstreams=%t,ownmem=%t", c.Fuel,
		c.MaxWasmStack, c.Pooling > 0, c.poolingMaxMemory(), c.SlowStreams, c.ownMemory())
}

// Limits bound what one store may use. Zero fields mean "no limit".
type Limits struct {
	// MemoryBytes caps the store's linear memories in bytes: each one
	// (wasmtime's limiter), or all of them together with
	// Config.AccountMemory.
	MemoryBytes int64
	// TableElements caps each table's element count.
	TableElements int64
	// Instances caps the number of core and component instances.
	Instances int64
	// Deadline is the wall-clock budget of each call or instantiation
	// (epoch interruption); the call's context deadline applies too.
	Deadline time.Duration
	// Fuel is the store's fuel when the engine counts fuel.
	Fuel uint64
}
