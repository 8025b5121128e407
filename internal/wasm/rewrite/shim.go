package rewrite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// The read shim: wasi:io/streams reads at memcpy speed for any guest.
//
// The in-place latin1 rewrite (rewrite.go) makes reads cross as strings,
// but lowering latin1 costs three passes over non-ASCII data (our UTF-8
// encoding, wasmtime's validation, its per-char latin1 loop) and does not
// work at all for guests built with the preview1 adapter. So when it can,
// cm nests the guest inside a small outer component instead:
//
//	outer
//	├─ imports: the guest's own, except that the streams instance's reads
//	│  return result<string, stream-error>
//	├─ core shim: its own memory; lowers the host's string reads (one
//	│  memcpy into shim memory) and decodes them in place to bytes
//	├─ lifts the shim's reads back to result<list<u8>, stream-error>
//	└─ the guest, instantiated with those reads in its streams instance
//	   and every other import passed through; its exports re-exported
//
// A call from the guest to a lifted read is a component-to-component
// call: wasmtime compiles it into an adapter that copies the bytes from
// shim memory into the guest's with one allocation of exactly their
// length, which even the adapter's cabi_import_realloc takes.
//
// The host sends each read as one string (ShimEncode): 'A' followed by the
// bytes when they are valid UTF-8 (the shim just skips the mode byte), or
// else 'P'+r followed by the bytes 7 at a time in the low 7 bits of 8
// ASCII chars (r: the byte count mod 7), which the shim unpacks a group
// per 64-bit load and store. ASCII is what wasmtime's UTF-8 check and
// copy handle fastest, and the string is only 8/7 of the bytes.
//
// Anything wrapReads does not recognise leaves the guest as it was, and
// the in-place rewrite is tried instead.

// shimSpaces counts the index spaces a component's import prefix defines.
type shimSpaces struct {
	types, funcs, instances, components, modules uint32
}

// shimExport is one top-level export of the guest.
type shimExport struct {
	name string
	sort byte
}

// streamsExport is one export of the streams instance type.
type streamsExport struct {
	name   string
	sort   byte     // 0x01 func, 0x03 type
	params []string // a read function's parameter names
}

const (
	readFunc         = "[method]input-stream.read"
	blockingReadFunc = "[method]input-stream.blocking-read"
)

