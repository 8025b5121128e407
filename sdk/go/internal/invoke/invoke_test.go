package invoke

import (
	"reflect"
	"testing"

	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

// TestLiftInvokeResult lifts both arms of invoke's result from the
// canonical-ABI layout: ok(tool-result) at +4 (status, summary, data,
// data-path, truncated, metadata) and err(string).
func TestLiftInvokeResult(t *testing.T) {
	m := abitest.New(1 << 12)
	ok := m.Alloc(56, 4)
	p := ok + 4
	abi.PutU8(m, p, uint8(StatusFailed))
	abi.PutOptString(m, p+4, str("ran"))
	abi.PutOptString(m, p+16, str("from-wasm"))
	abi.PutOptString(m, p+28, nil)
	abi.PutU8(m, p+40, 1)
	abi.PutPairs(m, p+44, [][2]string{{"state_effect", "read"}})
	got, errText, lifted := Lift(m, ok)
	want := Result{Status: StatusFailed, Summary: str("ran"), Data: str("from-wasm"), Truncated: true, Metadata: [][2]string{{"state_effect", "read"}}}
	if !lifted || !reflect.DeepEqual(got, want) {
		t.Fatalf("ok: got %+v, %q; want %+v", got, errText, want)
	}
	if got.Status.String() != "failed" {
		t.Fatalf("Status %s", got.Status)
	}

	bad := m.Alloc(56, 4)
	abi.PutU8(m, bad, 1)
	abi.PutString(m, bad+4, "the tool is already on the call chain")
	if _, errText, lifted := Lift(m, bad); lifted || errText != "the tool is already on the call chain" {
		t.Fatalf("err: got %q", errText)
	}
}

func str(s string) *string { return &s }
