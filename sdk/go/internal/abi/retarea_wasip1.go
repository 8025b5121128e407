//go:build wasip1

package abi

import "unsafe"

// retArea is where imports whose results do not fit one flat value write
// them. It is a global, so it never moves while the host writes to it; the
// guest is single-threaded, so one is enough.
var retArea [64]uint64

// RetArea returns the return area's address for an import call.
func RetArea() unsafe.Pointer { clear(retArea[:]); return unsafe.Pointer(&retArea[0]) }

// RetAddr returns the return area's linear-memory address.
func RetAddr() uint32 { return uint32(uintptr(unsafe.Pointer(&retArea[0]))) }
