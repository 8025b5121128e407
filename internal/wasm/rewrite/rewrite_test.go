package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// The fixtures are components compiled from internal/wasm/cm's WAT by
// cm's TestRewriteFixtures, which also checks they are current; these
// tests read them without cgo.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureCompiler serves the shim's modules cm compiled for the fixtures,
// by the sha256 of their text; any other text does not compile.
func fixtureCompiler(text string) ([]byte, error) {
	sum := sha256.Sum256([]byte(text))
	return os.ReadFile(filepath.Join("testdata", "shim", hex.EncodeToString(sum[:])+".wasm"))
}

var errNoWat = errors.New("no compiler in this test")

func failingCompiler(string) ([]byte, error) { return nil, errNoWat }

func TestStreamsModes(t *testing.T) {
	tests := []struct {
		name string
		wat  Compiler
		want Mode
	}{
		// streams.wat's reads return through its own realloc.
		{"streams", failingCompiler, ReadWrite},
		// A read lowered with the preview1 adapter's allocator keeps its
		// list<u8> result; writes are still patched.
		{"adapter", failingCompiler, Writes},
		// WASI-shaped streams nest in the read shim when its modules
		// compile, and fall back to the in-place rewrite when they do not.
		{"wasi-streams", fixtureCompiler, Shim},
		{"values", fixtureCompiler, Slow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fixture(t, tt.name)
			out, mode := Streams(in, tt.wat)
			if mode != tt.want {
				t.Fatalf("mode %d, want %d", mode, tt.want)
			}
			switch {
			case mode == Slow && !bytes.Equal(out, in):
				t.Fatal("a component left alone was changed")
			case mode != Slow && !isComponent(out):
				t.Fatal("the rewrite is not a component binary")
			case mode == Shim && len(out) <= len(in):
				t.Fatal("the shim did not nest the guest")
			}
		})
	}
}

// Without the shim's modules the read shim is skipped, never half-built.
func TestShimNeedsItsModules(t *testing.T) {
	in := fixture(t, "wasi-streams")
	shimMu.Lock()
	saved := shimModuleCache
	shimModuleCache = map[string][]byte{}
	shimMu.Unlock()
	defer func() {
		shimMu.Lock()
		shimModuleCache = saved
		shimMu.Unlock()
	}()
	if _, mode := Streams(in, failingCompiler); mode == Shim {
		t.Fatal("the read shim was built without its modules")
	}
	if _, ok := wrapReads(in, nil); ok {
		t.Fatal("wrapReads took a component with no compiler")
	}
}

func TestStreamsLeavesJunk(t *testing.T) {
	for _, junk := range [][]byte{nil, []byte("\x00asm\x0d\x00\x01\x00\x07\xff"), []byte("\x00asm\x01\x00\x00\x00")} {
		if out, mode := Streams(junk, fixtureCompiler); mode != Slow || !bytes.Equal(out, junk) {
			t.Errorf("junk %q was rewritten", junk)
		}
	}
}

// FuzzStreams: the rewriter never panics on any input, and what it does
// not rewrite it returns unchanged.
func FuzzStreams(f *testing.F) {
	for _, name := range []string{"streams", "adapter", "values", "wasi-streams", "shim-falls"} {
		f.Add(fixture(f, name))
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		in := bytes.Clone(wasm)
		out, mode := Streams(wasm, fixtureCompiler)
		if !bytes.Equal(wasm, in) {
			t.Fatal("the input was modified")
		}
		if mode == Slow && !bytes.Equal(out, in) {
			t.Fatal("not rewritten, yet changed")
		}
		if mode != Slow && !isComponent(out) {
			t.Fatal("rewritten into something that is not a component")
		}
	})
}

// checkLatin1 fails unless s is valid UTF-8 whose chars are b's bytes and
// Latin1Decode gives b back.
func checkLatin1(t *testing.T, b []byte, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("Latin1Encode(% x) is not UTF-8", b)
	}
	got := make([]byte, 0, len(b))
	for _, r := range s {
		got = append(got, byte(r))
		if r > 0xff {
			t.Fatalf("Latin1Encode(% x) has char %U", b, r)
		}
	}
	if !bytes.Equal(got, b) {
		t.Fatalf("Latin1Encode(% x) holds % x", b, got)
	}
	if back := Latin1Decode(s); !bytes.Equal(back, b) {
		t.Fatalf("Latin1Decode gave % x, want % x", back, b)
	}
}

func counting(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestLatin1RoundTrip(t *testing.T) {
	checkLatin1(t, nil, Latin1Encode(nil))
	mixed := append([]byte("plain ascii text, long enough for words "), counting(512)...)
	checkLatin1(t, mixed, Latin1Encode(mixed))
}

func FuzzLatin1Encode(f *testing.F) {
	f.Add([]byte("hello"))
	f.Add(counting(300))
	f.Fuzz(func(t *testing.T, b []byte) { checkLatin1(t, b, Latin1Encode(b)) })
}

// ShimString's bytes decode back as the shim's WAT decoder does: 'A' and
// the bytes when they are UTF-8, else 'P'+tail and 7 bytes in the low 7
// bits of each 8 chars.
func TestShimEncodeRoundTrip(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("text"), counting(1), counting(7), counting(8), counting(300)} {
		e := ShimEncode(b)
		if !utf8.Valid(e) {
			t.Fatalf("ShimEncode(% x) is not UTF-8", b)
		}
		if got := shimDecode(t, e); !bytes.Equal(got, b) {
			t.Fatalf("ShimEncode(% x) decodes to % x", b, got)
		}
	}
}

// shimDecode is the shim module's $decode, in Go.
func shimDecode(t *testing.T, e []byte) []byte {
	t.Helper()
	if len(e) == 0 {
		t.Fatal("empty encoding")
	}
	if e[0] == 'A' {
		return e[1:]
	}
	tail := int(e[0]) - 'P'
	if tail < 0 || tail >= 7 || (len(e)-1)%8 != 0 {
		t.Fatalf("bad packed header %q / length %d", e[0], len(e))
	}
	var out []byte
	for g := e[1:]; len(g) > 0; g = g[8:] {
		var w uint64
		for i := 7; i >= 0; i-- {
			w = w<<7 | uint64(g[i]&0x7f)
		}
		for i := 0; i < 7; i++ {
			out = append(out, byte(w>>(8*i)))
		}
	}
	if tail > 0 {
		out = out[:len(out)-(7-tail)]
	}
	return out
}
