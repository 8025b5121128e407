package act

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// componentPreamble is the header of a component binary (layer 1).
var componentPreamble = []byte{0x00, 'a', 's', 'm', 0x0d, 0x00, 0x01, 0x00}

// coreModule is an empty core module.
var coreModule = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

func mustSection(t testing.TB, info Info) []byte {
	t.Helper()
	b, err := EncodeSection(info)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// nest wraps inner as a section of id in a component.
func nest(id byte, inner []byte) []byte {
	out := append([]byte{}, componentPreamble...)
	out = append(out, id)
	out = appendULEB(out, uint32(len(inner)))
	return append(out, inner...)
}

func TestReadSection(t *testing.T) {
	info := Info{Name: "kv", Version: "0.1.0", Descriptions: map[string]string{"en": "Key-value store", "fr": "Stockage"},
		DefaultLanguage: "en", Capabilities: map[string]any{"wasi:filesystem": map[string]any{"mount-root": "/data"}, "wasi:http": map[string]any{}}}
	sec := mustSection(t, info)
	tests := []struct {
		name string
		wasm []byte
	}{
		{"top level of a component", AppendSection(componentPreamble, sec)},
		{"core module", AppendSection(coreModule, sec)},
		{"inside the nested core module", nest(sectionCoreModule, AppendSection(coreModule, sec))},
		{"inside a nested component", nest(sectionComponent, AppendSection(componentPreamble, sec))},
		{"after another custom section", AppendSection(appendCustom(componentPreamble, "name", []byte{1, 2, 3}), sec)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadSection(tt.wasm)
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != "kv" || got.Version != "0.1.0" || got.DefaultLanguage != "en" || got.Descriptions["fr"] != "Stockage" {
				t.Fatalf("%+v", got)
			}
			if names := strings.Join(got.CapabilityNames(), ","); names != "wasi:filesystem,wasi:http" {
				t.Fatalf("capabilities %q", names)
			}
			if root := got.Capabilities["wasi:filesystem"].(map[string]any)["mount-root"]; root != "/data" {
				t.Fatalf("mount-root %v", root)
			}
		})
	}
}

func appendCustom(wasm []byte, name string, data []byte) []byte {
	body := append(appendULEB(nil, uint32(len(name))), name...)
	body = append(body, data...)
	out := append(append([]byte{}, wasm...), sectionCustom)
	out = appendULEB(out, uint32(len(body)))
	return append(out, body...)
}

func TestReadSectionRefusals(t *testing.T) {
	enc := func(v any) []byte {
		b, err := cbor.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		wasm []byte
		is   error
		says string
	}{
		{"no section", componentPreamble, ErrNoSection, "no act:component"},
		// A core module's sections 1 and 4 (types, tables) are not nested
		// binaries.
		{"core module without section", append(append([]byte{}, coreModule...), 1, 1, 0, 4, 1, 0), ErrNoSection, "no act:component"},
		{"component nesting a core module without section", nest(sectionCoreModule, append(append([]byte{}, coreModule...), 1, 1, 0)), ErrNoSection, "no act:component"},
		{"not wasm", []byte("hello, world"), ErrMalformed, "preamble"},
		{"truncated section", append(append([]byte{}, componentPreamble...), 0, 0x20, 1), ErrMalformed, "past the end"},
		{"no std", AppendSection(componentPreamble, enc(map[string]any{"acme": map[string]any{}})), ErrMalformed, "no std table"},
		{"no version", AppendSection(componentPreamble, enc(map[string]any{"std": map[string]any{"name": "x"}})), ErrMalformed, "std.version is missing"},
		{"name not text", AppendSection(componentPreamble, enc(map[string]any{"std": map[string]any{"name": 3, "version": "1"}})), ErrMalformed, "std.name is not a text string"},
		{"not a map", AppendSection(componentPreamble, enc([]int{1})), ErrMalformed, "not a CBOR map"},
		{"duplicate key", AppendSection(componentPreamble, []byte{0xa1, 0x63, 's', 't', 'd', 0xa2, 0x64, 'n', 'a', 'm', 'e', 0x61, 'a', 0x64, 'n', 'a', 'm', 'e', 0x61, 'b'}), ErrMalformed, "duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadSection(tt.wasm)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("got %v, want %v saying %q", err, tt.is, tt.says)
			}
		})
	}
}

func TestUnknownNamespacesIgnored(t *testing.T) {
	b, _ := cbor.Marshal(map[string]any{"acme": map[string]any{"x": 1}, "std": map[string]any{"name": "n", "version": "1.0.0", "future-key": []int{1}, "description": "plain"}})
	info, err := DecodeSection(b)
	if err != nil || info.Description != "plain" {
		t.Fatalf("%+v %v", info, err)
	}
}

func FuzzReadSection(f *testing.F) {
	f.Add(AppendSection(componentPreamble, mustSection(f, Info{Name: "a", Version: "1"})))
	f.Add(nest(sectionCoreModule, AppendSection(coreModule, mustSection(f, Info{Name: "a", Version: "1", Description: "d"}))))
	f.Add(componentPreamble)
	f.Fuzz(func(t *testing.T, wasm []byte) {
		info, err := ReadSection(wasm)
		if err != nil {
			if !errors.Is(err, ErrNoSection) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if info.Name == "" || info.Version == "" {
			t.Fatalf("accepted a section without name or version: %+v", info)
		}
		// What was read writes back to a section that reads the same.
		again, err := ReadSection(AppendSection(componentPreamble, mustSection(t, info)))
		if err != nil || again.Name != info.Name || again.Version != info.Version || len(again.Capabilities) != len(info.Capabilities) {
			t.Fatalf("re-read %+v %v, want %+v", again, err, info)
		}
	})
}

// BenchmarkReadSection10MB reads the section of a 10 MB component whose
// section comes last, after a 10 MB core module: the reader skips the
// module by its size without reading it.
func BenchmarkReadSection10MB(b *testing.B) {
	module := append(append([]byte{}, coreModule...), sectionCustom)
	filler := bytes.Repeat([]byte{0xAB}, 10<<20)
	body := append(appendULEB(nil, 4), "fill"...)
	body = append(body, filler...)
	module = appendULEB(module, uint32(len(body)))
	module = append(module, body...)
	wasm := AppendSection(nest(sectionCoreModule, module), mustSection(b, Info{Name: "big", Version: "1.0.0", Description: "ten megabytes"}))
	b.SetBytes(int64(len(wasm)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := ReadSection(wasm); err != nil {
			b.Fatal(err)
		}
	}
}
