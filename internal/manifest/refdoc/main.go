// Command refdoc writes docs/manifest-reference.md, the reference of both
// murmur.yaml manifests, from the manifest engine itself: every field the
// decoder's types hold (its path and YAML type), the default Effective
// applies, what a run does with it (manifest.Fields, the table docs/run.md's
// honoured/refused section comes from), and the codes the diagnostics
// catalogue's examples raise on it.
// The meanings are the sentences below, keyed by field. A test checks the
// page is up to date (make check runs it); `make docs-manifest` rewrites it.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("o", "docs/manifest-reference.md", "output file")
	flag.Parse()
	page, err := Render()
	if err != nil {
		fmt.Fprintln(os.Stderr, "refdoc:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, page, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "refdoc:", err)
		os.Exit(1)
	}
}
