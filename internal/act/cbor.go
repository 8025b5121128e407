package act

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"time"

	"github.com/fxamacker/cbor/v2"
)

// ErrCBOR is the kind of every CBOR↔JSON conversion failure.
var ErrCBOR = errors.New("cbor conversion")

var jsonMapType = reflect.TypeOf(map[string]any(nil))

// encMode is RFC 8949 §4.2.1 core deterministic encoding: shortest
// integer and float forms, map keys sorted bytewise, definite lengths,
// NaN and infinities in their shortest form, big integers that fit in
// 64 bits as plain integers.
var encMode = func() cbor.EncMode {
	m, err := cbor.CoreDetEncOptions().EncMode()
	if err != nil {
		panic(err)
	}
	return m
}()

// decMode reads untrusted CBOR: duplicate map keys are refused (RFC 8949
// §5.6: a map with them is not valid), nesting is bounded, maps decode
// with interface keys so a non-string key is seen as what it is.
var decMode = func() cbor.DecMode {
	m, err := cbor.DecOptions{
		DupMapKey:       cbor.DupMapKeyEnforcedAPF,
		MaxNestedLevels: 64,
		IndefLength:     cbor.IndefLengthAllowed,
		BigIntDec:       cbor.BigIntDecodePointer,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return m
}()

// maxJSONDepth bounds the nesting of JSON arguments.
const maxJSONDepth = 64

// JSONToCBOR encodes a JSON document as deterministic CBOR: integers stay
// integers (those past 64 bits become bignums, RFC 8949 §3.4.3), other
// numbers become the shortest float that holds them exactly, objects
// become maps with text keys in core deterministic order. A JSON object
// with a repeated key is refused: its meaning is not defined (RFC 8259
// §4), and CBOR forbids it.
func JSONToCBOR(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	v, err := readJSON(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCBOR, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data after the JSON value", ErrCBOR)
	}
	b, err := encMode.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCBOR, err)
	}
	return b, nil
}

// readJSON reads one value with its object keys checked for repeats.
func readJSON(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d levels", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				if _, dup := m[k]; dup {
					return nil, fmt.Errorf("object key %q appears twice", k)
				}
				if m[k], err = readJSON(dec, depth+1); err != nil {
					return nil, err
				}
			}
			_, err := dec.Token()
			return m, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := readJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
		return nil, fmt.Errorf("unexpected %q", t)
	case json.Number:
		return jsonNumber(t)
	default: // string, bool, nil
		return t, nil
	}
}

// jsonNumber keeps an integer written without fraction or exponent as an
// exact integer of any size; anything else is a float64.
func jsonNumber(n json.Number) (any, error) {
	s := n.String()
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil
	}
	if b, ok := new(big.Int).SetString(s, 10); ok {
		return b, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Only a magnitude past float64's range fails here.
		return nil, fmt.Errorf("number %s is out of range", s)
	}
	return f, nil
}

// Canonical re-encodes any well-formed CBOR item in core deterministic
// form (a component's non-canonical output, an operator's value).
// Duplicate map keys are refused.
func Canonical(item []byte) ([]byte, error) {
	var v any
	if err := decMode.Unmarshal(item, &v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCBOR, err)
	}
	b, err := encMode.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCBOR, err)
	}
	return b, nil
}

// CBORToJSON converts one CBOR item to JSON for the model, after RFC 8949
// §6.1: byte strings become base64url without padding, NaN and the
// infinities become null, tags give their content (dates as RFC 3339
// text), bignums become exact JSON integers. A map key that is not text
// becomes its JSON text (1 → "1"); two keys that become the same text are
// refused rather than one silently dropped.
func CBORToJSON(item []byte) ([]byte, error) {
	v, err := ToJSONValue(item)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCBOR, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ToJSONValue decodes one CBOR item into the values encoding/json writes
// (see CBORToJSON).
func ToJSONValue(item []byte) (any, error) {
	var v any
	if err := decMode.Unmarshal(item, &v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCBOR, err)
	}
	j, err := jsonValue(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCBOR, err)
	}
	return j, nil
}

func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string, int64, uint64:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, nil
		}
		return x, nil
	case float32:
		return jsonValue(float64(x))
	case *big.Int:
		return json.Number(x.String()), nil
	case big.Int:
		return json.Number(x.String()), nil
	case []byte:
		return base64.RawURLEncoding.EncodeToString(x), nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	case cbor.Tag:
		return jsonValue(x.Content)
	case cbor.SimpleValue:
		return nil, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, err := keyText(k)
			if err != nil {
				return nil, err
			}
			if _, dup := out[ks]; dup {
				return nil, fmt.Errorf("two map keys both read %q in JSON", ks)
			}
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[ks] = j
		}
		return out, nil
	}
	return nil, fmt.Errorf("CBOR value of Go type %T has no JSON form", v)
}

// keyText is the JSON object key of a CBOR map key: text as is, numbers
// and booleans as their JSON text, byte strings as base64url; a key that
// is itself an array or map is refused.
func keyText(k any) (string, error) {
	switch x := k.(type) {
	case string:
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
	case *big.Int:
		return x.String(), nil
	case []byte:
		return base64.RawURLEncoding.EncodeToString(x), nil
	case cbor.ByteString:
		return base64.RawURLEncoding.EncodeToString([]byte(x)), nil
	case nil:
		return "null", nil
	}
	return "", fmt.Errorf("a map key of type %T has no JSON text", k)
}
