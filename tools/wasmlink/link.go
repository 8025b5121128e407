package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// ArenaMagic opens the arena descriptor the Go guest SDK keeps in its
// data (sdk/go/internal/abi). The post-link step finds the descriptor by
// this marker in the module's data segments; it must appear exactly once.
var ArenaMagic = []byte{'m', 'u', 'r', '-', 'a', 'r', 'e', 'n', 'a', '-', 'v', '2', 0xfe, 0xed, 0xfa, 0xce}

// Descriptor layout, offsets from the marker. The SDK writes the size, the
// arena's base address (a Go pointer, 8 bytes, of which the low 4 count)
// and 0xff filler; the post-link step writes next and mark. The arena
// itself is zero-initialized memory elsewhere, never in a data segment.
const (
	hdrSize   = 16 // u32: the arena's size
	hdrNext   = 20 // u32: the bump allocator's next free address
	hdrMark   = 24 // u32: where a reset returns next to (owned by the SDK)
	hdrBase   = 32 // u32: the arena's first byte
	hdrLength = 36
)

// Sentinel errors for the kinds of input Link refuses.
var (
	ErrNotModule     = errors.New("not a core wasm module")
	ErrNoArena       = errors.New("no murmur arena marker in the data segments")
	ErrManyArenas    = errors.New("more than one murmur arena marker")
	ErrHasRealloc    = errors.New("module already exports cabi_realloc")
	ErrMalformed     = errors.New("malformed module")
	ErrArenaTooSmall = errors.New("arena too small")
)

const (
	secType     = 1
	secImport   = 2
	secFunction = 3
	secExport   = 7
	secCode     = 10
	secData     = 11
)

type section struct {
	id   byte
	body []byte
}

// Link returns module with a `cabi_realloc` export added: a bump allocator
// over the SDK's static arena, written in plain wasm so it never re-enters
// the Go runtime. The WASI preview1 adapter allocates its state and stack
// through it, and the canonical ABI lowers strings and lists into it; the Go
// heap is never grown by anyone but Go.
func Link(module []byte) ([]byte, error) {
	if len(module) < 8 || !bytes.Equal(module[:4], []byte("\x00asm")) || binary.LittleEndian.Uint32(module[4:8]) != 1 {
		return nil, ErrNotModule
	}
	secs, err := splitSections(module[8:])
	if err != nil {
		return nil, err
	}
	find := func(id byte) *section {
		for i := range secs {
			if secs[i].id == id {
				return &secs[i]
			}
		}
		return nil
	}
	for _, id := range []byte{secType, secFunction, secExport, secCode, secData} {
		if find(id) == nil {
			return nil, fmt.Errorf("%w: no section %d", ErrMalformed, id)
		}
	}

	desc, end, err := patchArena(find(secData))
	if err != nil {
		return nil, err
	}
	typeIdx, err := ensureReallocType(find(secType))
	if err != nil {
		return nil, err
	}
	imported := uint32(0)
	if imp := find(secImport); imp != nil {
		if imported, err = countFuncImports(imp.body); err != nil {
			return nil, err
		}
	}
	defined, err := appendVec(find(secFunction), uleb(uint64(typeIdx)))
	if err != nil {
		return nil, err
	}
	funcIdx := imported + defined
	if err := addExport(find(secExport), "cabi_realloc", funcIdx); err != nil {
		return nil, err
	}
	body := reallocBody(desc+hdrNext, end)
	if _, err := appendVec(find(secCode), append(uleb(uint64(len(body))), body...)); err != nil {
		return nil, err
	}

	out := append([]byte(nil), module[:8]...)
	for _, s := range secs {
		out = append(out, s.id)
		out = append(out, uleb(uint64(len(s.body)))...)
		out = append(out, s.body...)
	}
	return out, nil
}

func splitSections(b []byte) ([]section, error) {
	var secs []section
	c := &cursor{b: b}
	for c.more() {
		id := c.byte()
		body := c.take(c.uleb())
		if c.err != nil {
			return nil, fmt.Errorf("section %d: %w", id, c.err)
		}
		secs = append(secs, section{id: id, body: append([]byte(nil), body...)})
	}
	return secs, nil
}

