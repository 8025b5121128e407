// Command gendocs writes docs/diagnostics.md from the code catalogue.
//
//	go run ./internal/diag/gendocs [-o docs/diagnostics.md]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/murmur/mur/internal/diag"
)

func main() {
	out := flag.String("o", "docs/diagnostics.md", "file to write")
	flag.Parse()
	if err := os.WriteFile(*out, diag.Markdown(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
		os.Exit(1)
	}
}
