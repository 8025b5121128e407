// Package vocab is the in-place form of a BPE vocabulary (token bytes →
// rank): a flat little-endian blob that a program embeds and reads where it
// lies, so opening it costs a header check, not a 200k-entry map build.
//
// Layout (integers little-endian, uint32 unless said otherwise):
//
//	header   64 bytes: magic "murvocab", version, count, bucketBits,
//	         recordsLen, SHA-256 of everything after the header, 8 zero bytes
//	buckets  1<<bucketBits + 1 entries: the records of the tokens whose hash
//	         falls in bucket b are records[buckets[b]:buckets[b+1]]
//	ranks    count entries: where rank r's record starts in records, or
//	         empty for a rank not in use (for Token only)
//	records  per token, bucket by bucket: a 3-byte word len<<rankBits |
//	         rank, then the token's bytes; a token longer than shortMax
//	         bytes has len 0 in the word and its length in the next byte
//
// The layout is chosen for the memory a count makes resident, not only its
// speed: a lookup reads one bucket entry and one run of records, with the
// token bytes beside their rank, so the pages counting can touch are the
// bucket index and the records (2.0 MiB for o200k_base), not a sparse
// hash table, a rank-ordered offsets array and the bytes (4.1 MiB in
// version 1). The kernel maps file pages 64 KiB or a whole folio at a
// time, and a page of a random-access table is touched after a few hundred
// lookups, so what counts is the size of what lookups may read at all.
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
	version    = 3
	headerSize = 64

	rankBits = 18
	rankMask = 1<<rankBits - 1
	// empty marks a rank with no token in the ranks section.
	empty = 0xFFFFFFFF

	// MaxCount is the most ranks a table holds: ranks must fit in rankBits
	// with rankMask left over.
	MaxCount = rankMask
	// shortMax is the longest token whose length fits in the record's
	// word beside the rank (6 bits; 0 marks a longer one).
	shortMax = 1<<(24-rankBits) - 1
	// MaxTokenLen is the longest token a table holds: a longer-than-short
	// token's length is one byte.
	MaxTokenLen = 255

	maxBucketBits = 24
)

// ErrFormat is the kind of every error from Open and Verify: the blob is not
// a vocabulary table this package can read.
var ErrFormat = errors.New("vocab: not a usable table")

// Table is an opened vocabulary. The zero Table holds no tokens.
type Table struct {
	data       string
	count      uint32
	bucketBits uint32
	buckets    int // byte offset of the buckets section in data
	ranks      int
	records    int
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
	count, bucketBits, recordsLen := u32(data, 12), u32(data, 16), u32(data, 20)
	if count > MaxCount || bucketBits < 1 || bucketBits > maxBucketBits {
		return Table{}, fmt.Errorf("%w: count %d with %d bucket bits", ErrFormat, count, bucketBits)
	}
	t := Table{data: data, count: count, bucketBits: bucketBits}
	t.buckets = headerSize
	t.ranks = t.buckets + 4*(1<<bucketBits+1)
	t.records = t.ranks + 4*int(count)
	if want := t.records + int(recordsLen); len(data) != want {
		return Table{}, fmt.Errorf("%w: %d bytes, header says %d", ErrFormat, len(data), want)
	}
	if first, last := u32(data, t.buckets), u32(data, t.ranks-4); first != 0 || last != recordsLen {
		return Table{}, fmt.Errorf("%w: buckets span %d..%d, records section is %d", ErrFormat, first, last, recordsLen)
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
	at := u32(t.data, t.ranks+4*r)
	if at == empty {
		return ""
	}
	_, tok, _ := t.record(t.records + int(at))
	return tok
}

// record decodes the record at byte p of data: its rank, its token, and
// where the next record starts.
func (t Table) record(p int) (rank int, tok string, next int) {
	w := uint32(t.data[p]) | uint32(t.data[p+1])<<8 | uint32(t.data[p+2])<<16
	n, q := int(w>>rankBits), p+3
	if n == 0 {
		n, q = int(t.data[q]), q+1
	}
	return int(w & rankMask), t.data[q : q+n], q + n
}

// Rank returns the rank of token s and whether the table holds it.
func (t Table) Rank(s string) (int, bool) {
	if t.count == 0 || len(s) > MaxTokenLen {
		return 0, false
	}
	b := int(hash(s) >> (64 - t.bucketBits))
	o := t.buckets + 4*b
	p, end := t.records+int(u32(t.data, o)), t.records+int(u32(t.data, o+4))
	for p < end {
		r, tok, next := t.record(p)
		if tok == s {
			return r, true
		}
		p = next
	}
	return 0, false
}

// Build lays out a table for tokens, where tokens[r] is the bytes of rank r
// ("" for a rank not in use). bucketBits sizes the bucket index: with
// 1<<bucketBits buckets a lookup scans len(tokens)>>bucketBits records on
// average. The result passes Verify.
func Build(tokens []string, bucketBits uint) ([]byte, error) {
	if len(tokens) > MaxCount {
		return nil, fmt.Errorf("vocab: %d tokens, at most %d fit", len(tokens), MaxCount)
	}
	if bucketBits < 1 || bucketBits > maxBucketBits {
		return nil, fmt.Errorf("vocab: %d bucket bits, want 1 to %d", bucketBits, maxBucketBits)
	}
	nb := 1 << bucketBits
	// Each bucket's tokens, in rank order (so the commonest, lowest
	// ranks of a bucket are found first).
	bucketOf := make([][]int, nb)
	seen := make(map[string]int, len(tokens))
	total := 0
	for r, tok := range tokens {
		if tok == "" {
			continue
		}
		if len(tok) > MaxTokenLen {
			return nil, fmt.Errorf("vocab: token of rank %d is %d bytes, at most %d fit", r, len(tok), MaxTokenLen)
		}
		if prev, dup := seen[tok]; dup {
			return nil, fmt.Errorf("vocab: token %q has ranks %d and %d", tok, prev, r)
		}
		seen[tok] = r
		b := hash(tok) >> (64 - bucketBits)
		bucketOf[b] = append(bucketOf[b], r)
		total += 3 + len(tok)
		if len(tok) > shortMax {
			total++
		}
	}
	if total > 1<<31 {
		return nil, fmt.Errorf("vocab: %d bytes of records is too many", total)
	}
	out := make([]byte, headerSize+4*(nb+1)+4*len(tokens)+total)
	copy(out, magic)
	le := binary.LittleEndian
	le.PutUint32(out[8:], version)
	le.PutUint32(out[12:], uint32(len(tokens)))
	le.PutUint32(out[16:], uint32(bucketBits))
	le.PutUint32(out[20:], uint32(total))

	buckets := out[headerSize:]
	ranks := buckets[4*(nb+1):]
	records := ranks[4*len(tokens):]
	for r := range tokens {
		le.PutUint32(ranks[4*r:], empty)
	}
	off := 0
	for b, rs := range bucketOf {
		le.PutUint32(buckets[4*b:], uint32(off))
		for _, r := range rs {
			le.PutUint32(ranks[4*r:], uint32(off))
			tok := tokens[r]
			n := len(tok)
			if n > shortMax {
				n = 0
			}
			w := uint32(n)<<rankBits | uint32(r)
			records[off], records[off+1], records[off+2] = byte(w), byte(w>>8), byte(w>>16)
			off += 3
			if n == 0 {
				records[off] = byte(len(tok))
				off++
			}
			off += copy(records[off:], tok)
		}
	}
	le.PutUint32(buckets[4*nb:], uint32(off))
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