// patchArena finds the descriptor in an active data segment, reads the
// arena's base and size, and sets next and mark to the base. It returns
// the descriptor's address and the arena's end.
func patchArena(data *section) (desc, end uint32, err error) {
	var base, size uint32
	c := &cursor{b: data.body}
	found := 0
	for i, count := uint64(0), c.uleb(); c.err == nil && i < count; i++ {
		var offset uint32
		active := false
		switch flags := c.uleb(); flags {
		case 0, 2:
			if flags == 2 {
				c.uleb() // memory index
			}
			if c.byte() != 0x41 && c.err == nil {
				return 0, 0, fmt.Errorf("%w: data segment %d offset is not i32.const", ErrMalformed, i)
			}
			v := c.sleb32()
			if c.byte() != 0x0b && c.err == nil {
				return 0, 0, fmt.Errorf("%w: data segment %d offset expression", ErrMalformed, i)
			}
			offset, active = uint32(v), true
		case 1:
		default:
			if c.err == nil {
				return 0, 0, fmt.Errorf("%w: data segment %d flags %d", ErrMalformed, i, flags)
			}
		}
		// content aliases data.body: the descriptor is patched in place.
		content := c.take(c.uleb())
		for from := 0; active; {
			j := bytes.Index(content[from:], ArenaMagic)
			if j < 0 {
				break
			}
			at := from + j
			from = at + 1
			found++
			if found > 1 {
				return 0, 0, ErrManyArenas
			}
			if at+hdrLength > len(content) {
				return 0, 0, fmt.Errorf("%w: arena descriptor split across data segments", ErrMalformed)
			}
			base = binary.LittleEndian.Uint32(content[at+hdrBase:])
			size = binary.LittleEndian.Uint32(content[at+hdrSize:])
			if size < 8 {
				return 0, 0, ErrArenaTooSmall
			}
			if uint64(base)+uint64(size) > 1<<32 {
				return 0, 0, fmt.Errorf("%w: arena past the 4 GiB address space", ErrMalformed)
			}
			desc = offset + uint32(at)
			binary.LittleEndian.PutUint32(content[at+hdrNext:], base)
			binary.LittleEndian.PutUint32(content[at+hdrMark:], base)
		}
	}
	if c.err != nil {
		return 0, 0, fmt.Errorf("data section: %w", c.err)
	}
	if found == 0 {
		return 0, 0, ErrNoArena
	}
	return desc, base + size, nil
}

var reallocSig = []byte{0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f}

// ensureReallocType returns the index of the (i32 i32 i32 i32) -> i32
// function type, appending it when the module has none.
func ensureReallocType(types *section) (uint32, error) {
	c := &cursor{b: types.body}
	for i, count := uint64(0), c.uleb(); c.err == nil && i < count; i++ {
		start := c.pos
		if c.byte() != 0x60 && c.err == nil {
			return 0, fmt.Errorf("%w: type %d is not a function type", ErrMalformed, i)
		}
		c.take(c.uleb()) // params
		c.take(c.uleb()) // results
		if c.err == nil && bytes.Equal(c.b[start:c.pos], reallocSig) {
			return uint32(i), nil
		}
	}
	if c.err != nil {
		return 0, fmt.Errorf("type section: %w", c.err)
	}
	return appendVec(types, reallocSig)
}

func countFuncImports(b []byte) (uint32, error) {
	c := &cursor{b: b}
	funcs := uint32(0)
	for i, count := uint64(0), c.uleb(); c.err == nil && i < count; i++ {
		c.take(c.uleb()) // module name
		c.take(c.uleb()) // field name
		switch kind := c.byte(); kind {
		case 0x00: // func: type index
			c.uleb()
			funcs++
		case 0x01: // table: reftype + limits
			c.byte()
			c.limits()
		case 0x02: // memory: limits
			c.limits()
		case 0x03: // global: valtype + mutability
			c.take(2)
		default:
			if c.err == nil {
				return 0, fmt.Errorf("%w: import %d kind %d", ErrMalformed, i, kind)
			}
		}
	}
	if c.err != nil {
		return 0, fmt.Errorf("import section: %w", c.err)
	}
	return funcs, nil
}

// appendVec adds one already-encoded element to a section that is a single
// vector, and returns the index the element got.
func appendVec(s *section, elem []byte) (uint32, error) {
	c := &cursor{b: s.body}
	count := c.uleb()
	if c.err != nil {
		return 0, c.err
	}
	if count >= 1<<32-1 {
		return 0, fmt.Errorf("%w: vector of %d elements", ErrMalformed, count)
	}
	body := append(uleb(count+1), s.body[c.pos:]...)
	s.body = append(body, elem...)
	return uint32(count), nil
}

func addExport(exports *section, name string, funcIdx uint32) error {
	c := &cursor{b: exports.body}
	for i, count := uint64(0), c.uleb(); c.err == nil && i < count; i++ {
		if string(c.take(c.uleb())) == name && c.err == nil {
			return ErrHasRealloc
		}
		c.byte() // kind
		c.uleb() // index
	}
	if c.err != nil {
		return fmt.Errorf("export section: %w", c.err)
	}
	elem := append(uleb(uint64(len(name))), name...)
	elem = append(elem, 0x00)
	elem = append(elem, uleb(uint64(funcIdx))...)
	_, err := appendVec(exports, elem)
	return err
}

