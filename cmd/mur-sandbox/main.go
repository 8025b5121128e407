// Command mur-sandbox is the sandbox's helper: mur starts it as each
// contained command's init (which applies the session's namespaces,
// rlimits, Landlock, capability drop and seccomp, then execs the command),
// as the session's mount holder and as its watcher. It is built static and
// small (make build puts it beside bin/mur, where mur looks for it) so a
// helper costs what its job costs; a mur with no mur-sandbox beside it
// re-executes itself instead. It is not meant to be run by hand.
package main

import (
	"fmt"
	"os"

	"github.com/murmur/mur/internal/sandbox/helper"
)

func main() {
	helper.Main() // never returns when mur started this process as a helper
	fmt.Fprintln(os.Stderr, "mur-sandbox: the sandbox's helper; mur starts it, it is not run by hand")
	os.Exit(2)
}
