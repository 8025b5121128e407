// Command gen writes internal/tokens/o200k.bin, the o200k_base vocabulary
// as an in-place table (package vocab), from tiktoken-go's copy of it. Only
// this generator and the tests link tiktoken-go; the runtime reads the
// table. Run it with `go generate ./internal/tokens`.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/tiktoken-go/tokenizer"

	"github.com/murmur/mur/internal/tokens/vocab"
)

// bucketBits sizes the bucket index at 2^15 buckets for ~200k tokens: a
// lookup scans about six records (one or two cache lines), and the index
// is 128 KiB. 2^16 buckets count 3% faster for 128 KiB more that a count
// makes resident.
const bucketBits = 15

func main() {
	out := flag.String("o", "o200k.bin", "output file")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	tokens, err := o200k()
	if err != nil {
		return err
	}
	data, err := vocab.Build(tokens, bucketBits)
	if err != nil {
		return err
	}
	if err := vocab.Verify(string(data)); err != nil {
		return fmt.Errorf("built table does not verify: %w", err)
	}
	return os.WriteFile(out, data, 0o644)
}

// o200k returns o200k_base's tokens by rank. tiktoken-go keeps its map
// unexported, so the ranks are read back through Decode, one at a time;
// special tokens are not in that map and so are not in the table.
func o200k() ([]string, error) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, fmt.Errorf("load o200k_base: %w", err)
	}
	var tokens []string
	last := -1
	for r := 0; r < vocab.MaxCount; r++ {
		tok, err := codec.Decode([]uint{uint(r)})
		if err != nil || tok == "" {
			tokens = append(tokens, "")
			continue
		}
		tokens = append(tokens, tok)
		last = r
	}
	if last < 0 {
		return nil, errors.New("o200k_base decoded no tokens")
	}
	return tokens[:last+1], nil
}
