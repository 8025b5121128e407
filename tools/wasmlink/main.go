// Command wasmlink is the post-link step of a Go guest build. It takes the
// core module `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared` wrote
// and adds a `cabi_realloc` export that allocates from the SDK's static
// arena, so the WASI preview1 adapter and the canonical ABI never call into
// (or grow memory under) the Go runtime.
//
// Usage: wasmlink IN.wasm OUT.wasm
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: wasmlink IN.wasm OUT.wasm")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "wasmlink:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	linked, err := Link(b)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, linked, 0o644)
}
