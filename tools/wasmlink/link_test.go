package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// module assembles a small core module shaped like a Go guest: one
// imported function (so defined indices are offset), one memory exported
// as "memory", and data segments holding the given contents at offsets.
func module(t *testing.T, exports []string, segs map[uint32][]byte) []byte {
	t.Helper()
	sec := func(id byte, body []byte) []byte {
		return append(append([]byte{id}, uleb(uint64(len(body)))...), body...)
	}
	str := func(s string) []byte { return append(uleb(uint64(len(s))), s...) }
	out := []byte("\x00asm\x01\x00\x00\x00")
	out = append(out, sec(secType, []byte{1, 0x60, 0, 0})...)
	out = append(out, sec(secImport, append(append([]byte{1}, append(str("env"), str("f")...)...), 0x00, 0))...)
	out = append(out, sec(secFunction, []byte{1, 0})...)
	out = append(out, sec(5, []byte{1, 0, 1})...) // memory: min 1 page
	exp := uleb(uint64(len(exports) + 1))
	exp = append(append(exp, str("memory")...), 0x02, 0)
	for _, e := range exports {
		exp = append(append(exp, str(e)...), 0x00, 1)
	}
	out = append(out, sec(secExport, exp)...)
	out = append(out, sec(secCode, []byte{1, 2, 0, 0x0b})...)
	data := uleb(uint64(len(segs)))
	for off, content := range segs {
		data = append(data, 0, 0x41)
		data = append(data, sleb(int64(off))...)
		data = append(data, 0x0b)
		data = append(data, str(string(content))...)
	}
	out = append(out, sec(secData, data)...)
	return out
}

// descriptor encodes the SDK's arena descriptor for an arena of size
// bytes at base.
func descriptor(base, size uint32) []byte {
	h := append([]byte(nil), ArenaMagic...)
	h = binary.LittleEndian.AppendUint32(h, size)
	h = append(h, bytes.Repeat([]byte{0xff}, 12)...)
	return binary.LittleEndian.AppendUint64(h, uint64(base))
}

func instantiate(t *testing.T, wasm []byte) (api.Module, api.Function) {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	t.Cleanup(func() { r.Close(ctx) })
	if _, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func() {}).Export("f").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := r.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatalf("linked module does not instantiate: %v", err)
	}
	f := m.ExportedFunction("cabi_realloc")
	if f == nil {
		t.Fatal("no cabi_realloc export")
	}
	return m, f
}

func TestLinkAllocator(t *testing.T) {
	const desc, base, size = 1000, 8192, 4096
	linked, err := Link(module(t, []string{"noop"}, map[uint32][]byte{desc: descriptor(base, size)}))
	if err != nil {
		t.Fatal(err)
	}
	m, realloc := instantiate(t, linked)
	ctx := context.Background()
	call := func(old, oldLen, align, newLen uint32) (uint32, error) {
		r, err := realloc.Call(ctx, uint64(old), uint64(oldLen), uint64(align), uint64(newLen))
		if err != nil {
			return 0, err
		}
		return uint32(r[0]), nil
	}
	mem := m.Memory()
	if next, _ := mem.ReadUint32Le(desc + hdrNext); next != base {
		t.Fatalf("next = %d, want %d", next, base)
	}
	if mark, _ := mem.ReadUint32Le(desc + hdrMark); mark != base {
		t.Fatalf("mark = %d, want %d", mark, base)
	}

	tests := []struct {
		name                       string
		old, oldLen, align, newLen uint32
		want                       uint32
	}{
		{"first, aligned 8", 0, 0, 8, 10, 8192},
		{"align 4 after 10 bytes", 0, 0, 4, 4, 8204},
		{"align 1", 0, 0, 1, 3, 8208},
		{"zero length", 0, 0, 2, 0, 8212},
	}
	for _, tt := range tests {
		got, err := call(tt.old, tt.oldLen, tt.align, tt.newLen)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}

	// A reallocation copies the old bytes, truncated to the new length.
	p, _ := call(0, 0, 1, 4)
	mem.Write(p, []byte("abcd"))
	q, err := call(p, 4, 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := mem.Read(q, 4); string(b) != "abcd" {
		t.Errorf("grown copy = %q, want abcd", b)
	}
	r, _ := call(q, 8, 1, 2)
	if b, _ := mem.Read(r, 2); string(b) != "ab" {
		t.Errorf("shrunk copy = %q, want ab", b)
	}

	// Past the arena's end the allocator traps rather than touching memory
	// it does not own.
	if _, err := call(0, 0, 1, size); err == nil {
		t.Error("an allocation larger than the arena did not trap")
	}
	if _, err := call(0, 0, 1, 0xffffffff); err == nil {
		t.Error("a wrapping allocation did not trap")
	}

	// Resetting next to mark, as the SDK does, reuses the memory.
	mark, _ := mem.ReadUint32Le(desc + hdrMark)
	mem.WriteUint32Le(desc+hdrNext, mark)
	if got, _ := call(0, 0, 1, 1); got != base {
		t.Errorf("after reset got %d, want %d", got, base)
	}
}

func TestLinkRefuses(t *testing.T) {
	hdr := descriptor(8192, 4096)
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"not wasm", []byte("hello world"), ErrNotModule},
		{"no arena", module(t, nil, map[uint32][]byte{100: []byte("data")}), ErrNoArena},
		{"two arenas", module(t, nil, map[uint32][]byte{100: hdr, 9000: hdr}), ErrManyArenas},
		{"already has cabi_realloc", module(t, []string{"cabi_realloc"}, map[uint32][]byte{100: hdr}), ErrHasRealloc},
		{"tiny arena", module(t, nil, map[uint32][]byte{100: descriptor(8192, 4)}), ErrArenaTooSmall},
		{"arena past 4 GiB", module(t, nil, map[uint32][]byte{100: descriptor(0xffff0000, 1<<20)}), ErrMalformed},
		{"header cut", module(t, nil, map[uint32][]byte{100: hdr[:20]}), ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Link(tt.in); !errors.Is(err, tt.want) {
				t.Errorf("Link error = %v, want %v", err, tt.want)
			}
		})
	}
}

// FuzzLink: whatever the input, Link returns a module or an error, and a
// module it returns still parses as sections.
func FuzzLink(f *testing.F) {
	t := &testing.T{}
	f.Add(module(t, []string{"noop"}, map[uint32][]byte{1000: descriptor(8192, 4096)}))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x0b\x05\x01\x00\x41\x00\x0b"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Link(in)
		if err != nil {
			return
		}
		if _, err := splitSections(out[8:]); err != nil {
			t.Fatalf("Link produced unparsable output: %v", err)
		}
	})
}
