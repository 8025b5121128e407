// Package tool writes a murmur tool (world murmur:runtime-guest/tool) or
// the tool/run export of a driver as ordinary Go:
//
//	func init() {
//		tool.Run(func(in tool.Input) tool.Result {
//			return tool.Passed(in.Text())
//		})
//	}
//
//	func main() {}
//
// A guest is built with -buildmode=c-shared, where main never runs, so the
// handler is registered from init. The canonical-ABI glue behind the
// murmur:tool/run@0.1.0 export lives in this package's wasip1 files.
package tool

import (
	"fmt"

	"github.com/murmur/mur/sdk/go/internal/invoke"
)

// Status is murmur:tool/run's status enum (shared with sdk/go/capsule).
type Status = invoke.Status

// The status cases, in WIT order (the order is the ABI).
const (
	StatusPassed = invoke.StatusPassed
	StatusFailed = invoke.StatusFailed
	StatusError  = invoke.StatusError
)

// Input is murmur:tool/run's tool-input. A nil field is an absent option.
type Input struct {
	Data    *string
	LogPath *string
}

// Text returns Data, or "" when it is absent.
func (in Input) Text() string {
	if in.Data == nil {
		return ""
	}
	return *in.Data
}

// Reserved metadata keys and values (see docs/wit.md).
const (
	MetaContinuationID = "continuation_id"
	MetaStateEffect    = "state_effect"
	MetaResourceID     = "resource_id"

	EffectRead   = "read"
	EffectMutate = "mutate"
)

// Result is murmur:tool/run's tool-result. A nil pointer is an absent
// option; Metadata keeps its order, which the host reads (the first
// resource_id wins).
type Result struct {
	Status    Status
	Summary   *string
	Data      *string
	DataPath  *string
	Truncated bool
	Metadata  [][2]string
}

// Passed returns a passed result carrying data.
func Passed(data string) Result { return Result{Status: StatusPassed, Data: &data} }

// Failed returns a failed result whose summary says why.
func Failed(summary string) Result { return Result{Status: StatusFailed, Summary: &summary} }

// Errorf returns an error result whose summary is the formatted message.
func Errorf(format string, args ...any) Result {
	s := fmt.Sprintf(format, args...)
	return Result{Status: StatusError, Summary: &s}
}

// With returns r with the metadata pair (key, value) appended.
func (r Result) With(key, value string) Result {
	r.Metadata = append(r.Metadata[:len(r.Metadata):len(r.Metadata)], [2]string{key, value})
	return r
}

// Effect declares how the call affected the resource it addressed
// (EffectRead or EffectMutate) and which resource that was, as the
// state_effect and resource_id metadata keys.
func (r Result) Effect(effect, resourceID string) Result {
	return r.With(MetaStateEffect, effect).With(MetaResourceID, resourceID)
}

// Handler answers one tool call.
type Handler func(Input) Result

var handler Handler

// Run registers h as the component's murmur:tool/run implementation. Call
// it once, from init.
func Run(h Handler) {
	if handler != nil {
		panic("tool.Run called twice")
	}
	handler = h
}