// reallocBody encodes cabi_realloc(old_ptr, old_len, align, new_len):
// align the next free address, trap when the arena cannot hold new_len
// bytes, bump, and copy min(old_len, new_len) bytes when reallocating.
// Nothing is ever freed here: the SDK resets next to mark once a call's
// arguments are copied into Go memory.
func reallocBody(nextAddr, end uint32) []byte {
	const (
		oldPtr, oldLen, align, newLen = 0, 1, 2, 3
		p, i, n                       = 4, 5, 6
	)
	var c []byte
	op := func(b ...byte) { c = append(c, b...) }
	get := func(l byte) { op(0x20, l) }
	set := func(l byte) { op(0x21, l) }
	i32 := func(v uint32) { op(0x41); op(sleb(int64(int32(v)))...) }

	op(1, 3, 0x7f) // locals: 3 × i32

	// p = (load(next) + align - 1) & -align
	i32(nextAddr)
	op(0x28, 2, 0) // i32.load align=4 offset=0
	get(align)
	op(0x6a)
	i32(1)
	op(0x6b)
	i32(0)
	get(align)
	op(0x6b)
	op(0x71)
	set(p)
	// trap when p > end or new_len > end - p
	get(p)
	i32(end)
	op(0x4b, 0x04, 0x40, 0x00, 0x0b) // i32.gt_u; if; unreachable; end
	get(newLen)
	i32(end)
	get(p)
	op(0x6b)
	op(0x4b, 0x04, 0x40, 0x00, 0x0b)
	// next = p + new_len
	i32(nextAddr)
	get(p)
	get(newLen)
	op(0x6a)
	op(0x36, 2, 0) // i32.store align=4 offset=0
	// copy the old bytes when reallocating
	get(oldPtr)
	op(0x04, 0x40) // if
	get(oldLen)
	get(newLen)
	get(oldLen)
	get(newLen)
	op(0x49) // i32.lt_u
	op(0x1b) // select: min(old_len, new_len)
	set(n)
	i32(0)
	set(i)
	op(0x02, 0x40) // block
	op(0x03, 0x40) // loop
	get(i)
	get(n)
	op(0x4f, 0x0d, 1) // i32.ge_u; br_if 1
	get(p)
	get(i)
	op(0x6a)
	get(oldPtr)
	get(i)
	op(0x6a)
	op(0x2d, 0, 0) // i32.load8_u
	op(0x3a, 0, 0) // i32.store8
	get(i)
	i32(1)
	op(0x6a)
	set(i)
	op(0x0c, 0)    // br 0
	op(0x0b, 0x0b) // end loop; end block
	op(0x0b)       // end if
	get(p)
	op(0x0b) // end func
	return c
}

func uleb(v uint64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, b|0x80)
			continue
		}
		return append(out, b)
	}
}

func sleb(v int64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

// cursor reads a module or section body. Every read is bounds-checked and
// the first failure sticks in err (later reads return zero values), so a
// malformed module is an error, never a panic or a read past the end.
type cursor struct {
	b   []byte
	pos int
	err error
}

func (c *cursor) more() bool { return c.err == nil && c.pos < len(c.b) }

func (c *cursor) fail(what string) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: %s at byte %d", ErrMalformed, what, c.pos)
	}
}

func (c *cursor) byte() byte {
	if c.err != nil || c.pos >= len(c.b) {
		c.fail("unexpected end")
		return 0
	}
	c.pos++
	return c.b[c.pos-1]
}

// take returns the next n bytes, aliasing the body.
func (c *cursor) take(n uint64) []byte {
	if c.err != nil || n > uint64(len(c.b)-c.pos) {
		c.fail("length overruns its section")
		return nil
	}
	out := c.b[c.pos : c.pos+int(n)]
	c.pos += int(n)
	return out
}

func (c *cursor) uleb() uint64 {
	var v uint64
	for i := 0; i < 10; i++ {
		b := c.byte()
		if c.err != nil {
			return 0
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return v
		}
	}
	c.fail("bad LEB128")
	return 0
}

func (c *cursor) sleb32() int32 {
	var v int64
	for i := 0; i < 5; i++ {
		b := c.byte()
		if c.err != nil {
			return 0
		}
		v |= int64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			if b&0x40 != 0 {
				v |= -1 << (7 * (i + 1))
			}
			return int32(v)
		}
	}
	c.fail("bad LEB128")
	return 0
}

// limits skips a table's or memory's limits: a flag byte, min, and max
// when the flag's low bit is set.
func (c *cursor) limits() {
	if c.byte()&1 != 0 {
		c.uleb()
	}
	c.uleb()
}
