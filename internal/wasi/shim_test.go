package wasi

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/murmur/mur/internal/wasm/cm"
)

// readDigest has the drain.wat guest read path in chunk-byte reads and
// returns the FNV-1a 64 of what it received.
func readDigest(t testing.TB, f *cm.Func, chunk uint64) uint64 {
	t.Helper()
	v, err := f.Call(context.Background(), cm.String("f"), cm.U64(chunk))
	if err != nil {
		t.Fatal(err)
	}
	return v.U64()
}

func fnv64(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// TestStreamReadsAnyBytes reads files of every kind of content through a
// guest's blocking-read: ASCII and UTF-8 cross as text, anything else
// packed 7 bytes per 8 chars, so sizes cover every remainder mod 7 and
// chunks cut groups and UTF-8 sequences anywhere.
func TestStreamReadsAnyBytes(t *testing.T) {
	dir := t.TempDir()
	inst, _, _ := instantiate(t, "drain.wat", Policy{Workdir: dir})
	f, err := inst.Func("digest")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 9))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	every := make([]byte, 256*3)
	for i := range every {
		every[i] = byte(i)
	}
	contents := map[string][]byte{
		"empty":   nil,
		"ascii":   []byte("the quick brown fox jumps over the lazy dog\n"),
		"utf8":    []byte("naïve café — 日本語 ✓ 🙂 done"),
		"invalid": {'o', 'k', 0xff, 0xfe, 'x', 0xc3},
		"every":   every,
		"nul":     make([]byte, 9),
	}
	for n := 1; n <= 15; n++ {
		contents["random-"+itoa(n)] = random(n)
	}
	contents["random-large"] = random(200_003)
	contents["text-large"] = streamPayload("text", 70_001)
	for name, data := range contents {
		if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		want := fnv64(data)
		for _, chunk := range []uint64{1, 2, 7, 8, 9, 13, 4096, 65536, 1 << 20} {
			if got := readDigest(t, f, chunk); got != want {
				t.Fatalf("%s (%d bytes) in %d-byte reads: digest %x, want %x", name, len(data), chunk, got, want)
			}
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// FuzzStreamReads: whatever a file holds, a guest reading it through
// wasi:io/streams gets exactly those bytes.
func FuzzStreamReads(f *testing.F) {
	f.Add([]byte("plain text"), uint16(3))
	f.Add([]byte{0xff, 0x00, 0x80, 0x7f, 0xc3, 0xa9}, uint16(7))
	f.Add([]byte("ünïcödé"), uint16(1))
	dir := f.TempDir()
	inst, _, _ := instantiate(f, "drain.wat", Policy{Workdir: dir})
	fn, err := inst.Func("digest")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16) {
		if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, want := readDigest(t, fn, uint64(chunk)+1), fnv64(data); got != want {
			t.Fatalf("%d bytes in %d-byte reads: digest %x, want %x", len(data), chunk+1, got, want)
		}
	})
}
