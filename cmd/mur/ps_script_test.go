package main

import (
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/murmur/mur/internal/door"
)

// Script commands for mur ps, watch and stop (run_door_ps.txtar):
//
//	session NAME          set $NAME to the id of the one session registered
//	                      under $HOME/.murmur (fails unless exactly one)
//	waitfor FILE REGEXP   wait up to 30s until FILE matches REGEXP
func init() {
	scriptCmds["session"] = cmdSession
	scriptCmds["waitfor"] = cmdWaitFor
}

func cmdSession(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: session NAME")
	}
	running, err := door.ListRunning(filepath.Join(ts.Getenv("HOME"), ".murmur"))
	ts.Check(err)
	if len(running) != 1 {
		ts.Fatalf("session: %d sessions registered, want 1", len(running))
	}
	ts.Setenv(args[0], running[0].Session)
}

func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfor FILE REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(ts.MkAbs(args[0]))
		if re.Match(data) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfor: %s does not match %q after 30s; it holds:\n%s", args[0], args[1], data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