// wrapReads returns inner nested in an outer component that serves its
// stream reads through the shim, or ok=false when inner's shape is not
// one it understands (the caller then keeps inner as it is).
func wrapReads(inner []byte, wat Compiler) (out []byte, ok bool) {
	defer onRewriteError(func() { out, ok = nil, false })
	if !isComponent(inner) {
		return nil, false
	}
	var (
		prefix    []section
		sp        shimSpaces
		typeStart []int // per type index of the prefix: offset of its definition, or -1
		imports   []instArg
		exports   []shimExport
		streams   = -1 // index of imports holding the streams instance
		streamsTy = -1 // offset of its instance type
		inPrefix  = true
	)
	r := &reader{b: inner, pos: 8}
	for r.pos < len(inner) {
		id := r.byte_()
		size := int(r.u32())
		start := r.pos
		if size < 0 || start+size > len(inner) {
			panic(errRewrite)
		}
		sr := &reader{b: inner[:start+size], pos: start}
		switch {
		case id == 0: // custom: not needed in the outer
		case inPrefix && id == 7:
			sr.vec(func() {
				typeStart = append(typeStart, sr.pos)
				sr.deftype()
				sp.types++
			})
		case inPrefix && id == 6:
			sr.vec(func() {
				a := sr.alias()
				switch a.sort {
				case 0x01:
					sp.funcs++
				case 0x03:
					typeStart = append(typeStart, -1)
					sp.types++
				case 0x04:
					sp.components++
				case 0x05:
					sp.instances++
				default: // core or value aliases before any core instance
					panic(errRewrite)
				}
			})
		case inPrefix && id == 10:
			sr.vec(func() {
				name := sr.externName()
				imp := instArg{name: name}
				switch k, idx := sr.externdesc(); k {
				case 0x00:
					imp.sort, imp.idx = []byte{0x00, 0x11}, sp.modules
					sp.modules++
				case 0x01:
					imp.sort, imp.idx = []byte{0x01}, sp.funcs
					sp.funcs++
				case 0x03:
					imp.sort, imp.idx = []byte{0x03}, sp.types
					typeStart = append(typeStart, -1)
					sp.types++
				case 0x04:
					imp.sort, imp.idx = []byte{0x04}, sp.components
					sp.components++
				case 0x05:
					if FastStreams(name) {
						if streams >= 0 || int(idx) >= len(typeStart) || typeStart[idx] < 0 {
							panic(errRewrite)
						}
						streams, streamsTy = len(imports), typeStart[idx]
					}
					imp.sort, imp.idx = []byte{0x05}, sp.instances
					sp.instances++
				default: // values
					panic(errRewrite)
				}
				imports = append(imports, imp)
			})
		case id == 10: // an import after the prefix: not a shape we copy
			panic(errRewrite)
		case id == 11:
			inPrefix = false
			sr.vec(func() {
				name := sr.externName()
				s := sr.byte_()
				if s == 0x00 || s == 0x02 {
					panic(errRewrite) // core sorts and values
				}
				sr.u32()
				sr.optional(func() { sr.externdesc() })
				exports = append(exports, shimExport{name: name, sort: s})
			})
		default:
			inPrefix = false
		}
		if inPrefix && id != 0 {
			if sr.pos != start+size {
				panic(errRewrite)
			}
			prefix = append(prefix, section{id: id, start: start, end: start + size})
		}
		r.pos = start + size
	}
	if streams < 0 {
		return nil, false
	}
	_, results := streamsTypePatches(inner, streamsTy, true)
	decls := streamsDecls(inner, streamsTy)
	var reads []streamsExport
	for _, d := range exportsOf(decls) {
		if d.name == readFunc || d.name == blockingReadFunc {
			if len(d.params) != 2 {
				panic(errRewrite)
			}
			reads = append(reads, d)
		}
	}
	if len(results) == 0 || len(reads) == 0 {
		return nil, false
	}
	for _, need := range []string{"input-stream", "stream-error"} {
		if !hasExport(exportsOf(decls), need, 0x03) {
			return nil, false
		}
	}
	names := make([]string, len(reads))
	for i, d := range reads {
		names[i] = d.name
	}
	mods, err := shimModules(names, wat)
	if err != nil {
		return nil, false
	}
	return buildOuter(inner, prefix, results, sp, imports, exports, imports[streams].idx, decls, reads, mods), true
}

func hasExport(decls []streamsExport, name string, sort byte) bool {
	for _, d := range decls {
		if d.name == name && d.sort == sort {
			return true
		}
	}
	return false
}

// streamsDecl is one declaration of the streams instance type, as the
// reexport component needs it.
type streamsDecl struct {
	kind  byte   // 0x01 type, 0x02 outer alias, 0x04 export
	body  []byte // a type's definition, or a type export's bounds
	outer uint32 // an outer alias's type index in the enclosing component
	local uint32 // the local type index a type, alias or type export creates
	streamsExport
	fnType uint32 // a function export's local type index
}

// streamsDecls reads the declarations of the instance type at pos.
func streamsDecls(wasm []byte, pos int) []streamsDecl {
	r := &reader{b: wasm, pos: pos}
	if r.byte_() != 0x42 {
		panic(errRewrite)
	}
	funcTypes := map[uint32][]string{} // local type index -> parameter names
	var types uint32
	var out []streamsDecl
	r.vec(func() {
		d := streamsDecl{kind: r.byte_(), local: types}
		switch d.kind {
		case 0x01:
			start := r.pos
			if c := r.peek(); c == 0x40 || c == 0x43 {
				funcTypes[types] = r.functype()
			} else {
				r.deftype()
			}
			d.body = wasm[start:r.pos]
			types++
		case 0x02:
			if r.byte_() != 0x03 || r.byte_() != 0x02 || r.u32() != 1 {
				panic(errRewrite) // only outer type aliases to the enclosing component
			}
			d.outer = r.u32()
			types++
		case 0x04:
			d.name = r.externName()
			start := r.pos
			switch k, idx := r.externdesc(); k {
			case 0x01:
				d.sort, d.fnType, d.params = 0x01, idx, funcTypes[idx]
			case 0x03:
				d.sort, d.body = 0x03, wasm[start+1:r.pos]
				types++
			default:
				panic(errRewrite)
			}
		default:
			panic(errRewrite)
		}
		out = append(out, d)
	})
	return out
}

