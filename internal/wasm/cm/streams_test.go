//go:build cgo

package cm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/wasm/rewrite"
)

// streamsHost serves the streams.wat import: write checks it got a run of
// the guest's bytes (each one more than the last, wrapping) and read
// returns every byte value.
func streamsHost(e *Engine, chunk []byte, bad *error) *Linker {
	l := e.NewLinker()
	path := []string{"wasi:io/streams@0.2.6"}
	l.Func(path, "write", func(c *Caller, args []Val) (Val, error) {
		b, ok := args[0].Bytes()
		if !ok {
			return Val{}, fmt.Errorf("write got %s, want bytes", args[0].Kind())
		}
		for i := 1; i < len(b) && *bad == nil; i++ {
			if b[i] != b[i-1]+1 {
				*bad = fmt.Errorf("write got % x at %d", b[i-1:i+1], i-1)
			}
		}
		return U32(uint32(len(b))), nil
	})
	l.Func(path, "read", func(c *Caller, args []Val) (Val, error) {
		return OK(Bytes(chunk[:args[0].U64()])), nil
	})
	return l
}

func counting(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestStreamsFastPath(t *testing.T) {
	for _, tc := range []struct {
		name    string
		slow    bool
		adapter bool
	}{{"fast", false, false}, {"slow", true, false}, {"adapter-realloc", false, true}} {
		slow := tc.slow
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, Config{SlowStreams: slow})
			c := fixture(t, e, "streams.wat")
			if tc.adapter {
				var err error
				if c, err = e.CompileText(adapterStreams(t)); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
			}
			if (c.streams != rewrite.Slow) == slow {
				t.Fatalf("streams mode %d with SlowStreams %t", c.streams, slow)
			}
			chunk := counting(64 << 10)
			var bad error
			s := newStore(t, e, Limits{}, nil)
			inst, err := streamsHost(e, chunk, &bad).Instantiate(context.Background(), s, c)
			if err != nil {
				t.Fatal(err)
			}
			pump, _ := inst.Func("pump")
			drain, _ := inst.Func("drain")
			for _, size := range []uint32{0, 1, 127, 128, 300, 4096} {
				for _, off := range []uint32{0, 1} { // 1: from an odd address
					v, err := pump.Call(context.Background(), U32(3), U32(size), U32(off))
					if err != nil || bad != nil {
						t.Fatalf("pump(3, %d, %d): %v, %v", size, off, err, bad)
					}
					if v.U64() != uint64(3*size) {
						t.Fatalf("pump(3, %d, %d) wrote %d bytes", size, off, v.U64())
					}
				}
				v, err := drain.Call(context.Background(), U32(2), U32(size))
				if err != nil {
					t.Fatal(err)
				}
				var want uint64
				for _, b := range chunk[:size] {
					want += 2 * uint64(b)
				}
				if v.U64() != want {
					t.Fatalf("drain(2, %d) summed %d, want %d", size, v.U64(), want)
				}
			}
		})
	}
}

func TestRewriteLeavesOtherComponents(t *testing.T) {
	for _, name := range []string{"add.wat", "values.wat", "resource.wat", "guestres.wat", "limits.wat"} {
		text := mustRead(t, "testdata/"+name)
		wasm, err := Wat2Wasm(text)
		if err != nil {
			t.Fatal(err)
		}
		out, mode := rewrite.Streams(wasm, Wat2Wasm)
		if mode != rewrite.Slow || !bytes.Equal(out, wasm) {
			t.Errorf("%s was rewritten", name)
		}
	}
	for _, junk := range [][]byte{nil, []byte("\x00asm\x0d\x00\x01\x00\x07\xff"), []byte("\x00asm\x01\x00\x00\x00")} {
		if out, mode := rewrite.Streams(junk, Wat2Wasm); mode != rewrite.Slow || !bytes.Equal(out, junk) {
			t.Errorf("junk %q was rewritten", junk)
		}
	}
}

func TestLatin1Encode(t *testing.T) {
	mixed := append([]byte("plain ascii text, long enough for words "), counting(512)...)
	v := bytesToStrings(OK(Bytes(mixed)), rewrite.Latin1Encode)
	p, _ := v.Payload()
	if p.Kind() != KindString {
		t.Fatalf("bytesToStrings gave %s", p.Kind())
	}
	if got := rewrite.Latin1Decode(p.Str()); !bytes.Equal(got, mixed) {
		t.Fatalf("the string does not decode to the bytes: % x", got)
	}
}

