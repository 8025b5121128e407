package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/manifest"
)

// TestDocsUpToDate fails when docs/run.md's manifest-field section differs
// from what genfields would write from manifest.Fields.
func TestDocsUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "run.md")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := splice(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("docs/run.md's manifest fields are stale: run make docs-fields")
	}
	// Every field is in the section, once.
	for _, f := range manifest.Fields {
		if n := strings.Count(string(got), "| `"+f.Path+"` |"); n != 1 {
			t.Errorf("%s appears %d times in docs/run.md", f.Path, n)
		}
	}
}
