//go:build wasip1

package hook

import (
	"unsafe"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

//go:wasmimport murmur:task-io/read@0.1.0 current
func taskCurrent(ret unsafe.Pointer)

//go:wasmimport murmur:conversation/read@0.1.0 read-page
func readPage(ctxDisc uint32, ctxPtr unsafe.Pointer, ctxLen uint32, start uint64, limit uint32, ret unsafe.Pointer)

// CurrentTask reads the task in progress through murmur:task-io/read,
// granted by capabilities.task_io.read: true on the hook's capsule entry.
// The error is a *ReadError.
func CurrentTask() (TaskText, error) {
	taskCurrent(abi.RetArea())
	t, err := liftTaskResult(abi.Mem, abi.RetAddr())
	abi.ResetArena()
	return t, err
}

// ReadConversation reads at most limit messages from index start of the
// conversation record of contextID ("" for the task in progress) through
// murmur:conversation/read, granted by capabilities.conversation.read:
// true on the hook's capsule entry. The error is a *ReadError.
func ReadConversation(contextID string, start uint64, limit uint32) (Page, error) {
	var disc uint32
	if contextID != "" {
		disc = 1
	}
	readPage(disc, unsafe.Pointer(unsafe.StringData(contextID)), uint32(len(contextID)), start, limit, abi.RetArea())
	p, err := liftPageResult(abi.Mem, abi.RetAddr())
	abi.ResetArena()
	return p, err
}
