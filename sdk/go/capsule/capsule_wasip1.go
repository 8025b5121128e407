//go:build wasip1

//lint:file-ignore U1000 the host calls exportRun through //go:wasmexport

package capsule

import (
	"unsafe"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

//go:wasmexport murmur:capsule/run@0.1.0#run
func exportRun() {
	abi.ResetArena()
	run()
}

//go:wasmimport murmur:tool-registry/invoke@0.1.0 invoke
func invoke(namePtr unsafe.Pointer, nameLen, dataDisc uint32, dataPtr unsafe.Pointer, dataLen, logDisc uint32, logPtr unsafe.Pointer, logLen uint32, ret unsafe.Pointer)

// Invoke calls the tool name of the capsule through
// murmur:tool-registry/invoke@0.1.0 with data as its JSON input. The
// error is an *InvokeError.
func Invoke(name, data string) (Result, error) {
	invoke(unsafe.Pointer(unsafe.StringData(name)), uint32(len(name)),
		1, unsafe.Pointer(unsafe.StringData(data)), uint32(len(data)),
		0, nil, 0, abi.RetArea())
	r, err := liftInvokeResult(abi.Mem, abi.RetAddr())
	abi.ResetArena()
	return r, err
}
