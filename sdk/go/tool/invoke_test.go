package tool

import (
	"errors"
	"reflect"
	"testing"

	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

func TestLiftInvokeResult(t *testing.T) {
	m := abitest.New(1 << 12)
	want := Passed("from-wasm").Effect(EffectRead, "file:a")
	want.Summary = str("ran")
	want.Truncated = true
	p := lowerResult(m, want)
	ok := m.Alloc(56, 4)
	copy(m.Bytes(ok+4, resultSize), m.Bytes(p, resultSize))
	got, err := liftInvokeResult(m, ok)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ok: got %+v, %v; want %+v", got, err, want)
	}

	bad := m.Alloc(56, 4)
	abi.PutU8(m, bad, 1)
	abi.PutString(m, bad+4, "the tool is already on the call chain")
	_, err = liftInvokeResult(m, bad)
	var ie *InvokeError
	if !errors.As(err, &ie) || ie.Msg != "the tool is already on the call chain" {
		t.Fatalf("err: got %v", err)
	}
}
