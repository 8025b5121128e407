package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTreeBytesCountsEachInodeOnce(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = 1
	}
	if err := os.WriteFile(filepath.Join(a, "f"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(a, "f"), filepath.Join(b, "g")); err != nil {
		t.Fatal(err)
	}
	one := treeBytes(a)
	if one < int64(len(big)) {
		t.Fatalf("counted %d bytes for a %d-byte file", one, len(big))
	}
	// b adds its own directory block, not the linked file again.
	if both := treeBytes(a, b, a); both >= one+int64(len(big)) {
		t.Fatalf("a hard link and a repeated root counted twice: %d vs %d", both, one)
	}
}