// exportsOf returns the named exports among decls.
func exportsOf(decls []streamsDecl) []streamsExport {
	var out []streamsExport
	for _, d := range decls {
		if d.kind == 0x04 {
			out = append(out, d.streamsExport)
		}
	}
	return out
}

// reexportArg is an import of the reexport component: an outer type it
// needs (outer, when byOuter) or a streams export by name.
type reexportArg struct {
	name    string
	sort    byte
	byOuter bool
	outer   uint32
	export  string
}

// reexportComponent builds the component whose instance is the guest's
// streams instance. A bag of exports cannot be it: a [method] export must
// name its resource through an export of the same component. So the
// functions are imported under plain names, with the declared types (made
// of imports, as an import's must be), and exported under their own names
// ascribed a copy of those types made of the component's exports.
//
// Its items follow the instance type's declarations one to one, so the
// declarations' type indices hold unchanged: a type is defined, an outer
// alias becomes a resource import (a component may not alias an outer
// resource), a type export becomes a type import. Then come the type
// exports, a copy of every type definition with named types replaced by
// their exports, and the functions.
func reexportComponent(decls []streamsDecl) ([]byte, []reexportArg) {
	out := []byte("\x00asm\x0d\x00\x01\x00")
	var args []reexportArg
	var types uint32
	for _, d := range decls {
		switch d.kind {
		case 0x01:
			out = appendSection(out, 7, 1, d.body)
			types++
		case 0x02:
			name := fmt.Sprintf("outer-t%d", d.local)
			imp := appendName([]byte{0x00}, name)
			out = appendSection(out, 10, 1, append(imp, 0x03, 0x01))
			args = append(args, reexportArg{name: name, sort: 0x03, byOuter: true, outer: d.outer})
			types++
		case 0x04:
			if d.sort == 0x03 {
				imp := appendName([]byte{0x00}, d.name)
				out = appendSection(out, 10, 1, append(append(imp, 0x03), d.body...))
				args = append(args, reexportArg{name: d.name, sort: 0x03, export: d.name})
				types++
			}
		}
	}
	// Type exports: each makes a new index, the one functions must use.
	remap := map[uint32]uint32{}
	for _, d := range decls {
		if d.kind == 0x04 && d.sort == 0x03 {
			ex := appendName([]byte{0x00}, d.name)
			ex = append(ex, 0x03)
			ex = appendU32(ex, d.local)
			out = appendSection(out, 11, 1, append(ex, 0x00))
			remap[d.local] = types
			types++
		}
	}
	for _, d := range decls {
		if d.kind == 0x01 {
			body := remapDeftype(d.body, remap)
			out = appendSection(out, 7, 1, body)
			remap[d.local] = types
			types++
		}
	}
	var funcs uint32
	for _, d := range decls {
		if d.kind == 0x04 && d.sort == 0x01 {
			ty, ok := remap[d.fnType]
			if !ok {
				panic(errRewrite)
			}
			name := fmt.Sprintf("func-f%d", funcs)
			imp := appendName([]byte{0x00}, name)
			imp = append(imp, 0x01)
			out = appendSection(out, 10, 1, appendU32(imp, d.fnType))
			args = append(args, reexportArg{name: name, sort: 0x01, export: d.name})
			ex := appendName([]byte{0x00}, d.name)
			ex = append(ex, 0x01)
			ex = appendU32(ex, 2*funcs) // an export makes an index too
			ex = append(ex, 0x01, 0x01) // ascribed the type made of exports
			out = appendSection(out, 11, 1, appendU32(ex, ty))
			funcs++
		}
	}
	return out, args
}