// rewriteFixtures are the components internal/wasm/rewrite tests without
// cgo, as binaries in its testdata: TestRewriteFixtures compiles them here
// and checks (or, with MUR_UPDATE_FIXTURES=1, writes) those files, and the
// shim modules the read shim compiles for them.
func rewriteFixtures(t *testing.T) map[string]string {
	return map[string]string{
		"streams":      mustRead(t, "testdata/streams.wat"),
		"adapter":      adapterStreams(t),
		"values":       mustRead(t, "testdata/values.wat"),
		"wasi-streams": wasiStreamsText,
		"shim-falls":   shimFallbackText,
	}
}

func TestRewriteFixtures(t *testing.T) {
	update := os.Getenv("MUR_UPDATE_FIXTURES") == "1"
	dir := filepath.Join("..", "rewrite", "testdata")
	check := func(name string, b []byte) {
		t.Helper()
		path := filepath.Join(dir, name)
		if update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%s is stale (%v): regenerate with MUR_UPDATE_FIXTURES=1 go test ./internal/wasm/cm -run TestRewriteFixtures", path, err)
		}
	}
	// The shim's modules, by the sha256 of their text: the rewrite tests'
	// compiler serves them from there.
	recording := func(text string) ([]byte, error) {
		b, err := Wat2Wasm(text)
		if err == nil {
			sum := sha256.Sum256([]byte(text))
			check(filepath.Join("shim", hex.EncodeToString(sum[:])+".wasm"), b)
		}
		return b, err
	}
	for name, text := range rewriteFixtures(t) {
		wasm, err := Wat2Wasm(text)
		if err != nil {
			t.Fatal(err)
		}
		check(name+".wasm", wasm)
		rewrite.Streams(wasm, recording)
	}
}

// adapterStreams is streams.wat with its realloc exported under the
// preview1 adapter's import allocator's name.
func adapterStreams(t testing.TB) string {
	text := strings.Replace(mustRead(t, "testdata/streams.wat"),
		`(func (export "realloc")`, `(func (export "cabi_import_realloc")`, 1)
	return strings.Replace(text, `(alias core export $libc "realloc"`, `(alias core export $libc "cabi_import_realloc"`, 1)
}

