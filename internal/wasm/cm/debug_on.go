//go:build cgo && debug

package cm

import "runtime"

// debugGC collects after every call into wasmtime so a Go object freed too
// early (a missing KeepAlive) fails loudly in tests run with -tags debug.
func debugGC() { runtime.GC() }
