// Package invoke is murmur:tool-registry/invoke@0.1.0 for the guest SDK's
// packages: sdk/go/tool (a tool calling another tool) and sdk/go/capsule
// (a script capsule) make the same call and read the same tool-result,
// each under its own exported types (capsule cannot import tool, whose
// murmur:tool/run export would come with it).
package invoke

import (
	"fmt"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

// Status is murmur:tool/run's status enum.
type Status uint8

// The status cases, in WIT order (the order is the ABI).
const (
	StatusPassed Status = iota
	StatusFailed
	StatusError
)

func (s Status) String() string {
	switch s {
	case StatusPassed:
		return "passed"
	case StatusFailed:
		return "failed"
	case StatusError:
		return "error"
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// Result is murmur:tool/run's tool-result. sdk/go/tool's and
// sdk/go/capsule's Result have exactly these fields, so each converts it.
type Result struct {
	Status    Status
	Summary   *string
	Data      *string
	DataPath  *string
	Truncated bool
	Metadata  [][2]string
}

// Lift lifts the result<tool-result, string> invoke stores at addr: the
// discriminant at 0, the payload at 4. ok is false for err, with its text.
func Lift(m abi.Memory, addr uint32) (r Result, errText string, ok bool) {
	if abi.U8(m, addr) != 0 {
		return Result{}, abi.GetString(m, addr+4), false
	}
	p := addr + 4
	r = Result{
		Status:    Status(abi.U8(m, p)),
		Summary:   abi.GetOptString(m, p+4),
		Data:      abi.GetOptString(m, p+16),
		DataPath:  abi.GetOptString(m, p+28),
		Truncated: abi.U8(m, p+40) != 0,
	}
	if n := abi.U32(m, p+48); n > 0 {
		r.Metadata = abi.Pairs(m, abi.U32(m, p+44), n)
	}
	return r, "", true
}