// TestRewriteAdapterLowering: a component whose read function is lowered
// with the preview1 adapter's import allocator keeps list<u8> results
// (that allocator takes neither the UTF-8-sized first allocation nor the
// 2-aligned shrink latin1 lowering makes); its writes are still rewritten.
func TestRewriteAdapterLowering(t *testing.T) {
	wasm, err := Wat2Wasm(adapterStreams(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, mode := rewrite.Streams(wasm, Wat2Wasm); mode != rewrite.Writes {
		t.Fatalf("mode %d for a component lowering reads with cabi_import_realloc, want writes only", mode)
	}
	plain, err := Wat2Wasm(mustRead(t, "testdata/streams.wat"))
	if err != nil {
		t.Fatal(err)
	}
	if _, mode := rewrite.Streams(plain, Wat2Wasm); mode != rewrite.ReadWrite {
		t.Fatalf("mode %d for the fixture with its own realloc, want reads and writes", mode)
	}
}

// FuzzRewriteStreams: the rewriter (in place and the read shim) never
// panics, and a component that compiles as given still compiles with the
// fast path on (a rewritten form that does not falls back).
func FuzzRewriteStreams(f *testing.F) {
	for _, name := range []string{"streams.wat", "values.wat", "resource.wat"} {
		wasm, err := Wat2Wasm(mustRead(f, "testdata/"+name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(wasm)
	}
	for _, text := range []string{shimFallbackText, wasiStreamsText} {
		wasm, err := Wat2Wasm(text)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(wasm)
	}
	slow, err := NewEngine(Config{SlowStreams: true})
	if err != nil {
		f.Fatal(err)
	}
	fast, err := NewEngine(Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		if _, mode := rewrite.Streams(wasm, Wat2Wasm); mode == rewrite.Slow {
			return
		}
		if c, err := slow.Compile(wasm); err == nil {
			c.Close()
			c2, err := fast.Compile(wasm)
			if err != nil {
				t.Fatalf("compiles as given but not with the fast path: %v", err)
			}
			c2.Close()
		}
	})
}

// wasiStreamsText imports wasi:io/streams as WASI guests do and exports a
// function that reads, so the read shim takes it. (A top-level function export
// whose type used the imported stream resource would not re-export from
// the outer component; such a guest compiles through the fallback.)
const wasiStreamsText = `(component $root
  (import "wasi:io/error@0.2.0" (instance $ioerr (export "error" (type (sub resource)))))
  (alias export $ioerr "error" (type $error))
  (import "wasi:io/streams@0.2.0" (instance $streams
    (alias outer $root $error (type $e'))
    (export "error" (type $e (eq $e')))
    (export "input-stream" (type $in (sub resource)))
    (type $se' (variant (case "last-operation-failed" (own $e)) (case "closed")))
    (export "stream-error" (type $se (eq $se')))
    (export "[method]input-stream.read"
      (func (param "self" (borrow $in)) (param "len" u64) (result (result (list u8) (error $se)))))
  ))
  (alias export $streams "input-stream" (type $input-stream))
  (core module $libc
    (memory (export "mem") 1)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) (i32.const 256)))
  (core instance $libc (instantiate $libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))
  (core func $read (canon lower (func $streams "[method]input-stream.read") (memory $mem) (realloc $realloc)))
  (core module $m
    (import "s" "read" (func $read (param i32 i64 i32)))
    (func (export "len") (result i32)
      (call $read (i32.const 1) (i64.const 16) (i32.const 0))
      (i32.const 0)))
  (core instance $i (instantiate $m (with "s" (instance (export "read" (func $read))))))
  (func (export "len") (result u32) (canon lift (core func $i "len")))
)`

// BenchmarkStreams moves bytes through the streams-shaped import from
// inside the guest (no export-side copies): write = guest to host, read =
// host to guest, with the fast path and without.
func BenchmarkStreams(b *testing.B) {
	const chunks = 16
	for _, slow := range []bool{false, true} {
		for _, dir := range []string{"write", "read"} {
			for _, size := range []int{4 << 10, 64 << 10} {
				name := fmt.Sprintf("%s/%s/fast=%t", dir, byteSize(size), !slow)
				b.Run(name, func(b *testing.B) {
					e := newEngine(b, Config{SlowStreams: slow})
					chunk := counting(64 << 10)
					var bad error
					s := newStore(b, e, Limits{}, nil)
					inst, err := streamsHost(e, chunk, &bad).Instantiate(context.Background(), s, fixture(b, e, "streams.wat"))
					if err != nil {
						b.Fatal(err)
					}
					fn := "pump"
					if dir == "read" {
						fn = "drain"
					}
					f, _ := inst.Func(fn)
					ctx := context.Background()
					args := []Val{U32(chunks), U32(uint32(size))}
					if dir == "write" {
						args = append(args, U32(0))
					}
					b.SetBytes(int64(size * chunks))
					for b.Loop() {
						if _, err := f.Call(ctx, args...); err != nil || bad != nil {
							b.Fatal(err, bad)
						}
					}
				})
			}
		}
	}
}

// TestRewriteRealGuests runs the streams rewrite on toolchain-built
// components (Go via jco, JS via componentize-js) when MUR_GUEST_OUT names
// a directory of them (make guests): each takes the read shim when it
// reads streams, and must still compile.
func TestRewriteRealGuests(t *testing.T) {
	dir := os.Getenv("MUR_GUEST_OUT")
	if dir == "" {
		t.Skip("MUR_GUEST_OUT not set; run after make guests")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if len(paths) == 0 {
		t.Skipf("no components in %s", dir)
	}
	e := newEngine(t, Config{})
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			wasm, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out, mode := rewrite.Streams(wasm, Wat2Wasm)
			// Every guest that reads streams takes the read shim; one that
			// only writes (stdout) gets its writes patched.
			want := rewrite.Shim
			if !bytes.Contains(wasm, []byte("[method]input-stream.read")) && !bytes.Contains(wasm, []byte("[method]input-stream.blocking-read")) {
				want = rewrite.Writes
			}
			if mode != want {
				t.Fatalf("rewrite mode %d, want %d", mode, want)
			}
			c, err := e.Compile(out)
			if err != nil {
				t.Fatalf("rewritten guest does not compile: %v", err)
			}
			c.Close()
		})
	}
}

// TestRewriteSkipsExportedByteType: when the streams instance type names
// its list<u8> (so it could be used beyond the stream functions), the
// component is left alone.
func TestRewriteModes(t *testing.T) {
	tests := []struct {
		name, decls string
		want        rewrite.Mode
	}{
		{"read result", `(type $bytes (list u8))
    (type $res (result $bytes))
    (export "read" (func (param "len" u64) (result $res)))`, rewrite.ReadWrite},
		{"write parameter only", `(type $bytes (list u8))
    (export "write" (func (param "contents" $bytes) (result u32)))`, rewrite.Writes},
		{"result type exported by name", `(type $bytes (list u8))
    (type $res (result $bytes))
    (export "res" (type (eq $res)))
    (export "read" (func (param "len" u64) (result $res)))`, rewrite.Slow},
		{"result type taken as a parameter", `(type $bytes (list u8))
    (type $res (result $bytes))
    (export "read" (func (param "len" u64) (result $res)))
    (export "echo" (func (param "r" $res)))`, rewrite.Slow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wasm, err := Wat2Wasm(`(component
  (type $streams (instance
    ` + tt.decls + `
  ))
  (import "wasi:io/streams@0.2.3" (instance $s (type $streams)))
)`)
			if err != nil {
				t.Fatal(err)
			}
			out, mode := rewrite.Streams(wasm, Wat2Wasm)
			if mode != tt.want {
				t.Fatalf("mode %d, want %d", mode, tt.want)
			}
			e := newEngine(t, Config{SlowStreams: true})
			c, err := e.Compile(out)
			if err != nil {
				t.Fatalf("result does not compile: %v", err)
			}
			c.Close()
		})
	}
}

