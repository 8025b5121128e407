//go:build !cgo

package cm

import "context"

// Without cgo there is no wasmtime: the API compiles so the rest of mur
// builds, and every constructor returns ErrNoCgo.

// Engine is unavailable without cgo.
type Engine struct{}

// NewEngine returns ErrNoCgo.
func NewEngine(Config) (*Engine, error) { return nil, ErrNoCgo }

// Wat2Wasm returns ErrNoCgo.
func Wat2Wasm(string) ([]byte, error) { return nil, ErrNoCgo }

// Config returns the zero Config.
func (*Engine) Config() Config { return Config{} }

// Close does nothing.
func (*Engine) Close() error { return nil }

// Compile returns ErrNoCgo.
func (*Engine) Compile([]byte) (*Component, error) { return nil, ErrNoCgo }

// Cached reports false: there is no compile cache without cgo.
func (*Engine) Cached([32]byte) bool { return false }

// CompileFrom returns ErrNoCgo.
func (*Engine) CompileFrom([32]byte, func() ([]byte, error)) (*Component, error) {
	return nil, ErrNoCgo
}

// CompileText returns ErrNoCgo.
func (*Engine) CompileText(string) (*Component, error) { return nil, ErrNoCgo }

// Deserialize returns ErrNoCgo.
func (*Engine) Deserialize([]byte) (*Component, error) { return nil, ErrNoCgo }

// DeserializeFile returns ErrNoCgo.
func (*Engine) DeserializeFile(string) (*Component, error) { return nil, ErrNoCgo }

// NewStore returns ErrNoCgo.
func (*Engine) NewStore(Limits, any) (*Store, error) { return nil, ErrNoCgo }

// NewLinker returns a linker whose Instantiate returns ErrNoCgo.
func (*Engine) NewLinker() *Linker { return &Linker{} }

// Component is unavailable without cgo.
type Component struct{}

// Import is one top-level import of a component.
type Import struct {
	Name      string
	Instance  bool
	Func      bool
	Resource  bool
	Funcs     []string
	Resources []string
}

// Serialize returns ErrNoCgo.
func (*Component) Serialize() ([]byte, error) { return nil, ErrNoCgo }

// Close does nothing.
func (*Component) Close() error { return nil }

// Imports returns nothing.
func (*Component) Imports() []Import { return nil }

// Exports returns nothing.
func (*Component) Exports() []Import { return nil }

// Store is unavailable without cgo.
type Store struct{}

// Data returns nil.
func (*Store) Data() any { return nil }

// MemoryUsed returns -1.
func (*Store) MemoryUsed() int64 { return -1 }

// Fuel returns ErrNoCgo.
func (*Store) Fuel() (uint64, error) { return 0, ErrNoCgo }

// SetFuel returns ErrNoCgo.
func (*Store) SetFuel(uint64) error { return ErrNoCgo }

// Close does nothing.
func (*Store) Close() error { return nil }

// DropResource returns ErrNoCgo.
func (*Store) DropResource(context.Context, Val) error { return ErrNoCgo }

// Caller is what a host function sees of the store that called it.
type Caller struct{}

// Context returns context.Background.
func (*Caller) Context() context.Context { return context.Background() }

// Data returns nil.
func (*Caller) Data() any { return nil }

// HostHandle returns ErrNoCgo.
func (*Caller) HostHandle(Val) (HostHandle, error) { return HostHandle{}, ErrNoCgo }

// HostFunc implements an imported function.
type HostFunc func(c *Caller, args []Val) (Val, error)

// ResourceDtor runs when the guest drops a host resource.
type ResourceDtor func(c *Caller, rep uint32) error

// Linker records nothing without cgo.
type Linker struct{}

// Func does nothing.
func (*Linker) Func([]string, string, HostFunc) {}

// Resource does nothing.
func (*Linker) Resource([]string, string, ResourceType, ResourceDtor) {}

// Close does nothing.
func (*Linker) Close() error { return nil }

// Instance does nothing without cgo.
func (*Linker) Instance([]string) {}

// Instances lists nothing without cgo.
func (*Linker) Instances() []string { return nil }

// Instantiate returns ErrNoCgo.
func (*Linker) Instantiate(context.Context, *Store, *Component) (*Instance, error) {
	return nil, ErrNoCgo
}

// Instance is unavailable without cgo.
type Instance struct{}

// Func returns ErrNoCgo.
func (*Instance) Func(...string) (*Func, error) { return nil, ErrNoCgo }

// Func is unavailable without cgo.
type Func struct{}

// Call returns ErrNoCgo.
func (*Func) Call(context.Context, ...Val) (Val, error) { return Val{}, ErrNoCgo }
