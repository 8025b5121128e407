package act

import (
	"errors"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/wasm/cm"
)

// TestAsyncFormNotHostable is the evidence docs/act.md cites: the wasmtime
// this build links refuses, at compile time, both what the canonical ACT
// WIT needs — an async-lifted export and a stream<> type — because its C
// API cannot turn on the component-model async feature. When this test
// fails, the linked wasmtime has changed: serve the async form and update
// docs/act.md.
func TestAsyncFormNotHostable(t *testing.T) {
	rt, err := component.New(cm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for name, src := range map[string]string{
		"async-lifted export": `(component
  (core module $m (func (export "f") (result i32) i32.const 0))
  (core instance $i (instantiate $m))
  (func $f (result u32) (canon lift (core func $i "f") async))
  (export "f" (func $f)))`,
		"stream type": `(component
  (type $s (stream u8))
  (core module $m (func (export "f") (result i32) i32.const 0))
  (core instance $i (instantiate $m))
  (func $f (result $s) (canon lift (core func $i "f")))
  (export "f" (func $f)))`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := rt.CompileText(src)
			if err == nil || !strings.Contains(err.Error(), "requires the component model async feature") {
				t.Fatalf("compiled, or failed otherwise: %v", err)
			}
			if got := CompileError("test/async", err); !errors.Is(got, ErrAsync) || !strings.Contains(got.Error(), "docs/act.md") {
				t.Fatalf("CompileError: %v", got)
			}
		})
	}
	if err := CompileError("x", errors.New("other")); errors.Is(err, ErrAsync) {
		t.Fatal("an unrelated compile error was called async")
	}
}
