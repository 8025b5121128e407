package vocab

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// small has tokens on both sides of the short-length limit (shortMax):
// the longer ones keep their length in a byte of their own.
var small = []string{"a", "b", "ab", "", "hello", " world", "\x00", "\xff\xfe", strings.Repeat("long", 10), "abc",
	strings.Repeat("s", shortMax), strings.Repeat("y", shortMax+1), strings.Repeat("z", MaxTokenLen)}

func build(t testing.TB, tokens []string, bucketBits uint) string {
	t.Helper()
	b, err := Build(tokens, bucketBits)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return string(b)
}

func TestRoundTrip(t *testing.T) {
	data := build(t, small, 5)
	if err := Verify(data); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	tb, err := Open(data)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if tb.Len() != len(small) {
		t.Errorf("Len = %d, want %d", tb.Len(), len(small))
	}
	for r, tok := range small {
		if got := tb.Token(r); got != tok {
			t.Errorf("Token(%d) = %q, want %q", r, got, tok)
		}
		if tok == "" {
			continue
		}
		if got, ok := tb.Rank(tok); !ok || got != r {
			t.Errorf("Rank(%q) = %d, %v; want %d", tok, got, ok, r)
		}
	}
	for _, s := range []string{"", "c", "abcd", "hell", "world", "longlong", strings.Repeat("y", shortMax), strings.Repeat("z", MaxTokenLen+1)} {
		if r, ok := tb.Rank(s); ok {
			t.Errorf("Rank(%q) = %d, want absent", s, r)
		}
	}
	for _, r := range []int{-1, len(small), 1 << 20} {
		if got := tb.Token(r); got != "" {
			t.Errorf("Token(%d) = %q, want empty", r, got)
		}
	}
}

func TestZeroTable(t *testing.T) {
	var tb Table
	if _, ok := tb.Rank("a"); ok || tb.Len() != 0 || tb.Token(0) != "" {
		t.Error("the zero Table holds something")
	}
}

func TestBuildRejects(t *testing.T) {
	tests := []struct {
		name       string
		tokens     []string
		bucketBits uint
	}{
		{"duplicate", []string{"a", "b", "a"}, 4},
		{"token too long", []string{"a", strings.Repeat("x", MaxTokenLen+1)}, 2},
		{"no buckets", []string{"a"}, 0},
		{"too many buckets", []string{"a"}, maxBucketBits + 1},
		{"too many tokens", make([]string, MaxCount+1), 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Build(tt.tokens, tt.bucketBits); err == nil {
				t.Error("Build accepted it")
			}
		})
	}
}

func TestOpenRejects(t *testing.T) {
	good := build(t, small, 5)
	patch := func(off int, b ...byte) string {
		s := []byte(good)
		copy(s[off:], b)
		return string(s)
	}
	tests := []struct {
		name string
		data string
	}{
		{"empty", ""},
		{"short", good[:40]},
		{"bad magic", patch(0, 'M')},
		{"other version", patch(8, 1)},
		{"count past the end", patch(12, 0xff, 0xff)},
		{"count past MaxCount", patch(12, 0xff, 0xff, 0xff)},
		{"bucket bits zero", patch(16, 0)},
		{"bucket bits too many", patch(16, maxBucketBits+1)},
		{"records length", patch(20, 1)},
		{"truncated", good[:len(good)-1]},
		{"trailing", good + "x"},
		{"first bucket", patch(headerSize, 3)},
		{"last bucket", patch(headerSize+4*(1<<5), 3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Open(tt.data); !errors.Is(err, ErrFormat) {
				t.Errorf("Open: %v, want ErrFormat", err)
			}
			if err := Verify(tt.data); !errors.Is(err, ErrFormat) {
				t.Errorf("Verify: %v, want ErrFormat", err)
			}
		})
	}
}

