package hook

import "github.com/murmur/mur/sdk/go/inference"

// The hook's run-inference types are sdk/go/inference's: hooks and tool
// components make the same call.
type (
	// InferenceRequest is murmur:runtime/inference's inference-request.
	InferenceRequest = inference.Request
	// InferenceResponse is run-inference's answer.
	InferenceResponse = inference.Response
	// InferenceError is run-inference's err(string).
	InferenceError = inference.Error
)
