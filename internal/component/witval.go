package component

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/murmur/mur/internal/wasm/cm"
)

// The Go types of this package mirror the WIT records of wit/ field for
// field. Each struct field carries a `wit:"name"` tag with the WIT field
// name; lower and lift convert between such values and cm.Val by those
// tags, and witmatch_test.go checks every tagged struct against the .wit
// source, so the .wit files stay the one source of truth.
//
// Mapping: string, bool, u32/u64/s32/f64 → the Go type of that width;
// option<T> → *T; list<T> → []T; tuple<string, string> → Pair; enum → a
// string type with a witEnum method; record → struct.

// Pair is a WIT tuple<string, string>, as in tool-result.metadata.
type Pair [2]string

// enum marks a string type that is a WIT enum.
type enum interface{ witEnum() }

var enumType = reflect.TypeFor[enum]()

// lower turns a Go value into a cm.Val.
func lower(v any) cm.Val { return lowerValue(reflect.ValueOf(v)) }

func lowerValue(v reflect.Value) cm.Val {
	if v.Type().Implements(enumType) {
		return cm.Enum(v.String())
	}
	switch v.Kind() {
	case reflect.String:
		return cm.String(v.String())
	case reflect.Bool:
		return cm.Bool(v.Bool())
	case reflect.Uint32:
		return cm.U32(uint32(v.Uint()))
	case reflect.Uint64:
		return cm.U64(v.Uint())
	case reflect.Int32:
		return cm.S32(int32(v.Int()))
	case reflect.Float64:
		return cm.F64(v.Float())
	case reflect.Pointer:
		if v.IsNil() {
			return cm.None()
		}
		return cm.Some(lowerValue(v.Elem()))
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return cm.Bytes(v.Bytes())
		}
		elems := make([]cm.Val, v.Len())
		for i := range elems {
			elems[i] = lowerValue(v.Index(i))
		}
		return cm.List(elems...)
	case reflect.Array:
		elems := make([]cm.Val, v.Len())
		for i := range elems {
			elems[i] = lowerValue(v.Index(i))
		}
		return cm.Tuple(elems...)
	case reflect.Struct:
		t := v.Type()
		fields := make([]cm.Field, 0, t.NumField())
		for i := 0; i < t.NumField(); i++ {
			name := t.Field(i).Tag.Get("wit")
			if name == "" {
				continue
			}
			fields = append(fields, cm.Field{Name: name, Val: lowerValue(v.Field(i))})
		}
		return cm.Record(fields...)
	}
	panic(fmt.Sprintf("component: no WIT mapping for Go type %s", v.Type()))
}

// lift fills *dst from a cm.Val of the matching WIT type.
func lift(val cm.Val, dst any) error {
	return liftValue(val, reflect.ValueOf(dst).Elem(), reflect.TypeOf(dst).Elem().Name())
}

func liftValue(val cm.Val, v reflect.Value, at string) error {
	bad := func() error {
		return fmt.Errorf("component: %s: guest returned %s where %s was expected", at, val.Kind(), v.Type())
	}
	if v.Type().Implements(enumType) {
		if val.Kind() != cm.KindEnum {
			return bad()
		}
		v.SetString(val.Str())
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		if val.Kind() != cm.KindString {
			return bad()
		}
		v.SetString(val.Str())
	case reflect.Bool:
		if val.Kind() != cm.KindBool {
			return bad()
		}
		v.SetBool(val.Bool())
	case reflect.Uint32:
		if val.Kind() != cm.KindU32 {
			return bad()
		}
		v.SetUint(uint64(val.U32()))
	case reflect.Uint64:
		if val.Kind() != cm.KindU64 {
			return bad()
		}
		v.SetUint(val.U64())
	case reflect.Int32:
		if val.Kind() != cm.KindS32 {
			return bad()
		}
		v.SetInt(int64(val.S32()))
	case reflect.Float64:
		if val.Kind() != cm.KindF64 {
			return bad()
		}
		v.SetFloat(val.F64())
	case reflect.Pointer:
		if val.Kind() != cm.KindOption {
			return bad()
		}
		if !val.IsSome() {
			v.SetZero()
			return nil
		}
		p, _ := val.Payload()
		n := reflect.New(v.Type().Elem())
		if err := liftValue(p, n.Elem(), at); err != nil {
			return err
		}
		v.Set(n)
	case reflect.Slice:
		if val.Kind() != cm.KindList {
			return bad()
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b, _ := val.Bytes()
			v.SetBytes(append([]byte(nil), b...))
			return nil
		}
		elems := val.List()
		s := reflect.MakeSlice(v.Type(), len(elems), len(elems))
		for i, e := range elems {
			if err := liftValue(e, s.Index(i), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Array:
		if val.Kind() != cm.KindTuple || len(val.List()) != v.Len() {
			return bad()
		}
		for i, e := range val.List() {
			if err := liftValue(e, v.Index(i), at); err != nil {
				return err
			}
		}
	case reflect.Struct:
		if val.Kind() != cm.KindRecord {
			return bad()
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			name := t.Field(i).Tag.Get("wit")
			if name == "" {
				continue
			}
			f, ok := val.Field(name)
			if !ok {
				return fmt.Errorf("component: %s: record lacks field %q", at, name)
			}
			if err := liftValue(f, v.Field(i), at+"."+strings.ReplaceAll(name, "-", "_")); err != nil {
				return err
			}
		}
	default:
		panic(fmt.Sprintf("component: no WIT mapping for Go type %s", v.Type()))
	}
	return nil
}