// remapDeftype re-encodes a type definition with the type indices it
// refers to replaced by remap's (indices remap lacks are kept).
func remapDeftype(body []byte, remap map[uint32]uint32) []byte {
	r := &reader{b: body}
	var out []byte
	idx := func(i uint32) uint32 {
		if j, ok := remap[i]; ok {
			return j
		}
		return i
	}
	valtype := func() {
		if c := r.peek(); c&0x80 == 0 && c >= 0x40 {
			out = append(out, r.byte_())
			return
		}
		out = appendS33(out, idx(r.u32()))
	}
	optValtype := func() {
		switch r.byte_() {
		case 0:
			out = append(out, 0)
		case 1:
			out = append(out, 1)
			valtype()
		default:
			panic(errRewrite)
		}
	}
	names := func(each func()) {
		n := r.u32()
		out = appendU32(out, n)
		for ; n > 0; n-- {
			out = appendName(out, r.str())
			if each != nil {
				each()
			}
		}
	}
	switch c := r.byte_(); {
	case c == 0x40: // func
		out = append(out, c)
		names(valtype)
		switch r.byte_() {
		case 0x00:
			out = append(out, 0x00)
			valtype()
		case 0x01:
			if r.byte_() != 0 {
				panic(errRewrite)
			}
			out = append(out, 0x01, 0x00)
		default:
			panic(errRewrite)
		}
	case c >= 0x73 && c <= 0x7f, c == 0x64:
		out = append(out, c)
	case c == 0x72: // record
		out = append(out, c)
		names(valtype)
	case c == 0x71: // variant
		out = append(out, c)
		names(func() {
			optValtype()
			if r.byte_() != 0 {
				panic(errRewrite) // refines: gone from the model
			}
			out = append(out, 0)
		})
	case c == 0x70, c == 0x6b: // list, option
		out = append(out, c)
		valtype()
	case c == 0x6f: // tuple
		out = append(out, c)
		n := r.u32()
		out = appendU32(out, n)
		for ; n > 0; n-- {
			valtype()
		}
	case c == 0x6e, c == 0x6d: // flags, enum
		out = append(out, c)
		names(nil)
	case c == 0x6a: // result
		out = append(out, c)
		optValtype()
		optValtype()
	case c == 0x69, c == 0x68: // own, borrow
		out = append(out, c)
		out = appendU32(out, idx(r.u32()))
	default:
		panic(errRewrite)
	}
	if r.pos != len(body) {
		panic(errRewrite)
	}
	return out
}

// Component binary section ids and sorts the outer component uses.
const (
	secCoreModule   = 1
	secCoreInstance = 2
	secComponent    = 4
	secInstance     = 5
	secAlias        = 6
	secType         = 7
	secCanon        = 8
	secExport       = 11

	sortFunc     = 0x01
	sortType     = 0x03
	sortInstance = 0x05
)

// outer accumulates the outer component and the index spaces it defines.
type outer struct {
	out []byte
	sp  shimSpaces
	idx map[string]uint32 // streams export name -> its index in the outer
}

// buildOuter writes the outer component (see the comment at the top).
func buildOuter(inner []byte, prefix []section, results []patch, sp shimSpaces, imports []instArg,
	exports []shimExport, streamsInst uint32, all []streamsDecl, reads []streamsExport, mods [2][]byte) []byte {
	o := &outer{out: append([]byte(nil), inner[:8]...), sp: sp, idx: map[string]uint32{}}
	// The guest's imports, with the streams reads returning strings.
	o.out = append(o.out, applyPatches(inner, prefix, results)[8:]...)
	o.aliasStreams(streamsInst, exportsOf(all))
	o.shim(reads, o.readType(reads), mods)
	streams := o.streamsInstance(all)
	o.guest(inner, imports, exports, streams)
	return o.out
}

// aliasStreams aliases every export of the streams instance: types to
// build the lifted reads' type and the guest's streams instance,
// functions to pass through (and the host's reads, to lower into the
// shim).
func (o *outer) aliasStreams(inst uint32, decls []streamsExport) {
	var b []byte
	for _, d := range decls {
		b = append(b, d.sort, 0x00)
		b = appendU32(b, inst)
		b = appendName(b, d.name)
		if d.sort == sortType {
			o.idx[d.name] = o.sp.types
			o.sp.types++
		} else {
			o.idx[d.name] = o.sp.funcs
			o.sp.funcs++
		}
	}
	o.out = appendSection(o.out, secAlias, len(decls), b)
}

