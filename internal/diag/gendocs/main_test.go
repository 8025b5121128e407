package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/murmur/mur/internal/diag"
)

// TestDocsUpToDate fails when docs/diagnostics.md differs from what
// gendocs would write.
func TestDocsUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "diagnostics.md")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go run ./internal/diag/gendocs", err)
	}
	m, err := meanings(filepath.Join("..", "codes.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range diag.Catalogue {
		if m[e.Code] == "" {
			t.Errorf("%s has no meaning in codes.go", e.Code)
		}
	}
	if !bytes.Equal(got, markdown(m)) {
		t.Fatal("docs/diagnostics.md is stale: run go run ./internal/diag/gendocs")
	}
}
