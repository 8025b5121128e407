//go:build wasip1

package tool

import (
	"unsafe"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

//go:wasmimport murmur:tool-registry/invoke@0.1.0 invoke
func invoke(namePtr unsafe.Pointer, nameLen, dataDisc uint32, dataPtr unsafe.Pointer, dataLen, logDisc uint32, logPtr unsafe.Pointer, logLen uint32, ret unsafe.Pointer)

// Invoke calls another tool of the capsule by name through
// murmur:tool-registry/invoke@0.1.0, with in.Data as its JSON input:
//
//	r, err := tool.Invoke("file-go", tool.Input{Data: &input})
//
// The callee runs under its own grants, through the same checks and trace
// records as a call the model makes. The error is an *InvokeError.
func Invoke(name string, in Input) (Result, error) {
	var dataDisc, logDisc uint32
	var data, log string
	if in.Data != nil {
		dataDisc, data = 1, *in.Data
	}
	if in.LogPath != nil {
		logDisc, log = 1, *in.LogPath
	}
	invoke(unsafe.Pointer(unsafe.StringData(name)), uint32(len(name)),
		dataDisc, unsafe.Pointer(unsafe.StringData(data)), uint32(len(data)),
		logDisc, unsafe.Pointer(unsafe.StringData(log)), uint32(len(log)), abi.RetArea())
	r, err := liftInvokeResult(abi.Mem, abi.RetAddr())
	abi.ResetArena()
	return r, err
}
