// Command gendocs writes docs/diagnostics.md from the code catalogue.
//
//	go run ./internal/diag/gendocs [-o docs/diagnostics.md]
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("o", "docs/diagnostics.md", "file to write")
	codes := flag.String("codes", "internal/diag/codes.go", "the code catalogue to read doc comments from")
	flag.Parse()
	m, err := meanings(*codes)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, markdown(m), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
		os.Exit(1)
	}
}
