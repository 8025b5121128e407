//go:build !cgo

package cm

import (
	"errors"
	"testing"
)

func TestNoCgo(t *testing.T) {
	if _, err := NewEngine(Config{}); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("NewEngine without cgo: %v, want ErrNoCgo", err)
	}
	if _, err := Wat2Wasm("(component)"); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("Wat2Wasm without cgo: %v, want ErrNoCgo", err)
	}
}
