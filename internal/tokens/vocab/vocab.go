// Package vocab is the in-place form of a BPE vocabulary (token bytes →
// rank): a flat little-endian blob that a program embeds and reads where it
// lies, so opening it costs a header check, not a 200k-entry map build.
//
// Layout (all integers little-endian uint32):
//
//	header   64 bytes: magic "murvocab", version, count, slotBits, bytesLen,
//	         SHA-256 of everything after the header, 8 zero bytes
//	offsets  count+1 entries: token r is bytes[offsets[r]:offsets[r+1]]
//	slots    1<<slotBits entries of an open-addressing (linear probing)
//	         hash table: fingerprint<<rankBits | rank, or empty
//	bytes    the tokens concatenated in rank order
//
// A slot carries a fingerprint of the hash beside the rank so a probe only
// reads the token bytes when the fingerprint matches: most lookups during
// byte-pair merging are misses, and a miss then touches one slot line.
package vocab

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

const (
	magic      = "murvocab"
	version    = 1
	headerSize = 64

	rankBits = 18
	rankMask = 1<<rankBits - 1
	fpMask   = 1<<(32-rankBits) - 1
	// empty marks an unused slot; its rank field is rankMask, a rank no
	// table holds (MaxCount keeps ranks below it).
	empty = 0xFFFFFFFF

	// MaxCount is the most ranks a table holds: ranks must fit in rankBits
	// with rankMask left over for empty.
	MaxCount = rankMask
)

// ErrFormat is the kind of every error from Open and Verify: the blob is not
// a vocabulary table this package can read.
var ErrFormat = errors.New("vocab: not a usable table")

// Table is an opened vocabulary. The zero Table holds no tokens.
type Table struct {
	data     string
	count    uint32
	slotBits uint32
	offsets  int // byte offset of the offsets section in data
	slots    int
	bytes    int
}

// Open checks the header of data and the section sizes it declares, and
// returns a Table reading data in place. It does not hash the body (that is
// Verify's job), so it costs nanoseconds whatever the table's size.
func Open(data string) (Table, error) {
	if len(data) < headerSize || data[:len(magic)] != magic {
		return Table{}, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	if v := u32(data, 8); v != version {
		return Table{}, fmt.Errorf("%w: version %d, want %d", ErrFormat, v, version)
	}
	count, slotBits, bytesLen := u32(data, 12), u32(data, 16), u32(data, 20)
	if count > MaxCount || slotBits < 1 || slotBits > 30 || uint64(count) >= 1<<slotBits {
		return Table{}, fmt.Errorf("%w: count %d with %d slot bits", ErrFormat, count, slotBits)
	}
	t := Table{data: data, count: count, slotBits: slotBits}
	t.offsets = headerSize
	t.slots = t.offsets + 4*int(count+1)
	t.bytes = t.slots + 4<<slotBits
	if want := t.bytes + int(bytesLen); len(data) != want {
		return Table{}, fmt.Errorf("%w: %d bytes, header says %d", ErrFormat, len(data), want)
	}
	if last := u32(data, t.slots-4); last != bytesLen {
		return Table{}, fmt.Errorf("%w: offsets end at %d, bytes section is %d", ErrFormat, last, bytesLen)
	}
	return t, nil
}

// Verify checks the body of data against the header's SHA-256. Open skips
// this so that a program pays nothing at start; tests and the generator
// call it.
func Verify(data string) error {
	if _, err := Open(data); err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(data[headerSize:]))
	if string(sum[:]) != data[24:56] {
		return fmt.Errorf("%w: checksum mismatch", ErrFormat)
	}
	return nil
}

// Len is the number of ranks, including unused ones (gaps in the ranks).
func (t Table) Len() int { return int(t.count) }

// Token returns the bytes of rank r, or "" for a rank the table does not
// hold.
func (t Table) Token(r int) string {
	if r < 0 || r >= int(t.count) {
		return ""
	}
	o := t.offsets + 4*r
	return t.data[t.bytes+int(u32(t.data, o)) : t.bytes+int(u32(t.data, o+4))]
}

