package tokens

import (
	"unicode"
	"unicode/utf8"
)

// o200k_base splits text into pieces with this regular expression before
// byte-pair merging each piece:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n/]*
//	|\s*[\r\n]+
//	|\s+(?!\S)
//	|\s+
//
// Go's regexp has no lookahead, and a backtracking engine is slow and large,
// so nextPiece is that expression written out as a scanner: each branch is
// tried in order, and where a branch's greedy loop would backtrack the
// scanner computes directly where the backtracking ends. \s is
// unicode.IsSpace, as in the regexp2 engine tiktoken-go runs it with.
//
// Counts must equal tiktoken-go's, so the scanner keeps two quirks of the
// matcher regexp2cg generated for it, where it differs from OpenAI's
// tiktoken (see docs/RATIONALE.md):
//   - DEL (U+007F) is in neither negated class, so no branch matches it:
//     the matcher skips it and it is not counted;
//   - \s*[\r\n]+ backs off to the first newline of a whitespace run, not
//     the last, so " \n \n x" splits as " \n", " \n", " x".

// Rune classes, as bits: a rune can be in several (Lm, Lo and marks are in
// both upper and lower).
const (
	cLetter  = 1 << iota // \p{L}
	cNumber              // \p{N}
	cUpper               // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower               // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	cSpace               // \s
	cNewline             // [\r\n]
	cSkipped             // DEL: no branch matches it
)

// asciiClass holds the classes of the ASCII runes, the common case.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classify(r)
	}
	t[del] = cSkipped
	return t
}()

func classify(r rune) uint8 {
	switch {
	case unicode.Is(unicode.Lo, r), unicode.Is(unicode.Lm, r):
		return cLetter | cUpper | cLower
	case unicode.IsLower(r):
		return cLetter | cLower
	case unicode.IsUpper(r), unicode.IsTitle(r):
		return cLetter | cUpper
	case unicode.IsMark(r):
		return cUpper | cLower
	case unicode.IsNumber(r):
		return cNumber
	case r == '\r', r == '\n':
		return cSpace | cNewline
	case unicode.IsSpace(r):
		return cSpace
	}
	return 0
}

const del = 0x7F

// at returns the classes and the size of the rune at s[i:]; size 0 at the
// end of s. s must be valid UTF-8 (Count sees to it).
func at(s string, i int) (uint8, int) {
	if i >= len(s) {
		return 0, 0
	}
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	return atRune(s, i)
}

// atRune is at for a non-ASCII rune at s[i:].
func atRune(s string, i int) (uint8, int) {
	r, n := utf8.DecodeRuneInString(s[i:])
	return classify(r), n
}

// run returns the end of the run at s[k:] of runes whose classes c have
// c&mask == want. The loops that scan runs are most of the scanner's time,
// so ASCII is classified here without a call.
func run(s string, k int, mask, want uint8) int {
	for k < len(s) {
		if b := s[k]; b < utf8.RuneSelf {
			if asciiClass[b]&mask != want {
				return k
			}
			k++
			continue
		}
		c, n := atRune(s, k)
		if c&mask != want {
			return k
		}
		k += n
	}
	return k
}

// isPrefix is [^\r\n\p{L}\p{N}], the optional rune before a word.
func isPrefix(c uint8) bool { return c&(cLetter|cNumber|cNewline|cSkipped) == 0 }

// punctMask selects [^\s\p{L}\p{N}]: the runes with none of its classes.
const punctMask = cSpace | cLetter | cNumber | cSkipped

// nextPiece returns the end of the piece that starts at s[i:], i < len(s)
// and s[i] not DEL. Every other rune starts some branch, so a piece is
// never empty.
func nextPiece(s string, i int) int {
	c, n := at(s, i)
	if c&(cNumber|cNewline) == 0 {
		if e, ok := word(s, i, c, n); ok {
			return e
		}
	}
	if c&cNumber != 0 {
		// \p{N}{1,3}
		e := i + n
		for k := 1; k < 3; k++ {
			c, n := at(s, e)
			if n == 0 || c&cNumber == 0 {
				break
			}
			e += n
		}
		return e
	}
	if e, ok := punct(s, i); ok {
		return e
	}
	return space(s, i)
}

