package store

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// ServedWIT must list exactly the murmur packages of the repository's wit/
// tree at their declared versions: the WIT level this mur serves.
func TestServedWITMatchesTree(t *testing.T) {
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
	for pkg, v := range tree {
		if ServedWIT[pkg] != v {
			t.Errorf("wit/ declares %s@%s, ServedWIT has %q", pkg, v, ServedWIT[pkg])
		}
	}
	for pkg := range ServedWIT {
		if _, ok := tree[pkg]; !ok {
			t.Errorf("ServedWIT lists %s, which wit/ does not declare", pkg)
		}
	}
}
