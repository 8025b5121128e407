//go:build wasip1

package inference

import (
	"unsafe"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

//go:wasmimport murmur:runtime/inference@0.2.0 run-inference
func runInference(msgPtr, msgLen, sysDisc uint32, sysPtr unsafe.Pointer, sysLen, modelDisc uint32, modelPtr unsafe.Pointer, modelLen uint32, ret unsafe.Pointer)

// Run makes one completion through the capsule's inference driver. The
// error is an *Error.
func Run(req Request) (Response, error) {
	mp, mn := lowerMessages(abi.Mem, req.Messages)
	var sysDisc, modelDisc uint32
	var sys, model string
	if req.SystemPrompt != nil {
		sysDisc, sys = 1, *req.SystemPrompt
	}
	if req.Model != nil {
		modelDisc, model = 1, *req.Model
	}
	runInference(mp, mn, sysDisc, unsafe.Pointer(unsafe.StringData(sys)), uint32(len(sys)),
		modelDisc, unsafe.Pointer(unsafe.StringData(model)), uint32(len(model)), abi.RetArea())
	r, err := liftResult(abi.Mem, abi.RetAddr())
	abi.ResetArena()
	return r, err
}