// Rank returns the rank of token s and whether the table holds it.
func (t Table) Rank(s string) (int, bool) {
	if t.count == 0 {
		return 0, false
	}
	h := hash(s)
	mask := uint32(1)<<t.slotBits - 1
	i := uint32(h >> (64 - t.slotBits))
	fp := uint32(h) & fpMask
	for {
		v := u32(t.data, t.slots+4*int(i))
		if v == empty {
			return 0, false
		}
		if v>>rankBits == fp {
			r := int(v & rankMask)
			o := t.offsets + 4*r
			if t.data[t.bytes+int(u32(t.data, o)):t.bytes+int(u32(t.data, o+4))] == s {
				return r, true
			}
		}
		i = (i + 1) & mask
	}
}

// Build lays out a table for tokens, where tokens[r] is the bytes of rank r
// ("" for a rank not in use). slotBits sizes the hash table; it must leave
// it less than full. The result passes Verify.
func Build(tokens []string, slotBits uint) ([]byte, error) {
	if len(tokens) > MaxCount {
		return nil, fmt.Errorf("vocab: %d tokens, at most %d fit", len(tokens), MaxCount)
	}
	if slotBits < 1 || slotBits > 30 || len(tokens) >= 1<<slotBits {
		return nil, fmt.Errorf("vocab: %d slot bits cannot hold %d tokens", slotBits, len(tokens))
	}
	total := 0
	for _, tok := range tokens {
		total += len(tok)
	}
	if total > 1<<31 {
		return nil, fmt.Errorf("vocab: %d bytes of tokens is too many", total)
	}
	nslots := 1 << slotBits
	out := make([]byte, headerSize+4*(len(tokens)+1)+4*nslots+total)
	copy(out, magic)
	le := binary.LittleEndian
	le.PutUint32(out[8:], version)
	le.PutUint32(out[12:], uint32(len(tokens)))
	le.PutUint32(out[16:], uint32(slotBits))
	le.PutUint32(out[20:], uint32(total))

	offsets := out[headerSize:]
	slots := offsets[4*(len(tokens)+1):]
	body := slots[4*nslots:]
	for i := range nslots {
		le.PutUint32(slots[4*i:], empty)
	}
	seen := make(map[string]int, len(tokens))
	off := 0
	mask := uint32(nslots - 1)
	for r, tok := range tokens {
		le.PutUint32(offsets[4*r:], uint32(off))
		off += copy(body[off:], tok)
		if tok == "" {
			continue
		}
		if prev, dup := seen[tok]; dup {
			return nil, fmt.Errorf("vocab: token %q has ranks %d and %d", tok, prev, r)
		}
		seen[tok] = r
		h := hash(tok)
		i := uint32(h >> (64 - slotBits))
		for le.Uint32(slots[4*i:]) != empty {
			i = (i + 1) & mask
		}
		le.PutUint32(slots[4*i:], (uint32(h)&fpMask)<<rankBits|uint32(r))
	}
	le.PutUint32(offsets[4*len(tokens):], uint32(off))
	sum := sha256.Sum256(out[headerSize:])
	copy(out[24:56], sum[:])
	return out, nil
}

// u32 reads a little-endian uint32 at s[i:i+4].
func u32(s string, i int) uint32 {
	_ = s[i+3]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

// hash mixes s eight bytes at a time. It is part of the format: Build and
// Rank must agree on it, and changing it needs a new version.
func hash(s string) uint64 {
	const (
		k0 = 0x9E3779B97F4A7C15
		k1 = 0xBF58476D1CE4E5B9
		k2 = 0x94D049BB133111EB
	)
	h := uint64(len(s)) * k0
	for len(s) >= 8 {
		_ = s[7]
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = bits.RotateLeft64((h^w)*k1, 31)
		s = s[8:]
	}
	var w uint64
	for i := 0; i < len(s); i++ {
		w |= uint64(s[i]) << (8 * i)
	}
	h = (h ^ w) * k1
	h ^= h >> 32
	h *= k2
	h ^= h >> 29
	return h
}
