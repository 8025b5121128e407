// Package rewrite rewrites component binaries, in pure Go, so that
// wasi:io/streams bytes cross wasmtime's C API as strings: in place (the
// streams instance's list<u8> become latin1 strings) or by nesting the
// guest inside an outer component whose read shim decodes them (shim.go).
// internal/wasm/cm applies it before compiling a guest and converts the
// values its host functions see; anything this package does not
// understand is left unchanged.
package rewrite

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"strings"
	"unsafe"
)

// The byte fast path for wasi:io/streams.
//
// wasmtime's C API moves a list<u8> as one C value and one Rust value per
// byte (a few MB/s), but a string as one buffer. So, before compiling a
// guest, cm rewrites the types of the wasi:io/streams instance it imports:
// every list<u8> a function of that instance takes (write's contents) or
// returns (read's result<list<u8>, stream-error>) becomes string, and every
// canon lower of a function from that instance gets
// string-encoding=latin1+utf16. Both have the same core ABI ((ptr, len),
// alignment 4), so the guest's code is untouched; with latin1 each guest
// byte is one char U+0000–U+00FF, so any bytes are valid. Host functions
// serving that instance see bytes (cm's bytesFromLatin1 on arguments,
// bytesToStrings on results), so the host code is the same either way.
//
// Lowering a latin1+utf16 result asks the guest's realloc for the string's
// UTF-8 length first (up to twice the bytes) with alignment 2 and shrinks
// afterwards. A general allocator takes that, but the preview1 adapter's
// cabi_import_realloc places one allocation straight into the caller's
// read buffer and refuses both: it traps on non-ASCII data and misplaces a
// read into an odd buffer. So when a read function is lowered with that
// allocator, results keep list<u8> (reads take the slow path) and only
// writes are rewritten. Lifting a write's string from an odd address is
// fine with this wasmtime (streams_test.go writes from one).
//
// The rewrite walks only the outer component's sections; anything it does
// not understand leaves the binary unchanged (the slow path still works).

// adapterRealloc is the preview1 adapter's import allocator (see above).
const adapterRealloc = "cabi_import_realloc"

// Mode says how a component was rewritten.
type Mode uint8

const (
	Slow      Mode = iota // not rewritten
	Writes                // list<u8> parameters only
	ReadWrite             // parameters and read results
	Shim                  // parameters, and reads through the shim (shim.go)
)

// FastStreams reports whether an import is a wasi:io/streams 0.2 instance.
func FastStreams(name string) bool {
	return strings.HasPrefix(name, "wasi:io/streams@0.2.")
}

var errRewrite = errors.New("component shape not understood")

// onRewriteError, deferred, turns a walk that met a shape it does not
// understand (a panic with errRewrite) into fallback's result.
func onRewriteError(fallback func()) {
	if r := recover(); r != nil {
		if r != errRewrite {
			panic(r)
		}
		fallback()
	}
}

// isComponent reports whether b starts with a component binary's preamble.
func isComponent(b []byte) bool {
	return len(b) >= 8 && string(b[:4]) == "\x00asm" && b[6] == 0x01 && b[7] == 0x00
}

type reader struct {
	b   []byte
	pos int
}

