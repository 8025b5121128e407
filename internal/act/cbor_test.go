package act

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestJSONToCBOR(t *testing.T) {
	tests := []struct {
		name, json, hex string
	}{
		{"small int", `1`, "01"},
		{"negative", `-24`, "37"},
		{"uint64 max", `18446744073709551615`, "1bffffffffffffffff"},
		{"bignum past uint64", `18446744073709551616`, "c249010000000000000000"},
		{"negative bignum", `-18446744073709551617`, "c349010000000000000000"},
		{"float in half", `1.5`, "f93e00"},
		{"float needs double", `0.1`, "fb3fb999999999999a"},
		{"float with exponent integral", `1e2`, "f95640"},
		{"keys sorted bytewise by encoding", `{"bb":1,"a":2,"c":3}`, "a361610261630362626201"},
		{"unicode text", `"é"`, "62c3a9"},
		{"nested", `{"l":[true,false,null]}`, "a1616c83f5f4f6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := JSONToCBOR([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(b); got != tt.hex {
				t.Fatalf("%s → %s, want %s", tt.json, got, tt.hex)
			}
		})
	}
}

func TestJSONToCBORRefusals(t *testing.T) {
	for name, doc := range map[string]string{
		"duplicate key":        `{"a":1,"a":2}`,
		"nested duplicate key": `{"x":{"k":1,"k":1}}`,
		"trailing data":        `{} {}`,
		"not JSON":             `{"a":`,
		"number out of range":  `1e999`,
		"too deep":             strings.Repeat("[", 70) + strings.Repeat("]", 70),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := JSONToCBOR([]byte(doc)); !errors.Is(err, ErrCBOR) {
				t.Fatalf("%s: got %v, want ErrCBOR", doc, err)
			}
		})
	}
}

func TestCBORToJSON(t *testing.T) {
	tests := []struct {
		name, hex, json string
	}{
		{"byte string base64url", "43fffe00", `"__4A"`},
		{"int keys", "a2016161026162", `{"1":"a","2":"b"}`},
		{"bignum", "c249010000000000000000", `18446744073709551616`},
		{"NaN", "f97e00", `null`},
		{"infinity", "f97c00", `null`},
		{"half float", "f93e00", `1.5`},
		{"date tag", "c074323031332d30332d32315432303a30343a30305a", `"2013-03-21T20:04:00Z"`},
		{"other tag gives content", "d82063616263", `"abc"`},
		{"indefinite text", "7f616161626163ff", `"abc"`},
		{"undefined", "f7", `null`},
		{"html kept", "633c613e", `"<a>"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := hex.DecodeString(tt.hex)
			got, err := CBORToJSON(in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.json {
				t.Fatalf("%s → %s, want %s", tt.hex, got, tt.json)
			}
		})
	}
}

func TestCBORToJSONRefusals(t *testing.T) {
	for name, h := range map[string]string{
		"duplicate keys":          "a2616101616102",
		"keys colliding in JSON":  "a201616161316162",
		"array key":               "a181010102",
		"truncated":               "a26161",
		"trailing bytes are junk": "0101",
	} {
		t.Run(name, func(t *testing.T) {
			in, _ := hex.DecodeString(h)
			if _, err := CBORToJSON(in); !errors.Is(err, ErrCBOR) {
				t.Fatalf("%s: got %v, want ErrCBOR", h, err)
			}
		})
	}
}

func TestCanonicalReencodes(t *testing.T) {
	// {"b": 1.0 as a double, "a": 1 in three bytes, "c": an indefinite
	// byte string}: unsorted, long forms, indefinite length.
	in, _ := hex.DecodeString("a36162fb3ff00000000000006161190001" + "6163" + "5f4101ff")
	got, err := Canonical(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a36161016162f93c0061634101"; hex.EncodeToString(got) != want {
		t.Fatalf("canonical %x, want %s", got, want)
	}
	again, _ := Canonical(got)
	if !bytes.Equal(again, got) {
		t.Fatalf("canonical is not a fixed point: %x then %x", got, again)
	}
}

// FuzzJSONCBOR: any JSON the converter accepts comes back from CBOR as
// the same JSON value, and its CBOR is already canonical.
func FuzzJSONCBOR(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x",null,true]}`, `18446744073709551616`, `-0`, `1e300`, `{"":{}}`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		c, err := JSONToCBOR(doc)
		if err != nil {
			return
		}
		canon, err := Canonical(c)
		if err != nil || !bytes.Equal(canon, c) {
			t.Fatalf("JSONToCBOR(%q) = %x is not canonical (%x, %v)", doc, c, canon, err)
		}
		back, err := CBORToJSON(c)
		if err != nil {
			t.Fatalf("CBORToJSON(%x) of %q: %v", c, doc, err)
		}
		var want, got any
		d := json.NewDecoder(bytes.NewReader(doc))
		d.UseNumber()
		if err := d.Decode(&want); err != nil {
			t.Fatal(err)
		}
		d = json.NewDecoder(bytes.NewReader(back))
		d.UseNumber()
		if err := d.Decode(&got); err != nil {
			t.Fatal(err)
		}
		if !sameJSON(want, got) {
			t.Fatalf("%q → %x → %s", doc, c, back)
		}
	})
}

// FuzzCBORToJSON: any CBOR either converts to valid JSON or is refused
// as ErrCBOR; never a panic.
func FuzzCBORToJSON(f *testing.F) {
	for _, h := range []string{"a2016161026162", "c249010000000000000000", "f97e00", "43fffe00", "d82063616263"} {
		b, _ := hex.DecodeString(h)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, item []byte) {
		j, err := CBORToJSON(item)
		if err != nil {
			if !errors.Is(err, ErrCBOR) {
				t.Fatalf("unclassified %v", err)
			}
			return
		}
		if !json.Valid(j) {
			t.Fatalf("%x → invalid JSON %s", item, j)
		}
	})
}

// sameJSON compares decoded JSON values, numbers by their value.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x.String() == y.String() {
			return true
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		return e1 == nil && e2 == nil && fx == fy
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !sameJSON(v, y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
