//go:build cgo

package cm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// streamsHost serves the streams.wat import: write checks it got the
// guest's bytes (0, 1, … 255, 0, 1, …) and read returns every byte value.
func streamsHost(e *Engine, chunk []byte, bad *error) *Linker {
	l := e.NewLinker()
	path := []string{"wasi:io/streams@0.2.6"}
	l.Func(path, "write", func(c *Caller, args []Val) (Val, error) {
		b, ok := args[0].Bytes()
		if !ok {
			return Val{}, fmt.Errorf("write got %s, want bytes", args[0].Kind())
		}
		if *bad == nil && !bytes.Equal(b, chunk[:len(b)]) {
			*bad = fmt.Errorf("write got % x…, want % x…", b[:min(8, len(b))], chunk[:8])
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
	for _, slow := range []bool{false, true} {
		t.Run(fmt.Sprintf("slow=%t", slow), func(t *testing.T) {
			e := newEngine(t, Config{SlowStreams: slow})
			c := fixture(t, e, "streams.wat")
			if c.fastStreams == slow {
				t.Fatalf("fastStreams = %t with SlowStreams %t", c.fastStreams, slow)
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
				v, err := pump.Call(context.Background(), U32(3), U32(size))
				if err != nil || bad != nil {
					t.Fatalf("pump(3, %d): %v, %v", size, err, bad)
				}
				if v.U64() != uint64(3*size) {
					t.Fatalf("pump(3, %d) wrote %d bytes", size, v.U64())
				}
				v, err = drain.Call(context.Background(), U32(2), U32(size))
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
		out, changed := rewriteStreams(wasm)
		if changed || !bytes.Equal(out, wasm) {
			t.Errorf("%s was rewritten", name)
		}
	}
	for _, junk := range [][]byte{nil, []byte("\x00asm\x0d\x00\x01\x00\x07\xff"), []byte("\x00asm\x01\x00\x00\x00")} {
		if out, changed := rewriteStreams(junk); changed || !bytes.Equal(out, junk) {
			t.Errorf("junk %q was rewritten", junk)
		}
	}
}

func TestLatin1RoundTrip(t *testing.T) {
	b := counting(512)
	v := bytesToLatin1(OK(Bytes(b)))
	p, _ := v.Payload()
	if p.Kind() != KindString {
		t.Fatalf("bytesToLatin1 gave %s", p.Kind())
	}
	back, _ := bytesFromLatin1(v).Payload()
	got, ok := back.Bytes()
	if !ok || !bytes.Equal(got, b) {
		t.Fatal("latin1 round trip changed the bytes")
	}
}

// FuzzRewriteStreams: the rewriter never panics, and what it returns still
// compiles whenever the input did.
func FuzzRewriteStreams(f *testing.F) {
	for _, name := range []string{"streams.wat", "values.wat", "resource.wat"} {
		wasm, err := Wat2Wasm(mustRead(f, "testdata/"+name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(wasm)
	}
	e, err := NewEngine(Config{SlowStreams: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, changed := rewriteStreams(wasm)
		if !changed {
			return
		}
		if c, err := e.Compile(wasm); err == nil {
			c.Close()
			c2, err := e.Compile(out)
			if err != nil {
				t.Fatalf("rewritten component no longer compiles: %v", err)
			}
			c2.Close()
		}
	})
}

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
					b.SetBytes(int64(size * chunks))
					for b.Loop() {
						if _, err := f.Call(ctx, U32(chunks), U32(uint32(size))); err != nil || bad != nil {
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
// a directory of them (make guests): each must be rewritten and still
// compile.
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
			out, changed := rewriteStreams(wasm)
			if !changed {
				t.Fatal("not rewritten: the guest's wasi:io/streams import was not recognised")
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
func TestRewriteSkipsExportedByteType(t *testing.T) {
	wasm, err := Wat2Wasm(`(component
  (type $streams (instance
    (type $bytes (list u8))
    (export "bytes" (type (eq $bytes)))
    (export "write" (func (param "contents" $bytes) (result u32)))
  ))
  (import "wasi:io/streams@0.2.3" (instance $s (type $streams)))
)`)
	if err != nil {
		t.Fatal(err)
	}
	if _, changed := rewriteStreams(wasm); changed {
		t.Fatal("rewritten although the list<u8> type is exported by name")
	}
	plain, err := Wat2Wasm(`(component
  (type $streams (instance
    (type $bytes (list u8))
    (export "write" (func (param "contents" $bytes) (result u32)))
  ))
  (import "wasi:io/streams@0.2.3" (instance $s (type $streams)))
)`)
	if err != nil {
		t.Fatal(err)
	}
	if _, changed := rewriteStreams(plain); !changed {
		t.Fatal("the plain streams import was not rewritten")
	}
}