func (r *reader) byte_() byte {
	if r.pos >= len(r.b) {
		panic(errRewrite)
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *reader) peek() byte {
	if r.pos >= len(r.b) {
		panic(errRewrite)
	}
	return r.b[r.pos]
}

func (r *reader) u32() uint32 {
	var v uint32
	for shift := 0; ; shift += 7 {
		if shift > 28 {
			panic(errRewrite)
		}
		c := r.byte_()
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) str() string {
	n := int(r.u32())
	if n < 0 || r.pos+n > len(r.b) {
		panic(errRewrite)
	}
	s := string(r.b[r.pos : r.pos+n])
	r.pos += n
	return s
}

// valtype: a primitive (one byte 0x40–0x7f read as a negative s33) or a
// type index.
func (r *reader) valtype() {
	c := r.peek()
	if c&0x80 == 0 && c >= 0x40 {
		r.pos++
		return
	}
	for r.byte_()&0x80 != 0 {
	}
}

func (r *reader) optional(f func()) {
	switch r.byte_() {
	case 0:
	case 1:
		f()
	default:
		panic(errRewrite)
	}
}

func (r *reader) vec(f func()) {
	for n := r.u32(); n > 0; n-- {
		f()
	}
}

func (r *reader) deftype() {
	switch c := r.peek(); c {
	case 0x40, 0x43: // func
		r.functype()
	case 0x41: // component
		r.pos++
		r.vec(func() {
			if r.peek() == 0x03 {
				r.pos++
				r.externName()
				r.externdesc()
				return
			}
			r.instancedecl()
		})
	case 0x42: // instance
		r.pos++
		r.vec(r.instancedecl)
	case 0x3f: // resource
		r.pos++
		if r.byte_() != 0x7f {
			panic(errRewrite)
		}
		r.optional(func() { r.u32() })
	default:
		r.defvaltype()
	}
}

// functype reads a function type and returns its parameter names.
func (r *reader) functype() []string {
	r.pos++
	var names []string
	r.vec(func() {
		names = append(names, r.str())
		r.valtype()
	})
	switch r.byte_() {
	case 0x00:
		r.valtype()
	case 0x01:
		if r.byte_() != 0 {
			panic(errRewrite)
		}
	default:
		panic(errRewrite)
	}
	return names
}

func (r *reader) defvaltype() {
	c := r.byte_()
	switch {
	case c >= 0x73 && c <= 0x7f, c == 0x64: // primitives
	case c == 0x72:
		r.vec(func() { r.str(); r.valtype() })
	case c == 0x71:
		r.vec(func() { r.str(); r.optional(r.valtype); r.optional(func() { r.u32() }) })
	case c == 0x70, c == 0x6b:
		r.valtype()
	case c == 0x67:
		r.valtype()
		r.u32()
	case c == 0x6f:
		r.vec(r.valtype)
	case c == 0x6e, c == 0x6d:
		r.vec(func() { r.str() })
	case c == 0x6a:
		r.optional(r.valtype)
		r.optional(r.valtype)
	case c == 0x69, c == 0x68:
		r.u32()
	case c == 0x66, c == 0x65:
		r.optional(r.valtype)
	default:
		panic(errRewrite)
	}
}

func (r *reader) instancedecl() {
	switch r.byte_() {
	case 0x01:
		r.deftype()
	case 0x02:
		r.alias()
	case 0x04:
		r.externName()
		r.externdesc()
	default: // core types inside instance types: not needed by our guests
		panic(errRewrite)
	}
}

func (r *reader) externName() string {
	if r.byte_() != 0x00 {
		panic(errRewrite)
	}
	return r.str()
}

// externdesc returns its kind byte and index (when it has one).
func (r *reader) externdesc() (byte, uint32) {
	switch k := r.byte_(); k {
	case 0x00:
		if r.byte_() != 0x11 {
			panic(errRewrite)
		}
		return k, r.u32()
	case 0x01, 0x04, 0x05:
		return k, r.u32()
	case 0x02:
		switch r.byte_() {
		case 0x00:
			r.u32()
		case 0x01:
			r.valtype()
		default:
			panic(errRewrite)
		}
		return k, 0
	case 0x03:
		switch r.byte_() {
		case 0x00:
			r.u32()
		case 0x01:
		default:
			panic(errRewrite)
		}
		return k, 0
	default:
		panic(errRewrite)
	}
}

// sort returns 0x00 for core sorts (after reading the core sort byte).
func (r *reader) sort() byte {
	s := r.byte_()
	if s == 0x00 {
		r.byte_()
	}
	return s
}

// aliasDecl is what the rewrite needs of an alias: its sort (coreSort for
// core sorts, when sort is 0x00) and, for an export alias, the instance and
// name (core says it is a core instance's export).
type aliasDecl struct {
	sort, coreSort byte
	inst           uint32
	name           string
	export, core   bool
}

func (r *reader) alias() aliasDecl {
	a := aliasDecl{sort: r.byte_()}
	if a.sort == 0x00 {
		a.coreSort = r.byte_()
	}
	switch r.byte_() {
	case 0x00:
		a.inst, a.name, a.export = r.u32(), r.str(), true
	case 0x01:
		a.inst, a.name, a.export, a.core = r.u32(), r.str(), true, true
	case 0x02:
		r.u32()
		r.u32()
	default:
		panic(errRewrite)
	}
	return a
}

type patch struct {
	start, end int
	repl       []byte
}

type section struct {
	id         byte
	start, end int // content range
}

type funcOrigin struct {
	inst   int // -1 when not an alias of an instance export
	name   string
	export bool
}

// Streams returns the component with the wasi:io/streams byte fast
// path applied, and how: writes patched in place and reads through the
// shim when wrapReads takes the component, else both patched in place
// (reads only when no read is lowered with the adapter's allocator).
func Streams(wasm []byte, wat Compiler) ([]byte, Mode) {
	w, _ := InPlace(wasm, false)
	if out, ok := wrapReads(w, wat); ok {
		return out, Shim
	}
	return InPlace(wasm, true)
}

// InPlace applies the in-place rewrite: parameters always, read
// results when reads is set and no read is lowered with the adapter's
// allocator.
func InPlace(wasm []byte, reads bool) (out []byte, mode Mode) {
	defer onRewriteError(func() { out, mode = wasm, Slow })
	if !isComponent(wasm) {
		return wasm, Slow
	}
	r := &reader{b: wasm, pos: 8}
	var (
		sections  []section
		typeStart []int // per type index: offset of a type-section entry, or -1
		instances []string
		streamsTy = map[int]int{} // instance index -> offset of its instance type
		funcs     []funcOrigin
		coreFuncs []string // per core func index: the core export it aliases, or ""
		lowers    []struct{ optsStart, optsEnd, fn int }
	)
	for r.pos < len(wasm) {
		id := r.byte_()
		size := int(r.u32())
		start := r.pos
		if size < 0 || start+size > len(wasm) {
			panic(errRewrite)
		}
		sections = append(sections, section{id: id, start: start, end: start + size})
		sr := &reader{b: wasm[:start+size], pos: start}
		switch id {
		case 5: // instance
			sr.vec(func() {
				switch sr.byte_() {
				case 0x00:
					sr.u32()
					sr.vec(func() { sr.str(); sr.sort(); sr.u32() })
				case 0x01:
					sr.vec(func() { sr.externName(); sr.sort(); sr.u32() })
				default:
					panic(errRewrite)
				}
				instances = append(instances, "")
			})
		case 6: // alias
			sr.vec(func() {
				a := sr.alias()
				switch a.sort {
				case 0x00:
					if a.coreSort == 0x00 {
						name := ""
						if a.core {
							name = a.name
						}
						coreFuncs = append(coreFuncs, name)
					}
				case 0x01:
					o := funcOrigin{inst: -1}
					if a.export && !a.core {
						o = funcOrigin{inst: int(a.inst), name: a.name, export: true}
					}
					funcs = append(funcs, o)
				case 0x03:
					typeStart = append(typeStart, -1)
				case 0x05:
					instances = append(instances, "")
				}
			})
		case 7: // type
			sr.vec(func() {
				typeStart = append(typeStart, sr.pos)
				sr.deftype()
			})
		case 8: // canon
			sr.vec(func() {
				switch op := sr.byte_(); op {
				case 0x00: // lift
					if sr.byte_() != 0 {
						panic(errRewrite)
					}
					sr.u32()
					sr.opts()
					sr.u32()
					funcs = append(funcs, funcOrigin{inst: -1})
				case 0x01: // lower
					if sr.byte_() != 0 {
						panic(errRewrite)
					}
					fn := int(sr.u32())
					os := sr.pos
					sr.opts()
					lowers = append(lowers, struct{ optsStart, optsEnd, fn int }{os, sr.pos, fn})
					coreFuncs = append(coreFuncs, "")
				case 0x02, 0x03, 0x04, 0x07: // resource.new/drop/rep
					sr.u32()
					coreFuncs = append(coreFuncs, "")
				default:
					panic(errRewrite)
				}
			})
		case 10: // import
			sr.vec(func() {
				name := sr.externName()
				switch k, idx := sr.externdesc(); k {
				case 0x01:
					funcs = append(funcs, funcOrigin{inst: -1})
				case 0x03:
					typeStart = append(typeStart, -1)
				case 0x05:
					if FastStreams(name) {
						if int(idx) >= len(typeStart) || typeStart[idx] < 0 {
							panic(errRewrite)
						}
						streamsTy[len(instances)] = typeStart[idx]
					}
					instances = append(instances, name)
				}
			})
		case 11: // export
			sr.vec(func() {
				sr.externName()
				sort := sr.sort()
				sr.u32()
				sr.optional(func() { sr.externdesc() })
				switch sort {
				case 0x01:
					funcs = append(funcs, funcOrigin{inst: -1})
				case 0x03:
					typeStart = append(typeStart, -1)
				case 0x05:
					instances = append(instances, "")
				}
			})
		}
		if id == 5 || id == 6 || id == 7 || id == 8 || id == 10 || id == 11 {
			if sr.pos != start+size {
				panic(errRewrite)
			}
		}
		r.pos = start + size
	}

	if len(streamsTy) == 0 {
		return wasm, Slow
	}
	var patches []patch
	adapterReads := false // a streams function is lowered with the adapter's realloc
	for _, lw := range lowers {
		if lw.fn >= len(funcs) {
			panic(errRewrite)
		}
		o := funcs[lw.fn]
		if _, ok := streamsTy[o.inst]; !o.export || !ok {
			continue
		}
		opts := wasm[lw.optsStart:lw.optsEnd]
		if ra, ok := reallocOpt(opts); ok && (int(ra) >= len(coreFuncs) || coreFuncs[ra] == adapterRealloc) {
			adapterReads = true
		}
		patches = append(patches, patch{lw.optsStart, lw.optsEnd, latin1Opts(opts)})
	}
	var params, results []patch
	for _, pos := range streamsTy {
		p, r := streamsTypePatches(wasm, pos, reads && !adapterReads)
		params, results = append(params, p...), append(results, r...)
	}
	switch {
	case len(params) == 0 && len(results) == 0:
		return wasm, Slow
	case len(results) == 0:
		mode = Writes
	default:
		mode = ReadWrite
	}
	patches = append(append(patches, params...), results...)
	return applyPatches(wasm, sections, patches), mode
}

// reallocOpt returns the core func index of a canon realloc option.
func reallocOpt(opts []byte) (idx uint32, ok bool) {
	r := &reader{b: opts}
	r.vec(func() {
		switch r.byte_() {
		case 0x00, 0x01, 0x02, 0x06:
		case 0x04:
			idx, ok = r.u32(), true
		case 0x03, 0x05, 0x07:
			r.u32()
		default:
			panic(errRewrite)
		}
	})
	return idx, ok
}

func (r *reader) opts() {
	r.vec(func() {
		switch r.byte_() {
		case 0x00, 0x01, 0x02, 0x06:
		case 0x03, 0x04, 0x05, 0x07:
			r.u32()
		default:
			panic(errRewrite)
		}
	})
}

// streamsTypePatches finds, in the instance type at pos, the list<u8>
// parameters of its functions and (with reads) the result types whose ok
// case is a list<u8>, and turns each into string. Patches are made where
// the list is used, not on the list<u8> declaration, so reads and writes
// are independent. Results are not patched if such a result type is a
// parameter of a function or is exported by name (it could be used
// outside the streams functions).
func streamsTypePatches(wasm []byte, pos int, reads bool) (params, results []patch) {
	r := &reader{b: wasm, pos: pos}
	if r.byte_() != 0x42 {
		panic(errRewrite)
	}
	listU8 := map[uint32]bool{}
	patched := map[uint32]bool{}
	var types uint32 // the instance type's local type index space
	r.vec(func() {
		switch r.peek() {
		case 0x01:
			switch at := r.pos + 1; {
			case at+1 < len(wasm) && wasm[at] == 0x70 && wasm[at+1] == 0x7d:
				listU8[types] = true
			case reads && at < len(wasm) && wasm[at] == 0x6a:
				if p, ok := okCaseListPatch(wasm, at, listU8); ok {
					results = append(results, p)
					patched[types] = true
				}
			case at < len(wasm) && (wasm[at] == 0x40 || wasm[at] == 0x43):
				params = append(params, paramPatches(wasm, at, listU8, patched)...)
			}
			types++
			r.instancedecl()
		case 0x02:
			r.pos++
			if a := r.alias(); a.sort == 0x03 {
				types++
			}
		case 0x04:
			r.pos++
			r.externName()
			start := r.pos
			if k, _ := r.externdesc(); k == 0x03 {
				// (type (eq i)) re-exports local type i under a name.
				if wasm[start+1] == 0x00 {
					eq := &reader{b: wasm, pos: start + 2}
					if patched[eq.u32()] {
						panic(errRewrite)
					}
				}
				types++
			}
		default:
			r.instancedecl()
		}
	})
	return params, results
}

// okCaseListPatch: for the result type at pos, a patch turning its ok case
// into string when that case is a type index in listU8.
func okCaseListPatch(wasm []byte, pos int, listU8 map[uint32]bool) (patch, bool) {
	r := &reader{b: wasm, pos: pos + 1}
	if r.byte_() != 0x01 {
		return patch{}, false
	}
	start := r.pos
	if c := r.peek(); c&0x80 == 0 && c >= 0x40 {
		return patch{}, false // a primitive
	}
	if !listU8[r.u32()] {
		return patch{}, false
	}
	return patch{start, r.pos, []byte{0x73}}, true
}

// paramPatches returns patches turning the list<u8> parameters of the
// function type at pos into string, and refuses the rewrite when it takes
// a patched result type.
func paramPatches(wasm []byte, pos int, listU8, patched map[uint32]bool) []patch {
	var out []patch
	r := &reader{b: wasm, pos: pos + 1}
	r.vec(func() {
		r.str()
		if c := r.peek(); c&0x80 == 0 && c >= 0x40 {
			r.pos++
			return
		}
		start := r.pos
		switch idx := r.u32(); {
		case patched[idx]:
			panic(errRewrite)
		case listU8[idx]:
			out = append(out, patch{start, r.pos, []byte{0x73}})
		}
	})
	return out
}

// latin1Opts re-encodes canon options with string-encoding=latin1+utf16.
func latin1Opts(opts []byte) []byte {
	r := &reader{b: opts}
	var kept [][]byte
	r.vec(func() {
		s := r.pos
		switch r.byte_() {
		case 0x00, 0x01, 0x02:
			return // a string encoding: replaced below
		case 0x06:
		case 0x03, 0x04, 0x05, 0x07:
			r.u32()
		default:
			panic(errRewrite)
		}
		kept = append(kept, opts[s:r.pos])
	})
	out := appendU32(nil, uint32(len(kept)+1))
	for _, k := range kept {
		out = append(out, k...)
	}
	return append(out, 0x02)
}

func applyPatches(wasm []byte, sections []section, patches []patch) []byte {
	out := append([]byte(nil), wasm[:8]...)
	for _, s := range sections {
		var content []byte
		at := s.start
		for _, p := range sortedPatches(patches, s.start, s.end) {
			content = append(content, wasm[at:p.start]...)
			content = append(content, p.repl...)
			at = p.end
		}
		content = append(content, wasm[at:s.end]...)
		out = append(out, s.id)
		out = appendU32(out, uint32(len(content)))
		out = append(out, content...)
	}
	return out
}

func sortedPatches(ps []patch, start, end int) []patch {
	var in []patch
	for _, p := range ps {
		if p.start >= start && p.end <= end {
			in = append(in, p)
		}
	}
	for i := 1; i < len(in); i++ {
		for j := i; j > 0 && in[j].start < in[j-1].start; j-- {
			in[j], in[j-1] = in[j-1], in[j]
		}
	}
	return in
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

const highBits = 0x8080808080808080

// Latin1Decode maps the UTF-8 of a string whose chars are all U+0000–U+00FF
// back to one byte per char. ASCII runs are copied a word at a time: stream
// data is mostly ASCII.
func Latin1Decode(s string) []byte {
	in := unsafe.Slice(unsafe.StringData(s), len(s))
	out := make([]byte, len(s))
	n := 0
	for i := 0; i < len(in); {
		if i+8 <= len(in) && binary.LittleEndian.Uint64(in[i:])&highBits == 0 {
			copy(out[n:n+8], in[i:i+8])
			i, n = i+8, n+8
			continue
		}
		c := in[i]
		if c >= 0x80 && i+1 < len(in) {
			c = c<<6 | in[i+1]&0x3f
			i++
		}
		out[n] = c
		i, n = i+1, n+1
	}
	return out[:n]
}

// Latin1Encode makes the UTF-8 string whose chars are the bytes of b.
// ASCII runs are copied a word at a time (stream data is mostly text);
// other bytes go through a table without branching on the byte, which
// binary data would mispredict half the time.
func Latin1Encode(b []byte) string {
	high, i := 0, 0
	for ; i+8 <= len(b); i += 8 {
		high += bits.OnesCount64(binary.LittleEndian.Uint64(b[i:]) & highBits)
	}
	for _, c := range b[i:] {
		high += int(c >> 7)
	}
	// One byte of slack: every byte stores two, the second overwritten
	// by the next unless the byte needed both.
	out := make([]byte, len(b)+high+1)
	n := 0
	for i := 0; i < len(b); {
		if i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&highBits == 0 {
			copy(out[n:n+8], b[i:i+8])
			i, n = i+8, n+8
			continue
		}
		c := b[i]
		binary.LittleEndian.PutUint16(out[n:], latin1UTF8[c])
		n += 1 + int(c>>7)
		i++
	}
	return unsafe.String(unsafe.SliceData(out), n)
}

// latin1UTF8 holds each byte's UTF-8 as a char U+0000–U+00FF, little
// endian: ASCII in the low byte, two bytes for the rest.
var latin1UTF8 = func() (t [256]uint16) {
	for c := range t {
		if c < 0x80 {
			t[c] = uint16(c)
		} else {
			t[c] = uint16(0xc0|c>>6) | uint16(0x80|c&0x3f)<<8
		}
	}
	return t
}()