// TestVerifyChecksum flips one byte in each section: Open still accepts
// the table (it reads the header only), Verify does not.
func TestVerifyChecksum(t *testing.T) {
	good := build(t, small, 5)
	for _, off := range []int{headerSize + 6, headerSize + 4*(1<<5+1) + 3, len(good) - 1, 30} {
		s := []byte(good)
		s[off] ^= 0x40
		if _, err := Open(string(s)); err != nil {
			t.Errorf("byte %d flipped: Open: %v", off, err)
		}
		if err := Verify(string(s)); !errors.Is(err, ErrFormat) {
			t.Errorf("byte %d flipped: Verify: %v, want ErrFormat", off, err)
		}
	}
}

// FuzzOpen feeds arbitrary blobs to the header parser: no panic, and a
// table it accepts answers lookups within its bounds.
func FuzzOpen(f *testing.F) {
	good := build(f, small, 5)
	f.Add(good)
	f.Add(good[:headerSize])
	f.Add("murvocab")
	f.Fuzz(func(t *testing.T, data string) {
		tb, err := Open(data)
		if err != nil {
			return
		}
		if Verify(data) != nil {
			// The checksum guards the offsets; without it only the
			// header's sizes were checked, so stop at them.
			return
		}
		for r := range tb.Len() {
			if tok := tb.Token(r); tok != "" {
				if got, ok := tb.Rank(tok); !ok || tb.Token(got) != tok {
					t.Fatalf("Rank(Token(%d)) = %d, %v", r, got, ok)
				}
			}
		}
	})
}

// FuzzBuild builds tables from arbitrary token lists (split on NUL) and
// checks every token is found at its rank and a non-token is not.
func FuzzBuild(f *testing.F) {
	f.Add("a\x00b\x00ab\x00hello world", "abc")
	f.Add("", "x")
	f.Add("\x00\x00x", "")
	f.Fuzz(func(t *testing.T, list, probe string) {
		tokens := strings.Split(list, "\x00")
		seen := map[string]int{}
		for r, tok := range tokens {
			if _, dup := seen[tok]; dup && tok != "" {
				tokens[r] = "" // a gap in the ranks
				continue
			}
			seen[tok] = r
		}
		for _, tok := range tokens {
			if len(tok) > MaxTokenLen {
				t.Skip("a token longer than the format holds")
			}
		}
		// Few buckets, so that lookups scan runs of several records.
		data := build(t, tokens, 2)
		if err := Verify(data); err != nil {
			t.Fatal(err)
		}
		tb, err := Open(data)
		if err != nil {
			t.Fatal(err)
		}
		for r, tok := range tokens {
			if tok == "" {
				continue
			}
			if got, ok := tb.Rank(tok); !ok || got != r {
				t.Fatalf("Rank(%q) = %d, %v; want %d", tok, got, ok, r)
			}
		}
		r, ok := tb.Rank(probe)
		want, held := seen[probe]
		if probe == "" {
			held = false
		}
		if ok != held || ok && r != want {
			t.Fatalf("Rank(%q) = %d, %v; want %d, %v", probe, r, ok, want, held)
		}
	})
}

// TestLookupFootprint bounds what counting can make resident with the
// embedded o200k table: lookups read the bucket index and the records,
// never the rank index (Token's), and a count of a few KiB of text reads
// nearly every 64 KiB block of that (the kernel maps file pages 64 KiB
// around a fault), so its size is what a counting process keeps resident.
// Version 1 of the format read 4.1 MiB.
func TestLookupFootprint(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "o200k.bin"))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Open(string(b))
	if err != nil {
		t.Fatal(err)
	}
	read := (tb.ranks - tb.buckets) + (len(b) - tb.records)
	const limit = 2_150_000
	if read > limit {
		t.Errorf("lookups can read %d bytes of the table, more than %d", read, limit)
	}
	if unread := tb.records - tb.ranks; unread != 4*tb.Len() {
		t.Errorf("the rank index is %d bytes, want 4 per rank (%d)", unread, 4*tb.Len())
	}
}
