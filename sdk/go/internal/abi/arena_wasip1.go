//go:build wasip1

package abi

import (
	"encoding/binary"
	"unsafe"
)

// arenaSize bounds what one call can receive: every string and list the
// host lowers into the guest (a call's arguments, an import's results) and
// the WASI adapter's state and stack live here until the SDK copies them
// into Go memory. A call whose arguments exceed it traps.
const arenaSize = 32 << 20

// arena is the static memory the post-link step (tools/wasmlink) hands to
// its `cabi_realloc`. The marker and header are non-zero so the Go linker
// emits them in a data segment where wasmlink can find them; wasmlink then
// writes next and mark (offsets 20 and 24). Go never moves or scans it.
var arena = [arenaSize]byte{
	'm', 'u', 'r', '-', 'a', 'r', 'e', 'n', 'a', '-', 'v', '1', 0xfe, 0xed, 0xfa, 0xce,
	16: arenaSize & 0xff, 17: arenaSize >> 8 & 0xff, 18: arenaSize >> 16 & 0xff, 19: arenaSize >> 24 & 0xff,
	20: 0xff, 21: 0xff, 22: 0xff, 23: 0xff, 24: 0xff, 25: 0xff, 26: 0xff, 27: 0xff,
	28: 0xff, 29: 0xff, 30: 0xff, 31: 0xff,
}

func init() {
	// Everything allocated so far (the adapter's state and stack, during
	// runtime start-up) is permanent: calls reset to here.
	binary.LittleEndian.PutUint32(arena[24:], binary.LittleEndian.Uint32(arena[20:]))
}

// ResetArena frees every arena allocation made since start-up. The glue
// calls it once a call's arguments or an import's results are copied out.
func ResetArena() {
	copy(arena[20:24], arena[24:28])
}

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
