package cm

import (
	"errors"
	"fmt"
	"strings"
)

// Error kinds, checked with errors.Is.
var (
	// ErrNoCgo: the binary was built without cgo, so there is no wasmtime.
	ErrNoCgo = errors.New("webassembly components need cgo: this mur was built with CGO_ENABLED=0; rebuild with CGO_ENABLED=1 and a C toolchain")
	// ErrTrap: the guest trapped (unreachable, out-of-bounds access, …).
	ErrTrap = errors.New("wasm trap")
	// ErrDeadline: the store's wall-clock deadline passed (epoch interruption).
	ErrDeadline = errors.New("wall-clock deadline exceeded")
	// ErrCanceled: the call's context was canceled; the error also matches
	// the context's own error.
	ErrCanceled = errors.New("call canceled")
	// ErrFuel: the store ran out of fuel.
	ErrFuel = errors.New("fuel exhausted")
	// ErrMemoryLimit: a linear memory would exceed the store's memory limit.
	ErrMemoryLimit = errors.New("memory limit exceeded")
	// ErrTableLimit: a table would exceed the store's table-element limit.
	ErrTableLimit = errors.New("table limit exceeded")
	// ErrInstanceLimit: instantiation would exceed the store's instance limit.
	ErrInstanceLimit = errors.New("instance limit exceeded")
	// ErrMissingImport: the component imports something the linker does not
	// provide.
	ErrMissingImport = errors.New("missing import")
	// ErrHostPanic: a host function panicked; the panic became a trap.
	ErrHostPanic = errors.New("host function panicked")
	// ErrBadValue: a value cannot be passed to wasm (invalid UTF-8, a
	// surrogate char, a malformed record, …).
	ErrBadValue = errors.New("invalid component value")
	// ErrNoExport: the instance has no export of that name.
	ErrNoExport = errors.New("no such export")
	// ErrCompile: the component failed to parse, validate or compile.
	ErrCompile = errors.New("component compile failed")
	// ErrClosed: the object was used after Close.
	ErrClosed = errors.New("use after close")
)

// Frame is one frame of a trap's wasm backtrace.
type Frame struct {
	Module string
	Func   string
	Index  uint32
}

// TrapError is a guest failure: Kind is one of the sentinels above (ErrTrap
// when no limit explains it), Msg wasmtime's message and Frames the wasm
// backtrace, innermost first.
type TrapError struct {
	Kind   error
	Msg    string
	Frames []Frame
	// Cause is set when the trap came from the host: a host function's error,
	// a panic or the call's context.
	Cause error
}

func (e *TrapError) Error() string {
	var b strings.Builder
	msg := e.Msg
	if msg == "" && e.Cause != nil {
		msg = e.Cause.Error()
	}
	switch kind := e.Kind.Error(); {
	case msg == "":
		b.WriteString(kind)
	case strings.HasPrefix(msg, kind):
		b.WriteString(msg)
	default:
		b.WriteString(kind + ": " + msg)
	}
	for _, f := range e.Frames {
		fmt.Fprintf(&b, "\n    at %s!%s (func %d)", orUnknown(f.Module), orUnknown(f.Func), f.Index)
	}
	return b.String()
}

// Unwrap lets errors.Is see both the kind and the cause.
func (e *TrapError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Kind, e.Cause}
	}
	return []error{e.Kind}
}

// trimBacktrace cuts the native backtrace wasmtime appends to messages;
// Frames carries the wasm one.
// wasmtime also puts its own rendering of the wasm backtrace before
// "Caused by:"; keep only the cause.
func trimBacktrace(msg string) string {
	if i := strings.Index(msg, "\n\nStack backtrace:"); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.Index(msg, "Caused by:"); i >= 0 {
		msg = msg[i+len("Caused by:"):]
	}
	return strings.Join(strings.Fields(msg), " ")
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// classify maps wasmtime's message for a failed call or instantiation to
// the limit that caused it. wasmtime's C API exposes no trap code on
// component errors, so the message is all there is; the strings are those
// of wasmtime 39 and are pinned by tests.
func classify(msg string) error {
	switch {
	case strings.Contains(msg, "wasm trap: interrupt"):
		return ErrDeadline
	case strings.Contains(msg, "all fuel consumed"):
		return ErrFuel
	case strings.Contains(msg, "exceeds memory limits"),
		strings.Contains(msg, "memory count too high"):
		return ErrMemoryLimit
	case strings.Contains(msg, "exceeds table limits"),
		strings.Contains(msg, "table count too high"):
		return ErrTableLimit
	case strings.Contains(msg, "instance count too high"):
		return ErrInstanceLimit
	}
	return ErrTrap
}

// ErrHost: a host function returned an error; TrapError.Cause holds it.
var ErrHost = errors.New("host function failed")