// readType defines result<list<u8>, stream-error> and the read functions'
// type, and returns the latter's index.
func (o *outer) readType(reads []streamsExport) uint32 {
	listTy, resultTy, borrowTy, funcTy := o.sp.types, o.sp.types+1, o.sp.types+2, o.sp.types+3
	o.sp.types += 4
	var b []byte
	b = append(b, 0x70, 0x7d) // list<u8>
	b = append(b, 0x6a, 0x01) // result with both cases
	b = appendS33(b, listTy)
	b = append(b, 0x01)
	b = appendS33(b, o.idx["stream-error"])
	b = append(b, 0x68) // borrow
	b = appendU32(b, o.idx["input-stream"])
	b = append(b, 0x40, 0x02) // func of two parameters
	b = appendName(b, reads[0].params[0])
	b = appendS33(b, borrowTy)
	b = appendName(b, reads[0].params[1])
	b = append(b, 0x77, 0x00) // u64; one unnamed result
	b = appendS33(b, resultTy)
	o.out = appendSection(o.out, secType, 4, b)
	return funcTy
}

// shim adds the shim's core modules and instances and lifts its reads,
// which then stand under their names in o.idx.
//
// Core index spaces (the prefix defines none): memory 0 and funcs 0
// (realloc) and 1 (reset) are the memory module's; funcs 2..n+1 the
// host's n reads lowered into shim memory, n+2 the stream borrow's drop,
// n+3.. the read module's reads.
func (o *outer) shim(reads []streamsExport, funcTy uint32, mods [2][]byte) {
	memMod, readMod := o.sp.modules, o.sp.modules+1
	for _, m := range mods {
		o.out = append(o.out, secCoreModule)
		o.out = appendU32(o.out, uint32(len(m)))
		o.out = append(o.out, m...)
	}
	n := uint32(len(reads))

	// Core instance 0: the memory module, instantiated with no imports.
	o.out = appendSection(o.out, secCoreInstance, 1, appendU32([]byte{0x00}, memMod), 0x00)
	var b []byte
	for _, a := range []struct {
		sort byte
		name string
	}{{0x02, "memory"}, {0x00, "realloc"}, {0x00, "reset"}} {
		b = append(b, 0x00, a.sort, 0x01, 0x00) // core export of core instance 0
		b = appendName(b, a.name)
	}
	o.out = appendSection(o.out, secAlias, 3, b)

	// The host's reads lowered with UTF-8 strings into shim memory, and
	// the drop of the borrowed stream a lifted read must do before it
	// returns.
	b = nil
	for _, d := range reads {
		b = append(b, 0x01, 0x00)
		b = appendU32(b, o.idx[d.name])
		b = append(b, 0x02, 0x03, 0x00, 0x04, 0x00) // memory 0, realloc 0
	}
	b = append(b, 0x03) // resource.drop
	b = appendU32(b, o.idx["input-stream"])
	o.out = appendSection(o.out, secCanon, len(reads)+1, b)

	// Core instance 1 bundles them with the memory; core instance 2 is the
	// read module instantiated with it.
	b = append([]byte{0x01}, appendU32(nil, n+2)...)
	b = appendName(b, "memory")
	b = append(b, 0x02, 0x00)
	b = appendName(b, "drop")
	b = append(b, 0x00)
	b = appendU32(b, n+2)
	for i, d := range reads {
		b = appendName(b, d.name)
		b = append(b, 0x00)
		b = appendU32(b, uint32(2+i))
	}
	b = append(b, 0x00)
	b = appendU32(b, readMod)
	b = append(b, 0x01)
	b = appendName(b, "host")
	b = append(b, 0x12, 0x01) // core instance 1
	o.out = appendSection(o.out, secCoreInstance, 2, b)

	// The read module's reads, lifted with the read type; post-return
	// resets the allocator once the guest has its copy.
	b = nil
	for _, d := range reads {
		b = append(b, 0x00, 0x00, 0x01, 0x02) // core func, export of core instance 2
		b = appendName(b, d.name)
	}
	o.out = appendSection(o.out, secAlias, len(reads), b)
	b = nil
	for i, d := range reads {
		b = append(b, 0x00, 0x00)
		b = appendU32(b, n+3+uint32(i))
		b = append(b, 0x03, 0x03, 0x00, 0x04, 0x00, 0x05, 0x01) // memory 0, realloc 0, post-return 1
		b = appendU32(b, funcTy)
		o.idx[d.name] = o.sp.funcs
		o.sp.funcs++
	}
	o.out = appendSection(o.out, secCanon, len(reads), b)
}

