package main

import (
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// The new_* scripts build what mur new writes with the Go toolchain and
// mur's guest toolchain: MUR_ROOT is this source tree, and the Go caches
// are the test's own (a script's HOME is empty, so a cold cache would
// rebuild the standard library for every script).
func init() {
	scriptSetups = append(scriptSetups, setupNew)
}

func setupNew(env *testscript.Env) error {
	root, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	env.Setenv("MUR_ROOT", root)
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		return err
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if i < len(vals) {
			env.Setenv(k, vals[i])
		}
	}
	return nil
}
