package component

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/store"
	"github.com/murmur/mur/internal/wasm/cm"
)

// TestServedWITIsWhatTheHostServes: store.ServedWIT, the WIT level mur
// advertises (mur version, install's fit check, build's import check),
// lists exactly the packages of the murmur interfaces the linker really
// defines and of the exports a session resolves, at those versions.
func TestServedWITIsWhatTheHostServes(t *testing.T) {
	r, err := New(cm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	host := map[string]string{}
	add := func(iface string) {
		name, ver, ok := strings.Cut(iface, "@")
		pkg, _, _ := strings.Cut(name, "/")
		if !ok {
			t.Fatalf("%s has no version", iface)
		}
		if v, dup := host[pkg]; dup && v != ver {
			t.Fatalf("the host serves %s at %s and %s", pkg, v, ver)
		}
		host[pkg] = ver
	}
	imports := r.Imports()
	for _, name := range imports {
		if strings.HasPrefix(name, "murmur:") {
			add(name)
		}
	}
	for _, e := range Exports {
		add(e)
	}
	if !slices.Contains(imports, IfaceToolRegistry) || !slices.ContainsFunc(imports, func(s string) bool { return strings.HasPrefix(s, "wasi:io/streams@") }) {
		t.Fatalf("the linker's imports look wrong: %v", imports)
	}
	if !maps.Equal(host, store.ServedWIT) {
		t.Errorf("the host serves\n  %v\nstore.ServedWIT advertises\n  %v", host, store.ServedWIT)
	}
}
