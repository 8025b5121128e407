//go:build cgo

package cm

import (
	"context"
	"testing"
)

// TestTypesOnlyImportNeedsNoDefinition: a component that imports an
// interface only for its types (what a WIT use of another interface's
// records produces, such as tool-registry's use of murmur:tool/run)
// instantiates with nothing defined for that interface.
func TestTypesOnlyImportNeedsNoDefinition(t *testing.T) {
	e := newEngine(t, Config{})
	c, err := e.CompileText(`(component
  (import "mur:test/types@0.1.0" (instance
    (type $r (record (field "a" u32)))
    (export "r" (type (eq $r)))))
)`)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := newStore(t, e, Limits{}, nil)
	if _, err := e.NewLinker().Instantiate(context.Background(), s, c); err != nil {
		t.Fatalf("instantiate: %v", err)
	}
}
