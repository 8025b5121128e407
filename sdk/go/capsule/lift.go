package capsule

import "github.com/murmur/mur/sdk/go/internal/abi"

// liftInvokeResult lifts the result<tool-result, string> invoke stores at
// addr: the discriminant at 0, the payload at 4 (the layout sdk/go/tool
// lifts too; this package cannot import that one, whose murmur:tool/run
// export would come with it).
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
