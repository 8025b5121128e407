//go:build wasip1

package task

import (
	"unsafe"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

//go:wasmimport murmur:task/task@0.1.0 request-input
func requestInput(ptr unsafe.Pointer, n uint32, ret unsafe.Pointer)

// RequestInput suspends the agent loop until a message/send delivers the
// reply to prompt, and returns the reply's text.
func RequestInput(prompt string) string {
	requestInput(unsafe.Pointer(unsafe.StringData(prompt)), uint32(len(prompt)), abi.RetArea())
	reply := abi.GetString(abi.Mem, abi.RetAddr())
	abi.ResetArena()
	return reply
}
