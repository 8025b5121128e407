package cm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is the WIT type of a dynamic value. The numbering matches wasmtime's
// value kinds so conversion needs no table.
type Kind uint8

// The WIT value kinds.
const (
	KindBool Kind = iota
	KindS8
	KindU8
	KindS16
	KindU16
	KindS32
	KindU32
	KindS64
	KindU64
	KindF32
	KindF64
	KindChar
	KindString
	KindList
	KindRecord
	KindTuple
	KindVariant
	KindEnum
	KindOption
	KindResult
	KindFlags
	KindResource
)

var kindNames = [...]string{"bool", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64",
	"f32", "f64", "char", "string", "list", "record", "tuple", "variant", "enum", "option",
	"result", "flags", "resource"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Val is a dynamic component-model value of any WIT type (scalars are kept
// zero-extended to their width). The zero Val is
// bool false. Scalars live in one word; list<u8> is kept as a byte slice so
// byte payloads cross the Go side without one Val per byte.
type Val struct {
	kind  Kind
	n     uint64    // scalar bits; for option and result: 1 = some/ok
	s     string    // string, enum case, variant case
	elems []Val     // list, tuple, record values, payload of option/result/variant (0 or 1)
	names []string  // record field names, flags
	bytes []byte    // list<u8>, when built from bytes or read from the guest
	res   *Resource // resource handle
}

// Field is one named field of a record.
type Field struct {
	Name string
	Val  Val
}

// Bool makes a bool.
func Bool(b bool) Val {
	if b {
		return Val{kind: KindBool, n: 1}
	}
	return Val{kind: KindBool}
}

// S8 makes an s8.
func S8(x int8) Val { return Val{kind: KindS8, n: uint64(uint8(x))} }

// U8 makes a u8.
func U8(x uint8) Val { return Val{kind: KindU8, n: uint64(x)} }

// S16 makes an s16.
func S16(x int16) Val { return Val{kind: KindS16, n: uint64(uint16(x))} }

// U16 makes a u16.
func U16(x uint16) Val { return Val{kind: KindU16, n: uint64(x)} }

// S32 makes an s32.
func S32(x int32) Val { return Val{kind: KindS32, n: uint64(uint32(x))} }

// U32 makes a u32.
func U32(x uint32) Val { return Val{kind: KindU32, n: uint64(x)} }

// S64 makes an s64.
func S64(x int64) Val { return Val{kind: KindS64, n: uint64(x)} }

// U64 makes a u64.
func U64(x uint64) Val { return Val{kind: KindU64, n: x} }

// F32 makes an f32.
func F32(x float32) Val { return Val{kind: KindF32, n: uint64(math.Float32bits(x))} }

// F64 makes an f64.
func F64(x float64) Val { return Val{kind: KindF64, n: math.Float64bits(x)} }

// Char makes a char. A surrogate or out-of-range rune is refused when the
// value is passed to wasm.
func Char(r rune) Val { return Val{kind: KindChar, n: uint64(uint32(r))} }

// String makes a string. Invalid UTF-8 is refused when the value is passed
// to wasm.
func String(s string) Val { return Val{kind: KindString, s: s} }

// List makes a list of values of one type.
func List(elems ...Val) Val { return Val{kind: KindList, elems: elems} }

// Bytes makes a list<u8> without one Val per byte. The slice is not copied
// until the value is passed to wasm.
func Bytes(b []byte) Val {
	if b == nil {
		b = []byte{}
	}
	return Val{kind: KindList, bytes: b}
}

// Record makes a record; fields must be given in the WIT order.
func Record(fields ...Field) Val {
	v := Val{kind: KindRecord, elems: make([]Val, len(fields)), names: make([]string, len(fields))}
	for i, f := range fields {
		v.names[i], v.elems[i] = f.Name, f.Val
	}
	return v
}

// Tuple makes a tuple.
func Tuple(elems ...Val) Val { return Val{kind: KindTuple, elems: elems} }

// Variant makes a variant case with an optional payload (at most one).
func Variant(name string, payload ...Val) Val {
	return Val{kind: KindVariant, s: name, elems: onePayload(payload)}
}

// Enum makes an enum case.
func Enum(name string) Val { return Val{kind: KindEnum, s: name} }

// None makes an empty option.
func None() Val { return Val{kind: KindOption} }

// Some makes an option holding v.
func Some(v Val) Val { return Val{kind: KindOption, n: 1, elems: []Val{v}} }

// OK makes an ok result with an optional payload (at most one).
func OK(payload ...Val) Val { return Val{kind: KindResult, n: 1, elems: onePayload(payload)} }

// Err makes an error result with an optional payload (at most one).
func Err(payload ...Val) Val { return Val{kind: KindResult, elems: onePayload(payload)} }

// Flags makes a flags value from the names of the set flags.
func Flags(names ...string) Val { return Val{kind: KindFlags, names: names} }

// ResourceVal wraps a resource handle.
func ResourceVal(r *Resource) Val { return Val{kind: KindResource, res: r} }

func onePayload(p []Val) []Val {
	if len(p) > 1 {
		panic("cm: a variant or result case carries at most one payload")
	}
	return p
}

// Kind returns the value's WIT kind.
func (v Val) Kind() Kind { return v.kind }

// Bool returns a bool's value.
func (v Val) Bool() bool { return v.n != 0 }

// S8 returns an s8's value.
func (v Val) S8() int8 { return int8(v.n) }

// U8 returns a u8's value.
func (v Val) U8() uint8 { return uint8(v.n) }

// S16 returns an s16's value.
func (v Val) S16() int16 { return int16(v.n) }

// U16 returns a u16's value.
func (v Val) U16() uint16 { return uint16(v.n) }

// S32 returns an s32's value.
func (v Val) S32() int32 { return int32(v.n) }

// U32 returns a u32's value.
func (v Val) U32() uint32 { return uint32(v.n) }

// S64 returns an s64's value.
func (v Val) S64() int64 { return int64(v.n) }

// U64 returns a u64's value.
func (v Val) U64() uint64 { return v.n }

// F32 returns an f32's value.
func (v Val) F32() float32 { return math.Float32frombits(uint32(v.n)) }

// F64 returns an f64's value.
func (v Val) F64() float64 { return math.Float64frombits(v.n) }

// Char returns a char's value.
func (v Val) Char() rune { return rune(uint32(v.n)) }

// Str returns a string's value, an enum's case or a variant's case name.
func (v Val) Str() string { return v.s }

// Len returns the number of elements of a list, tuple or record.
func (v Val) Len() int {
	if v.bytes != nil {
		return len(v.bytes)
	}
	return len(v.elems)
}

// List returns the elements of a list or tuple. A list<u8> held as bytes is
// expanded; prefer Bytes for those.
func (v Val) List() []Val {
	if v.bytes != nil {
		out := make([]Val, len(v.bytes))
		for i, b := range v.bytes {
			out[i] = U8(b)
		}
		return out
	}
	return v.elems
}

// Bytes returns a list<u8> as bytes; ok is false when v is not a list of u8.
// The slice aliases v when v was made by Bytes or read from wasm.
func (v Val) Bytes() (b []byte, ok bool) {
	if v.kind != KindList {
		return nil, false
	}
	if v.bytes != nil {
		return v.bytes, true
	}
	b = make([]byte, len(v.elems))
	for i, e := range v.elems {
		if e.kind != KindU8 {
			return nil, false
		}
		b[i] = byte(e.n)
	}
	return b, true
}

// Fields returns a record's fields in order.
func (v Val) Fields() []Field {
	out := make([]Field, len(v.elems))
	for i := range v.elems {
		out[i] = Field{Name: v.names[i], Val: v.elems[i]}
	}
	return out
}

// Field returns the record field called name.
func (v Val) Field(name string) (Val, bool) {
	for i, n := range v.names {
		if n == name {
			return v.elems[i], true
		}
	}
	return Val{}, false
}

// Payload returns the payload of a variant case, a some option or a
// result; ok is false when there is none.
func (v Val) Payload() (p Val, ok bool) {
	if len(v.elems) == 0 {
		return Val{}, false
	}
	return v.elems[0], true
}

// IsSome reports whether an option holds a value.
func (v Val) IsSome() bool { return v.kind == KindOption && v.n != 0 }

// IsOK reports whether a result is ok.
func (v Val) IsOK() bool { return v.kind == KindResult && v.n != 0 }

// Flags returns the names of a flags value's set flags.
func (v Val) Flags() []string { return v.names }

// Resource returns a resource value's handle.
func (v Val) Resource() *Resource { return v.res }

// String renders the value in WAVE-like text, for logs and test failures.
func (v Val) String() string {
	var b strings.Builder
	v.write(&b)
	return b.String()
}

func (v Val) write(b *strings.Builder) {
	switch v.kind {
	case KindBool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case KindS8, KindS16, KindS32, KindS64:
		b.WriteString(strconv.FormatInt(v.signed(), 10))
	case KindU8, KindU16, KindU32, KindU64:
		b.WriteString(strconv.FormatUint(v.n, 10))
	case KindF32:
		b.WriteString(strconv.FormatFloat(float64(v.F32()), 'g', -1, 32))
	case KindF64:
		b.WriteString(strconv.FormatFloat(v.F64(), 'g', -1, 64))
	case KindChar:
		b.WriteString(strconv.QuoteRune(v.Char()))
	case KindString:
		b.WriteString(strconv.Quote(v.s))
	case KindList, KindTuple:
		open, close := "[", "]"
		if v.kind == KindTuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i, e := range v.List() {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b)
		}
		b.WriteString(close)
	case KindRecord:
		b.WriteString("{")
		for i, e := range v.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v.names[i] + ": ")
			e.write(b)
		}
		b.WriteString("}")
	case KindVariant, KindEnum, KindOption, KindResult:
		switch v.kind {
		case KindOption:
			b.WriteString(map[bool]string{true: "some", false: "none"}[v.IsSome()])
		case KindResult:
			b.WriteString(map[bool]string{true: "ok", false: "err"}[v.IsOK()])
		default:
			b.WriteString(v.s)
		}
		if p, ok := v.Payload(); ok {
			b.WriteString("(")
			p.write(b)
			b.WriteString(")")
		}
	case KindFlags:
		b.WriteString("{" + strings.Join(v.names, ", ") + "}")
	case KindResource:
		b.WriteString(v.res.String())
	default:
		b.WriteString(v.kind.String())
	}
}

