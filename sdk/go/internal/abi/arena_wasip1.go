//go:build wasip1

package abi

import "unsafe"

// arenaSize bounds what one call can receive: every string and list the
// host lowers into the guest (a call's arguments, an import's results) and
// the WASI adapter's state and stack live here until the SDK copies them
// into Go memory. A call whose arguments exceed it traps.
const arenaSize = 32 << 20

// arena is the static memory the post-link step (tools/wasmlink) hands to
// its `cabi_realloc`. It is zero-initialized (bss), so it costs no bytes
// in the module; Go never moves or scans it.
var arena [arenaSize]byte

// arenaDesc tells wasmlink where the arena is: the linker writes &arena
// into it statically, and its marker and non-zero filler keep it in one
// data segment that wasmlink can find. wasmlink sets next and mark to the
// arena's base; its allocator bumps next.
type arenaDescriptor struct {
	magic      [16]byte
	size       uint32
	next, mark uint32
	_          uint32
	base       *[arenaSize]byte
	// guard keeps base's high zero bytes from ending the data segment
	// early, which would cut the descriptor.
	guard uint64
}

var arenaDesc = arenaDescriptor{
	magic: [16]byte{'m', 'u', 'r', '-', 'a', 'r', 'e', 'n', 'a', '-', 'v', '2', 0xfe, 0xed, 0xfa, 0xce},
	size:  arenaSize,
	next:  0xffffffff,
	mark:  0xffffffff,
	base:  &arena,
	guard: ^uint64(0),
}

func init() {
	// Everything allocated so far (the adapter's state and stack, during
	// runtime start-up) is permanent: calls reset to here.
	arenaDesc.mark = arenaDesc.next
}

// ResetArena frees every arena allocation made since start-up. The glue
// calls it once a call's arguments or an import's results are copied out.
func ResetArena() { arenaDesc.next = arenaDesc.mark }

type wasmMemory struct{ pinned [][]byte }

// Mem is the guest's own linear memory.
var Mem = &wasmMemory{}

func (*wasmMemory) Bytes(ptr, n uint32) []byte {
	if n == 0 {
		return nil
	}
	// Linear memory addresses are Go addresses in a wasm guest.
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), uintptr(ptr))), n)
}

// Alloc takes the memory from the Go heap, which never moves it, and keeps
// it referenced until Release.
func (m *wasmMemory) Alloc(size, align uint32) uint32 {
	b := make([]byte, size+align)
	m.pinned = append(m.pinned, b)
	p := uint32(uintptr(unsafe.Pointer(&b[0])))
	return (p + align - 1) &^ (align - 1)
}

// Release drops what the last call lowered for the host; the glue calls it
// from the export's post-return.
func Release() { Mem.pinned = nil }
