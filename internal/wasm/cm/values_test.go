//go:build cgo

package cm

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
)

// echoLinker defines every echo-<kind> import as the identity and counts
// calls, so a round trip proves the host saw the value too.
func echoLinker(e *Engine, seen *[]Val) *Linker {
	l := e.NewLinker()
	for _, k := range []string{"bool", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "f32", "f64",
		"char", "enum", "flags", "string", "bytes", "strings", "record", "tuple", "variant", "option", "result"} {
		l.Func(nil, "echo-"+k, func(c *Caller, args []Val) (Val, error) {
			if seen != nil {
				*seen = append(*seen, args[0])
			}
			return args[0], nil
		})
	}
	return l
}

func TestValueRoundTrip(t *testing.T) {
	e := newEngine(t, Config{})
	c := fixture(t, e, "values.wat")
	s := newStore(t, e, Limits{}, nil)
	var seen []Val
	l := echoLinker(e, &seen)
	inst, err := l.Instantiate(context.Background(), s, c)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("héllo wörld ", 1000)
	tests := []struct {
		fn string
		in Val
	}{
		{"echo-bool", Bool(true)},
		{"echo-bool", Bool(false)},
		{"echo-s8", S8(-128)},
		{"echo-u8", U8(255)},
		{"echo-s16", S16(-32768)},
		{"echo-u16", U16(65535)},
		{"echo-s32", S32(math.MinInt32)},
		{"echo-u32", U32(math.MaxUint32)},
		{"echo-s64", S64(math.MinInt64)},
		{"echo-u64", U64(math.MaxUint64)},
		{"echo-f32", F32(-1.5)},
		{"echo-f64", F64(math.Pi)},
		{"echo-char", Char('🦀')},
		{"echo-enum", Enum("blue")},
		{"echo-flags", Flags("read", "exec")},
		{"echo-flags", Flags()},
		{"echo-string", String("")},
		{"echo-string", String(big)},
		{"echo-bytes", Bytes([]byte{0, 1, 2, 255})},
		{"echo-bytes", Bytes(nil)},
		{"echo-strings", List(String("a"), String(""), String("ç"))},
		{"echo-record", Record(Field{"a", U32(7)}, Field{"b", String("seven")})},
		{"echo-tuple", Tuple(U8(9), S64(-9))},
		{"echo-variant", Variant("none")},
		{"echo-variant", Variant("num", U32(42))},
		{"echo-variant", Variant("text", String("forty-two"))},
		{"echo-option", None()},
		{"echo-option", Some(U32(5))},
		{"echo-result", OK(U32(1))},
		{"echo-result", Err(String("bad"))},
	}
	for _, tt := range tests {
		t.Run(tt.fn+"/"+short(tt.in), func(t *testing.T) {
			f, err := inst.Func(tt.fn)
			if err != nil {
				t.Fatal(err)
			}
			seen = seen[:0]
			got, err := f.Call(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !equal(got, tt.in) {
				t.Fatalf("%s(%v) = %v", tt.fn, short(tt.in), short(got))
			}
			if len(seen) != 1 || !equal(seen[0], tt.in) {
				t.Fatalf("host saw %v, want %v", seen, short(tt.in))
			}
		})
	}
}

func short(v Val) string {
	s := v.String()
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// equal compares values by content, so a list<u8> held as bytes equals one
// held as Vals.
func equal(a, b Val) bool {
	if a.kind != b.kind {
		return false
	}
	if ab, ok := a.Bytes(); ok {
		bb, ok := b.Bytes()
		return ok && string(ab) == string(bb)
	}
	if a.n != b.n || a.s != b.s || len(a.elems) != len(b.elems) || a.Len() != b.Len() {
		return false
	}
	if len(a.names) != 0 || len(b.names) != 0 {
		if !reflect.DeepEqual(a.names, b.names) {
			return false
		}
	}
	for i := range a.elems {
		if !equal(a.elems[i], b.elems[i]) {
			return false
		}
	}
	return true
}
