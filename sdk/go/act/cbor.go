package act

import (
	"reflect"

	"github.com/fxamacker/cbor/v2"
)

// decMode reads the host's deterministic CBOR into the values Call.Args
// documents; a repeated map key is refused.
var decMode = func() cbor.DecMode {
	m, err := cbor.DecOptions{
		DupMapKey:      cbor.DupMapKeyEnforcedAPF,
		DefaultMapType: reflect.TypeOf(map[string]any(nil)),
		IntDec:         cbor.IntDecConvertSignedOrBigInt,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return m
}()

var encMode = func() cbor.EncMode {
	m, err := cbor.CoreDetEncOptions().EncMode()
	if err != nil {
		panic(err)
	}
	return m
}()

// Decode reads one CBOR item into the values Call.Args documents (for
// session args and metadata values).
func Decode(b []byte) (any, error) { return decodeCBOR(b) }

func decodeCBOR(b []byte) (any, error) {
	var v any
	err := decMode.Unmarshal(b, &v)
	return v, err
}

// CBOR encodes v in deterministic CBOR (RFC 8949 §4.2.1), for an
// application/cbor content part or a metadata value.
func CBOR(v any) ([]byte, error) { return encMode.Marshal(v) }
