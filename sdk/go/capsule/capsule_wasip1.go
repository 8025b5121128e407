//go:build wasip1

//lint:file-ignore U1000 the host calls exportRun through //go:wasmexport

package capsule

import (
	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/invoke"
)

//go:wasmexport murmur:capsule/run@0.1.0#run
func exportRun() {
	abi.ResetArena()
	run()
}

// Invoke calls the tool name of the capsule through
// murmur:tool-registry/invoke@0.1.0 with data as its JSON input. The
// error is an *InvokeError.
func Invoke(name, data string) (Result, error) {
	r, errText, ok := invoke.Call(name, &data, nil)
	if !ok {
		return Result{}, &InvokeError{Msg: errText}
	}
	return Result(r), nil
}
