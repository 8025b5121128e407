package tool

import "github.com/murmur/mur/sdk/go/internal/abi"

// InvokeError is the err of murmur:tool-registry/invoke: the call could
// not be made at all (no task in progress, a tool already on the call
// chain, input that is not JSON). A tool that ran and failed is a Result.
type InvokeError struct{ Msg string }

func (e *InvokeError) Error() string { return "tool-registry/invoke: " + e.Msg }

// liftInvokeResult lifts the result<tool-result, string> invoke stores at
// addr: the discriminant at 0, the payload at 4.
func liftInvokeResult(m abi.Memory, addr uint32) (Result, error) {
	if abi.U8(m, addr) != 0 {
		return Result{}, &InvokeError{Msg: abi.GetString(m, addr+4)}
	}
	p := addr + 4
	r := Result{
		Status:    Status(abi.U8(m, p)),
		Summary:   abi.GetOptString(m, p+4),
		Data:      abi.GetOptString(m, p+16),
		DataPath:  abi.GetOptString(m, p+28),
		Truncated: abi.U8(m, p+40) != 0,
	}
	if n := abi.U32(m, p+48); n > 0 {
		r.Metadata = abi.Pairs(m, abi.U32(m, p+44), n)
	}
	return r, nil
}
