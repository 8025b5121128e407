//go:build wasip1

package hook

import "github.com/murmur/mur/sdk/go/inference"

// RunInference makes one completion through the capsule's own inference
// driver (sdk/go/inference.Run): the same driver, gateway, spend
// ceilings, retries and trace as the agent's turns, with no fallback to
// another model. The time it takes counts against the hook call's
// deadline. The error is an *InferenceError.
func RunInference(req InferenceRequest) (InferenceResponse, error) { return inference.Run(req) }