func (v Val) signed() int64 {
	switch v.kind {
	case KindS8:
		return int64(int8(v.n))
	case KindS16:
		return int64(int16(v.n))
	case KindS32:
		return int64(int32(v.n))
	}
	return int64(v.n)
}

// check refuses values wasmtime would abort the process on (invalid UTF-8,
// invalid chars) or that are malformed, before any C memory is allocated.
func (v Val) check() error {
	switch v.kind {
	case KindChar:
		if r := v.Char(); !utf8.ValidRune(r) {
			return fmt.Errorf("%w: char %#x is not a Unicode scalar value", ErrBadValue, uint32(r))
		}
	case KindString, KindEnum, KindVariant:
		if !utf8.ValidString(v.s) {
			return fmt.Errorf("%w: %s is not valid UTF-8", ErrBadValue, v.kind)
		}
	case KindRecord:
		if len(v.names) != len(v.elems) {
			return fmt.Errorf("%w: record has %d names for %d fields", ErrBadValue, len(v.names), len(v.elems))
		}
		for _, n := range v.names {
			if !utf8.ValidString(n) {
				return fmt.Errorf("%w: record field name is not valid UTF-8", ErrBadValue)
			}
		}
	case KindFlags:
		for _, n := range v.names {
			if !utf8.ValidString(n) {
				return fmt.Errorf("%w: flag name is not valid UTF-8", ErrBadValue)
			}
		}
	case KindResource:
		if v.res == nil {
			return fmt.Errorf("%w: resource value without a handle", ErrBadValue)
		}
	case KindBool, KindS8, KindU8, KindS16, KindU16, KindS32, KindU32, KindS64, KindU64,
		KindF32, KindF64, KindList, KindTuple, KindOption, KindResult:
	default:
		return fmt.Errorf("%w: unknown kind %d", ErrBadValue, v.kind)
	}
	for _, e := range v.elems {
		if err := e.check(); err != nil {
			return err
		}
	}
	return nil
}