// word tries the two word branches at s[i:], whose first rune has classes
// c and size n. A branch first tries with the optional prefix rune taken,
// then without it: the prefix can be a mark, which also starts a word.
func word(s string, i int, c uint8, n int) (int, bool) {
	starts := [2]int{i, i}
	tries := starts[1:]
	if isPrefix(c) {
		starts[0] = i + n
		tries = starts[:]
	}
	// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
	for _, st := range tries {
		// The upper run is greedy; when the rune after it is not lower,
		// it backs off to its last rune that is also lower (Lm, Lo, M),
		// and the lower run is that one rune.
		k, lastLower := st, -1
		for k < len(s) {
			if b := s[k]; b < utf8.RuneSelf {
				if asciiClass[b]&cUpper == 0 {
					break
				}
				k++ // A-Z: upper only
				continue
			}
			c, n := atRune(s, k)
			if c&cUpper == 0 {
				break
			}
			if c&cLower != 0 {
				lastLower = k + n
			}
			k += n
		}
		if c, n := at(s, k); n > 0 && c&cLower != 0 {
			return contraction(s, run(s, k, cLower, cLower)), true
		}
		if lastLower >= 0 {
			return contraction(s, lastLower), true
		}
	}
	// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*
	for _, st := range tries {
		if k := run(s, st, cUpper, cUpper); k > st {
			return contraction(s, run(s, k, cLower, cLower)), true
		}
	}
	return 0, false
}

// contraction extends a word ending at e over (?i:'s|'t|'re|'ve|'m|'ll|'d).
// Case folding makes ſ (U+017F, long s) match s as well, as it does in
// tiktoken-go's engine.
func contraction(s string, e int) int {
	if e+1 >= len(s) || s[e] != '\'' {
		return e
	}
	switch s[e+1] {
	case 's', 'S', 't', 'T', 'm', 'M', 'd', 'D':
		return e + 2
	case 'r', 'R', 'v', 'V':
		if e+2 < len(s) && s[e+2]|0x20 == 'e' {
			return e + 3
		}
	case 'l', 'L':
		if e+2 < len(s) && s[e+2]|0x20 == 'l' {
			return e + 3
		}
	case 0xC5: // ſ is C5 BF
		if e+2 < len(s) && s[e+2] == 0xBF {
			return e + 3
		}
	}
	return e
}

// punct tries " ?[^\s\p{L}\p{N}]+[\r\n/]*" at s[i:]. All three loops are
// possessive in effect: giving back a rune could not let a later part
// match.
func punct(s string, i int) (int, bool) {
	k := i
	if s[k] == ' ' {
		k++
	}
	st := k
	if k = run(s, k, punctMask, 0); k == st {
		return 0, false
	}
	for k < len(s) && (s[k] == '\r' || s[k] == '\n' || s[k] == '/') {
		k++
	}
	return k, true
}

// space takes the whitespace branches at s[i:], whose first rune is
// whitespace (every other rune started an earlier branch).
func space(s string, i int) int {
	// One pass over the run: its end, its first newline, its last rune.
	k, firstNewline, lastRune := i, -1, i
	for k < len(s) {
		c, n := uint8(0), 1
		if b := s[k]; b < utf8.RuneSelf {
			c = asciiClass[b]
		} else {
			c, n = atRune(s, k)
		}
		if c&cSpace == 0 {
			break
		}
		if c&cNewline != 0 && firstNewline < 0 {
			firstNewline = k
		}
		lastRune = k
		k += n
	}
	switch {
	case firstNewline >= 0:
		// \s*[\r\n]+ : up to the first newline (the quirk above) and
		// the newlines that follow it.
		e := firstNewline
		for e < len(s) && (s[e] == '\r' || s[e] == '\n') {
			e++
		}
		return e
	case k == len(s):
		// \s+(?!\S) at the end of the text takes the whole run.
		return k
	case lastRune > i:
		// \s+(?!\S) gives back the run's last rune, which then starts the
		// next piece (typically " word").
		return lastRune
	}
	// \s+ : a single whitespace rune before a non-space.
	return k
}
