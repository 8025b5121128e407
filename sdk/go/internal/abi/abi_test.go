package abi_test

import (
	"reflect"
	"testing"

	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

func TestStrings(t *testing.T) {
	m := abitest.New(1 << 12)
	for _, s := range []string{"", "a", "héllo, 世界"} {
		p, n := abi.LowerString(m, s)
		if got := abi.String(m, p, n); got != s {
			t.Errorf("round trip of %q = %q", s, got)
		}
	}
	// An empty string still gets a non-null, aligned pointer.
	if p, n := abi.LowerString(m, ""); p == 0 || n != 0 {
		t.Errorf("empty string lowered to (%d, %d)", p, n)
	}
	at := m.Alloc(12, 4)
	abi.PutOptString(m, at, nil)
	if abi.GetOptString(m, at) != nil {
		t.Error("none lifted as some")
	}
	s := "x"
	abi.PutOptString(m, at, &s)
	if got := abi.GetOptString(m, at); got == nil || *got != "x" {
		t.Errorf("some(x) lifted as %v", got)
	}
	lst := m.Alloc(8, 4)
	abi.PutStringList(m, lst, []string{"a", "bc"})
	if got := abi.StringList(m, abi.U32(m, lst), abi.U32(m, lst+4)); !reflect.DeepEqual(got, []string{"a", "bc"}) {
		t.Errorf("string list = %v", got)
	}
	abi.PutStringList(m, lst, nil)
	if abi.U32(m, lst+4) != 0 || abi.U32(m, lst)%4 != 0 {
		t.Error("empty list not lowered as an aligned (ptr, 0)")
	}
}

func TestResults(t *testing.T) {
	m := abitest.New(1 << 12)
	at := m.Alloc(12, 4)
	if _, ok := abi.ResultUnitString(m, at); !ok {
		t.Error("ok lifted as err")
	}
	abi.PutU8(m, at, 1)
	abi.PutString(m, at+4, "closed")
	if msg, ok := abi.ResultUnitString(m, at); ok || msg != "closed" {
		t.Errorf("err lifted as (%q, %v)", msg, ok)
	}
	if v, ok := abi.ResultString(m, at); ok || v != "closed" {
		t.Errorf("result<string,string> err = (%q, %v)", v, ok)
	}
	abi.PutU8(m, at, 0)
	if v, ok := abi.ResultString(m, at); !ok || v != "closed" {
		t.Errorf("result<string,string> ok = (%q, %v)", v, ok)
	}
	abi.PutU64(m, at, 1<<63)
	if abi.U64(m, at) != 1<<63 {
		t.Error("u64 round trip")
	}
}
