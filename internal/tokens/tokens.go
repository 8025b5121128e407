// Package tokens counts tokens offline with the o200k_base BPE vocabulary
// embedded in the binary. The runtime's counts are estimates for admission
// against spend ceilings and for input budgets; a provider's own counts,
// when it reports them, are what a call is charged.
//
// The vocabulary is a table laid out to be read in place (package vocab):
// counting needs no load step and no heap for it, and the pages a count
// touches are file-backed pages of the binary.
package tokens

//go:generate go run ./gen -o o200k.bin

import (
	_ "embed"
	"unicode/utf8"

	"github.com/murmur/mur/internal/tokens/vocab"
)

//go:embed o200k.bin
var o200kBin string

// o200k is the vocabulary; opening it checks the header only. Should that
// fail (a damaged build), errO200k says why and counts fall back.
var o200k, errO200k = vocab.Open(o200kBin)

// Count returns the number of tokens in s, as tiktoken-go counts it for
// o200k_base (special tokens count as plain text; split.go says where that
// differs from OpenAI's tiktoken). Should the embedded
// vocabulary be unusable, it falls back to one token per four bytes, the
// usual rule of thumb, so an estimate is never zero for non-empty text.
// Invalid UTF-8 counts as if each invalid byte were U+FFFD.
func Count(s string) int {
	if s == "" {
		return 0
	}
	if errO200k != nil {
		return (len(s) + 3) / 4
	}
	if !utf8.ValidString(s) {
		// What the reference tokenizer does: it splits a []rune copy.
		s = string([]rune(s))
	}
	n := 0
	for i := 0; i < len(s); {
		if s[i] == del {
			i++ // the reference skips DEL (see split.go)
			continue
		}
		e := nextPiece(s, i)
		n += countPiece(o200k, s[i:e])
		i = e
	}
	return n
}

// CountBytes counts b, which should be UTF-8; invalid bytes count by size.
func CountBytes(b []byte) int {
	if !utf8.Valid(b) {
		return (len(b) + 3) / 4
	}
	return Count(string(b))
}
