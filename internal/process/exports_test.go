package process

import (
	"bytes"
	"os"
	"testing"

	"github.com/murmur/mur/internal/guesttest"
)

// TestExportsProcessInterface reads the real built components: the
// process drivers export murmur:driver/process, the http drivers and a
// tool do not.
func TestExportsProcessInterface(t *testing.T) {
	for name, want := range map[string]bool{
		"process-driver-skeleton-go": true, "driver-claude-code": true, "driver-codex": true,
		"driver-openai": false, "driver-anthropic": false, "file-go": false,
	} {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(guesttest.File(t, name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ExportsProcessInterface(f)
			if err != nil || got != want {
				t.Fatalf("ExportsProcessInterface = %v, %v; want %v", got, err, want)
			}
		})
	}
}

func TestExportsProcessInterfaceRefusesNonComponents(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":       nil,
		"core module": {0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00},
		"cut section": append(append([]byte{}, componentPreamble...), exportSection, 0x80),
		"bad export":  append(append([]byte{}, componentPreamble...), exportSection, 3, 1, 0x07, 0),
	} {
		if _, err := ExportsProcessInterface(bytes.NewReader(b)); err == nil {
			t.Errorf("%s: read as a component", name)
		}
	}
}

// A hand-made export section: one instance export of each version.
func TestExportsProcessInterfaceNames(t *testing.T) {
	section := func(name string) []byte {
		body := []byte{1, 0x00, byte(len(name))}
		body = append(body, name...)
		body = append(body, 0x05, 0x00, 0x01, 0x05, 0x02)                        // sort instance, idx 0, desc instance type 2
		b := append(append([]byte{}, componentPreamble...), 0x01, 2, 0xaa, 0xbb) // an opaque section first
		return append(append(b, exportSection, byte(len(body))), body...)
	}
	for name, want := range map[string]bool{
		"murmur:driver/process@0.1.0": true, "murmur:driver/process@0.2.0": true, "murmur:driver/process": true,
		"murmur:driver/inference@0.1.0": false, "murmur:driver/processes@0.1.0": false,
	} {
		got, err := ExportsProcessInterface(bytes.NewReader(section(name)))
		if err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", name, got, err, want)
		}
	}
}

func FuzzExportsProcessInterface(f *testing.F) {
	f.Add(append(append([]byte{}, componentPreamble...), exportSection, 3, 1, 0x00, 0))
	f.Add(append(append([]byte{}, componentPreamble...), 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f))
	f.Fuzz(func(t *testing.T, b []byte) {
		ExportsProcessInterface(bytes.NewReader(b))
	})
}
