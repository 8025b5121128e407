//go:build cgo

package cm

import (
	"os"
	"testing"
)

// FuzzCompile feeds arbitrary bytes to the component compiler: every input
// must compile or fail with an error, never crash the process.
func FuzzCompile(f *testing.F) {
	for _, name := range []string{"add.wat", "values.wat", "resource.wat", "limits.wat"} {
		text, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		wasm, err := Wat2Wasm(string(text))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(wasm)
	}
	f.Add([]byte{0, 'a', 's', 'm', 0x0d, 0, 1, 0})
	e, err := NewEngine(Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		c, err := e.Compile(wasm)
		if err == nil {
			c.Imports()
			c.Close()
		}
	})
}

// FuzzWat2Wasm does the same for component text.
func FuzzWat2Wasm(f *testing.F) {
	text, err := os.ReadFile("testdata/values.wat")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(text))
	f.Add("(component)")
	f.Fuzz(func(t *testing.T, text string) {
		Wat2Wasm(text)
	})
}
