//go:build wasip1

package invoke

import (
	"unsafe"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

//go:wasmimport murmur:tool-registry/invoke@0.1.0 invoke
func invoke(namePtr unsafe.Pointer, nameLen, dataDisc uint32, dataPtr unsafe.Pointer, dataLen, logDisc uint32, logPtr unsafe.Pointer, logLen uint32, ret unsafe.Pointer)

// Call runs the capsule's tool name with the tool-input (data, log-path);
// nil is an absent option. ok is false for invoke's err, with its text.
func Call(name string, data, logPath *string) (r Result, errText string, ok bool) {
	var dataDisc, logDisc uint32
	var d, l string
	if data != nil {
		dataDisc, d = 1, *data
	}
	if logPath != nil {
		logDisc, l = 1, *logPath
	}
	invoke(unsafe.Pointer(unsafe.StringData(name)), uint32(len(name)),
		dataDisc, unsafe.Pointer(unsafe.StringData(d)), uint32(len(d)),
		logDisc, unsafe.Pointer(unsafe.StringData(l)), uint32(len(l)), abi.RetArea())
	r, errText, ok = Lift(abi.Mem, abi.RetAddr())
	abi.ResetArena()
	return r, errText, ok
}
