package capsule

import (
	"errors"
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
	got, err := liftInvokeResult(m, ok)
	want := Result{Status: StatusFailed, Summary: str("ran"), Data: str("from-wasm"), Truncated: true, Metadata: [][2]string{{"state_effect", "read"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ok: got %+v, %v; want %+v", got, err, want)
	}
	if got.Text() != "from-wasm" || got.Status.String() != "failed" {
		t.Fatalf("Text %q, Status %s", got.Text(), got.Status)
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

// TestRunPanicsWithTheError: the WIT run returns nothing, so an error
// from the script's function is a trap whose first stderr line carries
// its text.
func TestRunPanicsWithTheError(t *testing.T) {
	entry = func() error { return errors.New("no notes") }
	defer func() {
		entry = nil
		if r := recover(); r != "capsule run: no notes" {
			t.Fatalf("recovered %v", r)
		}
	}()
	run()
}

func str(s string) *string { return &s }
