package tool

import (
	"reflect"
	"testing"

	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
	"github.com/murmur/mur/sdk/go/internal/invoke"
)

func TestLiftInvokeResult(t *testing.T) {
	m := abitest.New(1 << 12)
	want := Passed("from-wasm").Effect(EffectRead, "file:a")
	want.Summary = str("ran")
	want.Truncated = true
	p := lowerResult(m, want)
	ok := m.Alloc(56, 4)
	copy(m.Bytes(ok+4, resultSize), m.Bytes(p, resultSize))
	// What a tool's run lowers, invoke lifts back whole (the tool-result
	// layout is one, shared through sdk/go/internal/invoke).
	r, errText, lifted := invoke.Lift(m, ok)
	if got := Result(r); !lifted || !reflect.DeepEqual(got, want) {
		t.Fatalf("ok: got %+v, %q; want %+v", got, errText, want)
	}

	bad := m.Alloc(56, 4)
	abi.PutU8(m, bad, 1)
	abi.PutString(m, bad+4, "the tool is already on the call chain")
	if _, errText, lifted := invoke.Lift(m, bad); lifted || errText != "the tool is already on the call chain" {
		t.Fatalf("err: got %q", errText)
	}
}
