//go:build wasip1

package chunks

import (
	"fmt"
	"unsafe"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

//go:wasmimport murmur:text/chunks@0.1.0 emit
func emit(ptr unsafe.Pointer, n uint32, ret unsafe.Pointer)

// Emit hands text to the host as the next piece of the current call's
// output. An empty text is not sent.
func Emit(text string) error {
	if text == "" {
		return nil
	}
	emit(unsafe.Pointer(unsafe.StringData(text)), uint32(len(text)), abi.RetArea())
	msg, ok := abi.ResultUnitString(abi.Mem, abi.RetAddr())
	abi.ResetArena()
	if !ok {
		return fmt.Errorf("%w: %s", ErrClosed, msg)
	}
	return nil
}
