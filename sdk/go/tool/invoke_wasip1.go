//go:build wasip1

package tool

import "github.com/murmur/mur/sdk/go/internal/invoke"

// Invoke calls another tool of the capsule by name through
// murmur:tool-registry/invoke@0.1.0, with in.Data as its JSON input:
//
//	r, err := tool.Invoke("file-go", tool.Input{Data: &input})
//
// The callee runs under its own grants, through the same checks and trace
// records as a call the model makes. The error is an *InvokeError.
func Invoke(name string, in Input) (Result, error) {
	r, errText, ok := invoke.Call(name, in.Data, in.LogPath)
	if !ok {
		return Result{}, &InvokeError{Msg: errText}
	}
	return Result(r), nil
}
