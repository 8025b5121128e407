package store

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// ServedWIT may list only murmur packages of the repository's wit/ tree,
// each at its declared version (which of them the host really serves is
// component's TestServedWITIsWhatTheHostServes).
func TestServedWITInTree(t *testing.T) {
	files, _ := filepath.Glob("../../wit/murmur-*/*.wit")
	if len(files) == 0 {
		t.Skip("no wit/ tree beside this package")
	}
	re := regexp.MustCompile(`(?m)^package (murmur:[a-z-]+)@([0-9]+\.[0-9]+\.[0-9]+);`)
	tree := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			tree[string(m[1])] = string(m[2])
		}
	}
	for pkg, v := range ServedWIT {
		if declared, ok := tree[pkg]; !ok || declared != v {
			t.Errorf("ServedWIT lists %s@%s, wit/ declares %q", pkg, v, declared)
		}
	}
}
