// Package tokens counts tokens offline with a BPE vocabulary embedded in the
// binary (o200k_base). The runtime's counts are estimates for admission
// against spend ceilings and for input budgets; a provider's own counts,
// when it reports them, are what a call is charged.
package tokens

import (
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

var (
	once  sync.Once
	codec tokenizer.Codec
)

// load builds the codec on first use: the vocabulary is a large map, and a
// session that never counts (no model, no ceiling) never pays for it.
func load() tokenizer.Codec {
	once.Do(func() {
		c, err := tokenizer.Get(tokenizer.O200kBase)
		if err == nil {
			codec = c
		}
	})
	return codec
}

// Count returns the number of tokens in s. Should the embedded vocabulary
// fail to load, it falls back to one token per four bytes, the usual rule
// of thumb, so an estimate is never zero for non-empty text.
func Count(s string) int {
	if s == "" {
		return 0
	}
	if c := load(); c != nil {
		if n, err := c.Count(s); err == nil {
			return n
		}
	}
	return (len(s) + 3) / 4
}

// CountBytes counts b, which should be UTF-8; invalid bytes count by size.
func CountBytes(b []byte) int {
	if !utf8.Valid(b) {
		return (len(b) + 3) / 4
	}
	return Count(string(b))
}

// Warm loads the vocabulary now. A launcher calls it on its own goroutine
// at start, so the load (about a tenth of a second) overlaps the session's
// setup instead of delaying its first count.
func Warm() { load() }
