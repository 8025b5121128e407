//go:build wasip1

//lint:file-ignore U1000 the host calls these through //go:wasmexport

package tool

import "github.com/murmur/mur/sdk/go/internal/abi"

//go:wasmexport murmur:tool/run@0.1.0#run
func exportRun(dataDisc, dataPtr, dataLen, logDisc, logPtr, logLen uint32) uint32 {
	in := liftInput(abi.Mem, dataDisc, dataPtr, dataLen, logDisc, logPtr, logLen)
	abi.ResetArena()
	return lowerResult(abi.Mem, call(in))
}

//go:wasmexport cabi_post_murmur:tool/run@0.1.0#run
func postRun(uint32) { abi.Release() }
