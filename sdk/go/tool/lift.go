package tool

import "github.com/murmur/mur/sdk/go/internal/abi"

// tool-result in linear memory (align 4): status u8 @0, summary @4,
// data @16, data-path @28 (option<string>, 12 bytes each), truncated u8
// @40, metadata list @44.
const (
	resultSize  = 52
	resultAlign = 4
)

// liftInput lifts the six flat values of a tool-input argument.
func liftInput(m abi.Memory, dataDisc, dataPtr, dataLen, logDisc, logPtr, logLen uint32) Input {
	return Input{
		Data:    abi.OptString(m, dataDisc, dataPtr, dataLen),
		LogPath: abi.OptString(m, logDisc, logPtr, logLen),
	}
}

// lowerResult stores r in memory and returns its address, the export's
// single flat result.
func lowerResult(m abi.Memory, r Result) uint32 {
	p := m.Alloc(resultSize, resultAlign)
	abi.PutU8(m, p, uint8(r.Status))
	abi.PutOptString(m, p+4, r.Summary)
	abi.PutOptString(m, p+16, r.Data)
	abi.PutOptString(m, p+28, r.DataPath)
	if r.Truncated {
		abi.PutU8(m, p+40, 1)
	}
	abi.PutPairs(m, p+44, r.Metadata)
	return p
}

// call runs the registered handler. A handler that panics traps the
// instance, which the host reports as the call's failure.
func call(in Input) Result {
	if handler == nil {
		return Errorf("tool component registered no handler: call tool.Run from init")
	}
	return handler(in)
}
