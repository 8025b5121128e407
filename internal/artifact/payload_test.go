package artifact

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
)

func TestWasmKind(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want string
	}{
		{"component", "\x00asm\x0d\x00\x01\x00", WasmComponent},
		{"core module", "\x00asm\x01\x00\x00\x00", WasmModule},
		{"text", "wasm murmur:tool/run@0.1.0", WasmNot},
		{"short", "\x00as", WasmNot},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := WasmKind([]byte(c.in)); got != c.want {
				t.Errorf("WasmKind(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// TestCheckNative runs the check on a real binary of this platform (the
// test binary itself) as this platform and as others.
func TestCheckNative(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	a, ds := manifest.ParseArtifact("murmur.yaml", []byte("name: n\nversion: \"1\"\nruntime: tool\nimplementation: native\nrequires_files: [README, tool]\n"))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	built := func(files ...Entry) *Built { return &Built{Manifest: a, Files: files} }
	readme := Entry{Path: "README", Data: []byte("docs")}
	for _, c := range []struct {
		name         string
		b            *Built
		goos, goarch string
		want         string // "" accepted, else a part of the message
	}{
		{"this platform", built(readme, Entry{Path: "tool", Data: bin, Exec: true}), runtime.GOOS, runtime.GOARCH, ""},
		{"a script", built(Entry{Path: "tool", Data: []byte("#!/bin/sh\necho\n"), Exec: true}), runtime.GOOS, runtime.GOARCH, ""},
		{"another processor", built(Entry{Path: "tool", Data: bin, Exec: true}), runtime.GOOS, other, "not " + other},
		{"another system", built(Entry{Path: "tool", Data: bin, Exec: true}), "darwin", runtime.GOARCH, "darwin does not run"},
		{"not executable", built(readme, Entry{Path: "tool", Data: bin}), runtime.GOOS, runtime.GOARCH, "ships no executable"},
		{"wasm", built(Entry{Path: "tool", Data: []byte("\x00asm\x0d\x00\x01\x00"), Exec: true}), runtime.GOOS, runtime.GOARCH, "implementation: wasm"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if runtime.GOOS != "linux" && c.goos != "darwin" {
				t.Skip("the test binary is an ELF only on Linux")
			}
			got := CheckNative(c.b, c.goos, c.goarch)
			if c.want == "" {
				if len(got) != 0 {
					t.Fatalf("refused: %v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Code != diag.BldNative || !strings.Contains(got[0].Msg, c.want) {
				t.Fatalf("got %v, want one E-BLD-103 saying %q", got, c.want)
			}
		})
	}
}