// instArg is one argument of a component instantiation. The guest's
// imports are kept as the arguments that pass them on: the outer starts
// with a copy of the guest's import sections, so each has the same sort
// and index in both.
type instArg struct {
	name string
	sort []byte
	idx  uint32
}

// instantiate nests a component in the outer and instantiates it with
// args, returning the instance's index.
func (o *outer) instantiate(component []byte, args []instArg) uint32 {
	o.out = append(o.out, secComponent)
	o.out = appendU32(o.out, uint32(len(component)))
	o.out = append(o.out, component...)
	b := append([]byte{0x00}, appendU32(nil, o.sp.components)...)
	b = appendU32(b, uint32(len(args)))
	for _, a := range args {
		b = appendName(b, a.name)
		b = append(b, a.sort...)
		b = appendU32(b, a.idx)
	}
	o.sp.components++
	o.out = appendSection(o.out, secInstance, 1, b)
	o.sp.instances++
	return o.sp.instances - 1
}

// streamsInstance instantiates the reexport component with every streams
// export as o.idx has it (the reads lifted, the rest the host's) and
// returns the instance's index.
func (o *outer) streamsInstance(all []streamsDecl) uint32 {
	re, reArgs := reexportComponent(all)
	args := make([]instArg, len(reArgs))
	for i, a := range reArgs {
		args[i] = instArg{a.name, []byte{a.sort}, o.idx[a.export]}
		if a.byOuter {
			args[i].idx = a.outer
		}
	}
	return o.instantiate(re, args)
}

// guest nests the guest, instantiates it with the outer's imports (its
// streams import served by streams) and re-exports its exports under
// their names.
func (o *outer) guest(inner []byte, imports []instArg, exports []shimExport, streams uint32) {
	args := make([]instArg, len(imports))
	for i, imp := range imports {
		args[i] = imp
		if FastStreams(imp.name) {
			args[i] = instArg{imp.name, []byte{sortInstance}, streams}
		}
	}
	guest := o.instantiate(inner, args)
	if len(exports) == 0 {
		return
	}
	// Each alias defines the next index of its sort.
	next := map[byte]uint32{sortFunc: o.sp.funcs, sortType: o.sp.types, 0x04: o.sp.components, sortInstance: o.sp.instances}
	var aliases, ex []byte
	for _, e := range exports {
		aliases = append(aliases, e.sort, 0x00)
		aliases = appendU32(aliases, guest)
		aliases = appendName(aliases, e.name)
		ex = append(ex, 0x00)
		ex = appendName(ex, e.name)
		ex = append(ex, e.sort)
		ex = appendU32(ex, next[e.sort])
		ex = append(ex, 0x00)
		next[e.sort]++
	}
	o.out = appendSection(o.out, secAlias, len(exports), aliases)
	o.out = appendSection(o.out, secExport, len(exports), ex)
}

// appendSection appends a section of n entries (body already encoded;
// extra bytes follow it).
func appendSection(out []byte, id byte, n int, body []byte, extra ...byte) []byte {
	content := appendU32(nil, uint32(n))
	content = append(content, body...)
	content = append(content, extra...)
	out = append(out, id)
	out = appendU32(out, uint32(len(content)))
	return append(out, content...)
}

func appendName(b []byte, s string) []byte {
	return append(appendU32(b, uint32(len(s))), s...)
}

