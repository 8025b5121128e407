package capsule

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/murmur/mur/internal/act"
)

// bigComponent writes a component whose act:component section follows
// 8 MiB of another custom section (a component's code, as far as the
// section walk is concerned), or none.
func bigComponent(t testing.TB, withSection bool) string {
	t.Helper()
	wasm := []byte{0x00, 'a', 's', 'm', 0x0d, 0x00, 0x01, 0x00}
	filler := make([]byte, 8<<20)
	filler[0] = 4 // the custom section's name length
	copy(filler[1:], "name")
	wasm = append(wasm, 0)
	wasm = appendTestULEB(wasm, uint32(len(filler)))
	wasm = append(wasm, filler...)
	if withSection {
		sec, err := act.EncodeSection(act.Info{Name: "kv", Version: "0.1.0", Descriptions: map[string]string{"en": "Key-value store"}, DefaultLanguage: "en",
			Capabilities: map[string]any{"wasi:filesystem": map[string]any{"mount-root": "/data"}}})
		if err != nil {
			t.Fatal(err)
		}
		wasm = act.AppendSection(wasm, sec)
	}
	path := filepath.Join(t.TempDir(), "c.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func appendTestULEB(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func TestReadACTSection(t *testing.T) {
	info, err := readACTSection(bigComponent(t, true))
	if err != nil {
		t.Fatal(err)
	}
	// The mapping is gone: what Info holds must be its own copy.
	if info.Name != "kv" || info.Version != "0.1.0" || info.Descriptions["en"] != "Key-value store" || info.CapabilityNames()[0] != "wasi:filesystem" {
		t.Fatalf("%+v", info)
	}
	if _, err := readACTSection(bigComponent(t, false)); !errors.Is(err, act.ErrNoSection) {
		t.Fatalf("no section: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.wasm")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readACTSection(empty); !errors.Is(err, act.ErrMalformed) {
		t.Fatalf("empty file: %v", err)
	}
	if _, err := readACTSection(filepath.Join(t.TempDir(), "missing.wasm")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// BenchmarkReadACTSection compares finding the section of an 8 MiB
// component through a mapping with reading the file whole first (what a
// launch did for every tool component).
func BenchmarkReadACTSection(b *testing.B) {
	path := bigComponent(b, false)
	b.Run("mapped", func(b *testing.B) {
		for b.Loop() {
			if _, err := readACTSection(path); !errors.Is(err, act.ErrNoSection) {
				b.Fatal(err)
			}
		}
	})
	b.Run("read whole", func(b *testing.B) {
		for b.Loop() {
			wasm, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := act.ReadSection(wasm); !errors.Is(err, act.ErrNoSection) {
				b.Fatal(err)
			}
		}
	})
}
