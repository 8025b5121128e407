package main

import (
	"flag"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/murmur/mur/internal/sandbox"
)

var updateScripts = flag.Bool("update", false, "rewrite golden cmp files in testdata/script")

// scriptCmds are extra testscript commands (fake providers, registries,
// A2A peers) that other _test.go files in this package add from init.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){}

// scriptSetups run for every script after the common environment is set.
var scriptSetups []func(env *testscript.Env) error

func TestMain(m *testing.M) {
	// A script that starts a shell tool re-executes this binary as the
	// sandbox init; without this it would run the test suite again.
	sandbox.Main()
	testscript.Main(m, map[string]func(){
		"mur": func() { os.Exit(run()) },
	})
}

// TestScripts runs every testdata/script/*.txtar: one file per CLI
// behaviour.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *updateScripts,
		Cmds:                scriptCmds,
		Setup: func(env *testscript.Env) error {
			// Each script gets its own HOME so ~/.murmur never leaks between
			// scripts or from the developer's machine.
			env.Setenv("HOME", env.WorkDir+"/home")
			if err := os.MkdirAll(env.WorkDir+"/home", 0o755); err != nil {
				return err
			}
			for _, s := range scriptSetups {
				if err := s(env); err != nil {
					return err
				}
			}
			return nil
		},
	})
}
