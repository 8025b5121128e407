package cm

import (
	"fmt"
	"unsafe"
)

// ResourceType names a host-defined resource type. The number is chosen by
// the host (one per resource kind it defines, e.g. one for
// wasi:io/streams.output-stream) and is never seen by the guest.
type ResourceType uint32

// Resource is a handle to a component-model resource: either one the host
// made from a rep (Own, Borrow) or one received from wasm. A handle
// received from wasm holds a wasmtime object that is freed by Close or by
// the garbage collector.
type Resource struct {
	owned bool
	host  bool
	rep   uint32
	ty    ResourceType
	anyp  unsafe.Pointer // *wasmtime_component_resource_any_t, received from wasm
}

// Own makes an own<T> handle for the host resource rep of type ty, to
// return to the guest; the guest's drop calls ty's destructor with rep.
func Own(ty ResourceType, rep uint32) Val {
	return ResourceVal(&Resource{owned: true, host: true, rep: rep, ty: ty})
}

// Borrow makes a borrow<T> handle for the host resource rep of type ty.
func Borrow(ty ResourceType, rep uint32) Val {
	return ResourceVal(&Resource{host: true, rep: rep, ty: ty})
}

// Owned reports whether the handle is an own (not a borrow).
func (r *Resource) Owned() bool { return r.owned }

func (r *Resource) String() string {
	if r == nil {
		return "resource(nil)"
	}
	kind := "borrow"
	if r.owned {
		kind = "own"
	}
	if r.host {
		return fmt.Sprintf("%s<host %d>(%d)", kind, r.ty, r.rep)
	}
	return kind + "<wasm>"
}

// HostHandle is a resource handle resolved to the host's view.
type HostHandle struct {
	Type  ResourceType
	Rep   uint32
	Owned bool
}