// TestShimFallsBack: a streams instance type the read shim misjudges (an
// outer alias that is not a resource, which its reexport component
// imports as one) does not compile wrapped; Compile falls back to the
// in-place rewrite instead of failing.
func TestShimFallsBack(t *testing.T) {
	wasm, err := Wat2Wasm(shimFallbackText)
	if err != nil {
		t.Fatal(err)
	}
	if _, mode := rewrite.Streams(wasm, Wat2Wasm); mode != rewrite.Shim {
		t.Fatal("the read shim refused the component; the test needs one it takes")
	}
	c, err := newEngine(t, Config{}).Compile(wasm)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	defer c.Close()
	if c.streams != rewrite.ReadWrite {
		t.Fatalf("streams mode %d, want the in-place rewrite (%d)", c.streams, rewrite.ReadWrite)
	}
}

const shimFallbackText = `(component $root
  (type $len u64)
  (import "wasi:io/streams@0.2.3" (instance $s
    (alias outer $root $len (type $len'))
    (export "size" (type $size (eq $len')))
    (export "input-stream" (type $in (sub resource)))
    (type $se' (variant (case "closed")))
    (export "stream-error" (type $se (eq $se')))
    (export "[method]input-stream.read"
      (func (param "self" (borrow $in)) (param "len" $size) (result (result (list u8) (error $se)))))
  ))
)`

// TestShimWrapsWASIShapedStreams: a component importing streams the way
// WASI guests do is nested in the read shim, compiles, and reads.
func TestShimWrapsWASIShapedStreams(t *testing.T) {
	wasm, err := Wat2Wasm(wasiStreamsText)
	if err != nil {
		t.Fatal(err)
	}
	out, mode := rewrite.Streams(wasm, Wat2Wasm)
	if mode != rewrite.Shim {
		t.Fatalf("mode %d, want the shim", mode)
	}
	e := newEngine(t, Config{})
	c, err := e.Compile(wasm)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	defer c.Close()
	if c.streams != rewrite.Shim || len(out) <= len(wasm) {
		t.Fatalf("compiled with mode %d", c.streams)
	}
}