// appendS33 encodes a type index where a valtype is expected: a
// non-negative signed LEB128 (so 64–127 take two bytes and never read as
// a primitive type).
func appendS33(b []byte, v uint32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if x == 0 && c&0x40 == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// Compiler turns WebAssembly text into a core module binary; cm passes
// wasmtime's (cm.Wat2Wasm). The shim's two modules are written as text.
type Compiler func(text string) ([]byte, error)

// shimModules returns the shim's two core modules for the given read
// functions: "mem" (memory, a bump allocator reset after every call) and
// "reads" (one export per read: call the host, decode in place). Each
// text is compiled once per process.
func shimModules(reads []string, wat Compiler) ([2][]byte, error) {
	mem, err := compileOnce(shimMemText, wat)
	if err != nil {
		return [2][]byte{}, fmt.Errorf("shim memory module: %w", err)
	}
	m, err := compileOnce(readsText(reads), wat)
	if err != nil {
		return [2][]byte{}, fmt.Errorf("shim read module: %w", err)
	}
	return [2][]byte{mem, m}, nil
}

func compileOnce(text string, wat Compiler) ([]byte, error) {
	shimMu.Lock()
	defer shimMu.Unlock()
	if m, ok := shimModuleCache[text]; ok {
		return m, nil
	}
	if wat == nil {
		return nil, errNoCompiler
	}
	m, err := wat(text)
	if err != nil {
		return nil, err
	}
	shimModuleCache[text] = m
	return m, nil
}

var (
	shimMu          sync.Mutex
	shimModuleCache = map[string][]byte{}
	errNoCompiler   = errors.New("no WebAssembly text compiler")
)

// shimMemText: the results area is bytes 0–15 (a read's result is 12
// bytes at 0); allocations start at 16 and are all dropped by reset, the
// lifted reads' post-return, once the guest has its copy.
const shimMemText = `(module
  (memory (export "memory") 1)
  (global $top (mut i32) (i32.const 16))
  (func (export "realloc") (param $old i32) (param $oldSize i32) (param $align i32) (param $size i32) (result i32)
    (local $p i32) (local $end i64) (local $have i64)
    (local.set $p (i32.and
      (i32.add (global.get $top) (i32.sub (local.get $align) (i32.const 1)))
      (i32.sub (i32.const 0) (local.get $align))))
    (local.set $end (i64.add (i64.extend_i32_u (local.get $p)) (i64.extend_i32_u (local.get $size))))
    (local.set $have (i64.shl (i64.extend_i32_u (memory.size)) (i64.const 16)))
    (if (i64.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq
              (memory.grow (i32.wrap_i64 (i64.shr_u
                (i64.add (i64.sub (local.get $end) (local.get $have)) (i64.const 65535))
                (i64.const 16))))
              (i32.const -1))
          (then unreachable))))
    (if (local.get $old)
      (then (memory.copy (local.get $p) (local.get $old)
        (select (local.get $oldSize) (local.get $size) (i32.lt_u (local.get $oldSize) (local.get $size))))))
    (global.set $top (i32.wrap_i64 (local.get $end)))
    (local.get $p))
  (func (export "reset") (param i32)
    (global.set $top (i32.const 16))))`

// readsText is the read module. Each read calls the host's (which leaves
// result<string, stream-error> at 0: case byte, then pointer and length),
// drops the stream it borrowed, and turns an ok string back into bytes in
// place: after 'A' the bytes
// are the rest; after 'P'+r each 8 chars carry 7 bytes in their low 7
// bits, one 64-bit load and store per group.
func readsText(reads []string) string {
	var b strings.Builder
	b.WriteString("(module\n  (import \"host\" \"memory\" (memory 1))\n")
	b.WriteString("  (import \"host\" \"drop\" (func $drop (param i32)))\n")
	for i, name := range reads {
		fmt.Fprintf(&b, "  (import \"host\" %q (func $host%d (param i32 i64 i32)))\n", name, i)
	}
	for i, name := range reads {
		fmt.Fprintf(&b, `  (func (export %q) (param i32 i64) (result i32)
    (call $host%d (local.get 0) (local.get 1) (i32.const 0))
    (call $drop (local.get 0))
    (call $decode)
    (i32.const 0))
`, name, i)
	}
	b.WriteString(`  (func $decode
    (local $p i32) (local $n i32) (local $src i32) (local $dst i32) (local $end i32) (local $w i64) (local $tail i32)
    (if (i32.load8_u (i32.const 0)) (then (return)))
    (local.set $p (i32.load (i32.const 4)))
    (local.set $n (i32.load (i32.const 8)))
    (if (i32.eqz (local.get $n)) (then unreachable))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x41))
      (then
        (i32.store (i32.const 4) (i32.add (local.get $p) (i32.const 1)))
        (i32.store (i32.const 8) (i32.sub (local.get $n) (i32.const 1)))
        (return)))
    ;; Packed: 8 chars per 7 bytes; the mode byte says how many bytes the
    ;; last group holds (0: all 7).
    (local.set $tail (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x50)))
    (if (i32.ge_u (local.get $tail) (i32.const 7)) (then unreachable))
    (local.set $src (i32.add (local.get $p) (i32.const 1)))
    (local.set $dst (local.get $p))
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (block $done
      (loop $groups
        (br_if $done (i32.gt_u (i32.add (local.get $src) (i32.const 8)) (local.get $end)))
        (local.set $w (i64.load align=1 (local.get $src)))
        (i64.store align=1 (local.get $dst) (i64.or (i64.or (i64.or
          (i64.or (i64.and (local.get $w) (i64.const 0x7f))
                  (i64.shl (i64.and (i64.shr_u (local.get $w) (i64.const 8)) (i64.const 0x7f)) (i64.const 7)))
          (i64.or (i64.shl (i64.and (i64.shr_u (local.get $w) (i64.const 16)) (i64.const 0x7f)) (i64.const 14))
                  (i64.shl (i64.and (i64.shr_u (local.get $w) (i64.const 24)) (i64.const 0x7f)) (i64.const 21))))
          (i64.or (i64.shl (i64.and (i64.shr_u (local.get $w) (i64.const 32)) (i64.const 0x7f)) (i64.const 28))
                  (i64.shl (i64.and (i64.shr_u (local.get $w) (i64.const 40)) (i64.const 0x7f)) (i64.const 35))))
          (i64.or (i64.shl (i64.and (i64.shr_u (local.get $w) (i64.const 48)) (i64.const 0x7f)) (i64.const 42))
                  (i64.shl (i64.and (i64.shr_u (local.get $w) (i64.const 56)) (i64.const 0x7f)) (i64.const 49)))))
        (local.set $src (i32.add (local.get $src) (i32.const 8)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 7)))
        (br $groups)))
    (if (i32.ne (local.get $src) (local.get $end)) (then unreachable))
    (if (local.get $tail)
      (then (local.set $dst (i32.sub (local.get $dst) (i32.sub (i32.const 7) (local.get $tail))))))
    (i32.store (i32.const 8) (i32.sub (local.get $dst) (local.get $p))))
)`)
	return b.String()
}

// ShimEncode is how a read's bytes cross to the shim (see the top).
func ShimEncode(b []byte) []byte {
	if utf8.Valid(b) {
		out := make([]byte, 1+len(b))
		out[0] = 'A'
		copy(out[1:], b)
		return out
	}
	groups := (len(b) + 6) / 7
	out := make([]byte, 1+8*groups)
	out[0] = byte(shimPacked + len(b)%7)
	o := out[1:]
	i := 0
	for ; i+8 <= len(b); i += 7 {
		binary.LittleEndian.PutUint64(o, pack7(binary.LittleEndian.Uint64(b[i:])))
		o = o[8:]
	}
	for ; i < len(b); i += 7 {
		var w [8]byte
		copy(w[:7], b[i:])
		binary.LittleEndian.PutUint64(o, pack7(binary.LittleEndian.Uint64(w[:])))
		o = o[8:]
	}
	return out
}

// shimPacked is the mode byte of packed reads, plus the byte count mod 7.
const shimPacked = 'P'

// pack7 spreads the low 7 bytes of x, 7 bits at a time, over the low 7
// bits of 8 bytes: ASCII, which wasmtime validates and copies fastest.
func pack7(x uint64) uint64 {
	return x&0x7f | (x>>7&0x7f)<<8 | (x>>14&0x7f)<<16 | (x>>21&0x7f)<<24 |
		(x>>28&0x7f)<<32 | (x>>35&0x7f)<<40 | (x>>42&0x7f)<<48 | (x>>49&0x7f)<<56
}

// ShimString is ShimEncode's bytes as the string a result carries.
func ShimString(b []byte) string {
	e := ShimEncode(b)
	return unsafe.String(unsafe.SliceData(e), len(e))
}
