// Package actabi is the canonical-ABI layout of the ACT records the Go
// guest SDK lowers and lifts (memory32, align 4): localized-string 12
// bytes (disc, payload @4), metadata and strings 8, error 28 (kind,
// message @8, metadata @20), tool-definition 36, content-part 28
// (data, mime-type option @8, metadata @20), tool-event 32 (disc, payload
// @4), results 32 (disc, payload @4), session 16.
package actabi

import "github.com/murmur/mur/sdk/go/internal/abi"

// Def is one tool-definition with a plain description.
type Def struct {
	Name, Description, Schema string
	Metadata                  [][2][]byte
}

// Event is a content part (Err false) or an error (Kind, Message).
type Event struct {
	Err           bool
	Data          []byte
	Mime          string
	Kind, Message string
}

// PutBytes lowers b and stores its (ptr, len) at addr.
func PutBytes(m abi.Memory, addr uint32, b []byte) { abi.PutString(m, addr, string(b)) }

// Meta lifts metadata: n (key, cbor) entries from ptr.
func Meta(m abi.Memory, ptr, n uint32) map[string][]byte {
	out := make(map[string][]byte, n)
	for i := uint32(0); i < n; i++ {
		e := ptr + i*16
		k := abi.GetString(m, e)
		if _, seen := out[k]; !seen {
			out[k] = []byte(abi.GetString(m, e+8))
		}
	}
	return out
}

// MetaList lifts metadata keeping its order.
func MetaList(m abi.Memory, ptr, n uint32) [][2][]byte {
	out := make([][2][]byte, n)
	for i := range out {
		e := ptr + uint32(i)*16
		out[i] = [2][]byte{[]byte(abi.GetString(m, e)), []byte(abi.GetString(m, e+8))}
	}
	return out
}

func putMeta(m abi.Memory, addr uint32, meta [][2][]byte) {
	if len(meta) == 0 {
		abi.PutU32(m, addr, 4)
		abi.PutU32(m, addr+4, 0)
		return
	}
	base := m.Alloc(uint32(len(meta))*16, 4)
	for i, kv := range meta {
		e := base + uint32(i)*16
		PutBytes(m, e, kv[0])
		PutBytes(m, e+8, kv[1])
	}
	abi.PutU32(m, addr, base)
	abi.PutU32(m, addr+4, uint32(len(meta)))
}

// putError stores an error record with a plain message at addr.
func putError(m abi.Memory, addr uint32, kind, msg string) {
	abi.PutString(m, addr, kind)
	abi.PutU8(m, addr+8, 0)
	abi.PutString(m, addr+12, msg)
	putMeta(m, addr+20, nil)
}

// ListTools lowers ok(list-tools-response{[], defs}) and returns its
// address.
func ListTools(m abi.Memory, defs []Def) uint32 {
	p := m.Alloc(32, 4)
	abi.PutU8(m, p, 0)
	putMeta(m, p+4, nil)
	if len(defs) == 0 {
		abi.PutU32(m, p+12, 4)
		return p
	}
	base := m.Alloc(uint32(len(defs))*36, 4)
	for i, d := range defs {
		e := base + uint32(i)*36
		abi.PutString(m, e, d.Name)
		abi.PutU8(m, e+8, 0)
		abi.PutString(m, e+12, d.Description)
		abi.PutString(m, e+20, d.Schema)
		putMeta(m, e+28, d.Metadata)
	}
	abi.PutU32(m, p+12, base)
	abi.PutU32(m, p+16, uint32(len(defs)))
	return p
}

// Events lowers a list<tool-event>, up to the first error, and returns
// the address of its (ptr, len).
func Events(m abi.Memory, events []Event) uint32 {
	for i, e := range events {
		if e.Err {
			events = events[:i+1]
			break
		}
	}
	p := m.Alloc(8, 4)
	if len(events) == 0 {
		abi.PutU32(m, p, 4)
		return p
	}
	base := m.Alloc(uint32(len(events))*32, 4)
	for i, ev := range events {
		e := base + uint32(i)*32
		if ev.Err {
			abi.PutU8(m, e, 1)
			putError(m, e+4, ev.Kind, ev.Message)
			continue
		}
		PutBytes(m, e+4, ev.Data)
		if ev.Mime != "" {
			abi.PutU8(m, e+12, 1)
			abi.PutString(m, e+16, ev.Mime)
		}
		putMeta(m, e+24, nil)
	}
	abi.PutU32(m, p, base)
	abi.PutU32(m, p+4, uint32(len(events)))
	return p
}

// ResultString lowers ok(s), or err(kind, msg) when kind is set.
func ResultString(m abi.Memory, s, kind, msg string) uint32 {
	p := m.Alloc(32, 4)
	if kind != "" {
		abi.PutU8(m, p, 1)
		putError(m, p+4, kind, msg)
		return p
	}
	abi.PutString(m, p+4, s)
	return p
}

// ResultSession lowers ok(session{id, []}), or err(kind, msg) when kind
// is set.
func ResultSession(m abi.Memory, id, kind, msg string) uint32 {
	p := m.Alloc(32, 4)
	if kind != "" {
		abi.PutU8(m, p, 1)
		putError(m, p+4, kind, msg)
		return p
	}
	abi.PutString(m, p+4, id)
	putMeta(m, p+12, nil)
	return p
}
