// Package capsule writes a script capsule (world
// murmur:runtime-guest/capsule@0.1.0) as ordinary Go: a component with no
// model behind it that drives its capsule's tools itself.
//
//	func init() {
//		capsule.Run(func() error {
//			r, err := capsule.InvokeJSON("file-go", map[string]string{"op": "list", "path": "."})
//			if err != nil {
//				return err
//			}
//			fmt.Println(r.Text())
//			return nil
//		})
//	}
//
//	func main() {}
//
// The capsule world imports murmur:tool-registry/invoke: every call runs
// a tool of the capsule under that tool's own grants, through the same
// checks, policy hooks and trace records as a model's call. Under the
// capsule's capabilities.install, Pull, Remove, List, Describe and
// Diagnostics reach murmur:artifact-manager/manage (docs/install.md); a
// component that calls none of them does not import it. What
// the script prints on stdout is the task's answer (out/result.txt);
// an error from the run function fails the task with its text
// (docs/script-capsules.md).
package capsule

import (
	"encoding/json"
	"fmt"

	"github.com/murmur/mur/sdk/go/internal/invoke"
)

// Status is murmur:tool/run's status enum (shared with sdk/go/tool).
type Status = invoke.Status

// The status cases, in WIT order (the order is the ABI).
const (
	StatusPassed = invoke.StatusPassed
	StatusFailed = invoke.StatusFailed
	StatusError  = invoke.StatusError
)

// Result is the tool-result an invoked tool returned. A nil pointer is an
// absent option.
type Result struct {
	Status    Status
	Summary   *string
	Data      *string
	DataPath  *string
	Truncated bool
	Metadata  [][2]string
}

// Text is the result's data, else its summary, else "".
func (r Result) Text() string {
	switch {
	case r.Data != nil:
		return *r.Data
	case r.Summary != nil:
		return *r.Summary
	}
	return ""
}

// InvokeError is the err of murmur:tool-registry/invoke: the call could
// not be made at all (a tool already on the call chain, input that is not
// JSON). A tool that ran and failed, or a name the capsule does not have,
// is a Result with a status other than passed.
type InvokeError struct{ Msg string }

func (e *InvokeError) Error() string { return "tool-registry/invoke: " + e.Msg }

var entry func() error

// Run registers fn as the capsule's murmur:capsule/run@0.1.0. Call it once,
// from init: the component is built with -buildmode=c-shared, where main
// never runs.
func Run(fn func() error) {
	if entry != nil {
		panic("capsule.Run called twice")
	}
	entry = fn
}

// InvokeJSON is Invoke with v encoded as the callee's JSON input.
func InvokeJSON(name string, v any) (Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Result{}, fmt.Errorf("input for %s: %w", name, err)
	}
	return Invoke(name, string(b))
}

// run calls the registered function. The WIT run returns nothing, so a
// failure can only be a trap: the error is panicked, and the host reads
// the panic's first line from the component's stderr into the task's
// reason.
func run() {
	if entry == nil {
		panic("capsule: no run function: call capsule.Run from init")
	}
	if err := entry(); err != nil {
		panic("capsule run: " + err.Error())
	}
}
