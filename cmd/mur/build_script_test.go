package main

import (
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/murmur/mur/internal/wasm/cm"
)

// Script commands for the build scripts:
//
//	wat2wasm IN OUT   assemble the WebAssembly text IN (a component or a core module) into OUT
//	guestsrc NAME DIR copy run component NAME's source murmur.yaml and its built
//	                  $MUR_GUEST_OUT/NAME.wasm into DIR, as tools/guest/build.sh leaves them
func init() {
	scriptCmds["wat2wasm"] = cmdWat2Wasm
	scriptCmds["guestsrc"] = cmdGuestSrc
}

func cmdGuestSrc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: guestsrc NAME DIR")
	}
	out := os.Getenv("MUR_GUEST_OUT")
	if out == "" {
		ts.Fatalf("guestsrc: MUR_GUEST_OUT is unset; start the script with [!exec:mur-guests] skip")
	}
	for _, c := range runComponents {
		if c.name != args[0] {
			continue
		}
		dir := ts.MkAbs(args[1])
		ts.Check(os.MkdirAll(dir, 0o755))
		for from, to := range map[string]string{
			filepath.Join(c.dir, "murmur.yaml"): filepath.Join(dir, "murmur.yaml"),
			filepath.Join(out, c.name+".wasm"):  filepath.Join(dir, c.name+".wasm"),
		} {
			b, err := os.ReadFile(from)
			ts.Check(err)
			ts.Check(os.WriteFile(to, b, 0o644))
		}
		return
	}
	ts.Fatalf("guestsrc: %q is not one of the run components", args[0])
}

func cmdWat2Wasm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: wat2wasm IN OUT")
	}
	text, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	b, err := cm.Wat2Wasm(string(text))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
}
