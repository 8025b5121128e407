// Package guesttest finds, for tests, the components `make guests` and
// `make drivers` build from source into build/guests (or $MUR_GUEST_OUT).
// A component not built skips the test, or fails it when
// MUR_REQUIRE_GUESTS is set: CI sets it so that a build gone wrong never
// reads as a pass.
package guesttest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// File is the path of the built component name (without .wasm).
func File(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("MUR_GUEST_OUT")
	if dir == "" {
		// build/guests of the repository this file is in, whatever the
		// test's package directory.
		_, self, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(self), "..", "..", "build", "guests")
	}
	p, err := filepath.Abs(filepath.Join(dir, name+".wasm"))
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		if os.Getenv("MUR_REQUIRE_GUESTS") != "" {
			t.Fatalf("%s not built: %v", name, err)
		}
		t.Skipf("%s not built (make guests drivers): %v", name, err)
	}
	return p
}

// Read is the built component name's bytes.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(File(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
