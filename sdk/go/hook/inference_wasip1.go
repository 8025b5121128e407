//go:build wasip1

package hook

import (
	"unsafe"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

//go:wasmimport murmur:runtime/inference@0.2.0 run-inference
func runInference(msgPtr, msgLen, sysDisc uint32, sysPtr unsafe.Pointer, sysLen, modelDisc uint32, modelPtr unsafe.Pointer, modelLen uint32, ret unsafe.Pointer)

// RunInference makes one completion through the capsule's own inference
// driver (murmur:runtime/inference@0.2.0): the same driver, gateway,
// spend ceilings, retries and trace as the agent's turns, with no
// fallback to another model. The time it takes counts against the hook
// call's deadline. The error is an *InferenceError.
func RunInference(req InferenceRequest) (InferenceResponse, error) {
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
	r, err := liftInferenceResult(abi.Mem, abi.RetAddr())
	abi.ResetArena()
	return r, err
}
