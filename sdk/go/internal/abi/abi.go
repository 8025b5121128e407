// Package abi is the canonical-ABI glue of the Go guest SDK: reading and
// writing component-model values in linear memory. The lifting and
// lowering here is portable so it is tested on the host against a byte
// slice; the wasip1 files bind it to the guest's real memory.
package abi

import "encoding/binary"

// Memory is the guest's linear memory as the canonical ABI sees it.
type Memory interface {
	// Bytes returns the n bytes at address ptr.
	Bytes(ptr, n uint32) []byte
	// Alloc returns the address of size zeroed bytes aligned to align,
	// valid until the current call's post-return.
	Alloc(size, align uint32) uint32
}

// U8 reads the byte at addr.
func U8(m Memory, addr uint32) uint8 { return m.Bytes(addr, 1)[0] }

// PutU8 writes v at addr.
func PutU8(m Memory, addr uint32, v uint8) { m.Bytes(addr, 1)[0] = v }

// U32 reads a little-endian u32 at addr.
func U32(m Memory, addr uint32) uint32 { return binary.LittleEndian.Uint32(m.Bytes(addr, 4)) }

// PutU32 writes a little-endian u32 at addr.
func PutU32(m Memory, addr, v uint32) { binary.LittleEndian.PutUint32(m.Bytes(addr, 4), v) }

// U64 reads a little-endian u64 at addr.
func U64(m Memory, addr uint32) uint64 { return binary.LittleEndian.Uint64(m.Bytes(addr, 8)) }

// PutU64 writes a little-endian u64 at addr.
func PutU64(m Memory, addr uint32, v uint64) { binary.LittleEndian.PutUint64(m.Bytes(addr, 8), v) }

// String copies the string of n bytes at ptr out of linear memory, so it
// outlives the arena the host wrote it into.
func String(m Memory, ptr, n uint32) string {
	if n == 0 {
		return ""
	}
	return string(m.Bytes(ptr, n))
}

// LowerString copies s into memory the host may read until post-return.
func LowerString(m Memory, s string) (ptr, n uint32) {
	if len(s) == 0 {
		return 1, 0
	}
	ptr = m.Alloc(uint32(len(s)), 1)
	copy(m.Bytes(ptr, uint32(len(s))), s)
	return ptr, uint32(len(s))
}

// PutString lowers s and stores its (ptr, len) pair at addr.
func PutString(m Memory, addr uint32, s string) {
	p, n := LowerString(m, s)
	PutU32(m, addr, p)
	PutU32(m, addr+4, n)
}

// GetString lifts the (ptr, len) pair stored at addr.
func GetString(m Memory, addr uint32) string {
	return String(m, U32(m, addr), U32(m, addr+4))
}

// OptString lifts an option<string> flattened to (disc, ptr, len).
func OptString(m Memory, disc, ptr, n uint32) *string {
	if disc == 0 {
		return nil
	}
	s := String(m, ptr, n)
	return &s
}

// GetOptString lifts an option<string> stored at addr (12 bytes, align 4).
func GetOptString(m Memory, addr uint32) *string {
	return OptString(m, uint32(U8(m, addr)), U32(m, addr+4), U32(m, addr+8))
}

// PutOptString stores an option<string> at addr (12 bytes, align 4).
func PutOptString(m Memory, addr uint32, s *string) {
	if s == nil {
		PutU8(m, addr, 0)
		return
	}
	PutU8(m, addr, 1)
	PutString(m, addr+4, *s)
}

// PutStringList lowers a list<string> and stores its (ptr, len) at addr.
func PutStringList(m Memory, addr uint32, list []string) {
	if len(list) == 0 {
		PutU32(m, addr, 4)
		PutU32(m, addr+4, 0)
		return
	}
	base := m.Alloc(uint32(len(list))*8, 4)
	for i, s := range list {
		PutString(m, base+uint32(i)*8, s)
	}
	PutU32(m, addr, base)
	PutU32(m, addr+4, uint32(len(list)))
}

// StringList lifts the list<string> whose elements start at ptr.
func StringList(m Memory, ptr, n uint32) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = GetString(m, ptr+uint32(i)*8)
	}
	return out
}

// Pairs lifts a list<tuple<string, string>> whose elements start at ptr.
func Pairs(m Memory, ptr, n uint32) [][2]string {
	out := make([][2]string, n)
	for i := range out {
		e := ptr + uint32(i)*16
		out[i] = [2]string{GetString(m, e), GetString(m, e+8)}
	}
	return out
}

// PutPairs lowers a list<tuple<string, string>> and stores its (ptr, len)
// at addr.
func PutPairs(m Memory, addr uint32, pairs [][2]string) {
	if len(pairs) == 0 {
		PutU32(m, addr, 4)
		PutU32(m, addr+4, 0)
		return
	}
	base := m.Alloc(uint32(len(pairs))*16, 4)
	for i, kv := range pairs {
		e := base + uint32(i)*16
		PutString(m, e, kv[0])
		PutString(m, e+8, kv[1])
	}
	PutU32(m, addr, base)
	PutU32(m, addr+4, uint32(len(pairs)))
}

// ResultUnitString lifts a result<_, string> stored at addr (12 bytes,
// align 4): ok is true for the ok case, else msg is the error.
func ResultUnitString(m Memory, addr uint32) (msg string, ok bool) {
	if U8(m, addr) == 0 {
		return "", true
	}
	return GetString(m, addr+4), false
}

// ResultString lifts a result<string, string> stored at addr (12 bytes,
// align 4).
func ResultString(m Memory, addr uint32) (val string, ok bool) {
	return GetString(m, addr+4), U8(m, addr) == 0
}
