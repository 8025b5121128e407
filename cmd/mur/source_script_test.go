package main

import (
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/murmur/mur/internal/source/sourcetest"
)

// A fake GitHub REST API for scope sources:
//
//	ghsource start                          start it; $GHAPI is its URL
//	ghsource repo OWNER/NAME OWNERID        add a repository owned by account OWNERID
//	ghsource release OWNER/NAME TAG ASSET=FILE...  publish a release holding those assets
//	ghsource owner OWNER/NAME OWNERID       give the repository to another account
//	ghsource stop                           stop answering
var (
	ghMu   sync.Mutex
	ghSrvs = map[*testscript.TestScript]*sourcetest.Server{}
)

func init() { scriptCmds["ghsource"] = cmdGHSource }

func cmdGHSource(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: ghsource start|repo|release|owner|stop")
	}
	ghMu.Lock()
	s := ghSrvs[ts]
	ghMu.Unlock()
	if args[0] != "start" && s == nil {
		ts.Fatalf("ghsource %s: not started", args[0])
	}
	id := func(a string) int64 {
		n, err := strconv.ParseInt(a, 10, 64)
		ts.Check(err)
		return n
	}
	switch {
	case args[0] == "start":
		s = sourcetest.Start()
		ghMu.Lock()
		ghSrvs[ts] = s
		ghMu.Unlock()
		ts.Defer(func() {
			s.Close()
			ghMu.Lock()
			delete(ghSrvs, ts)
			ghMu.Unlock()
		})
		ts.Setenv("GHAPI", s.URL)
	case args[0] == "repo" && len(args) == 3:
		s.AddRepo(args[1], id(args[2]))
	case args[0] == "owner" && len(args) == 3:
		s.SetOwner(args[1], id(args[2]))
	case args[0] == "release" && len(args) >= 3:
		files := map[string][]byte{}
		for _, a := range args[3:] {
			name, file, ok := strings.Cut(a, "=")
			if !ok {
				ts.Fatalf("ghsource release: %q is not ASSET=FILE", a)
			}
			b, err := os.ReadFile(ts.MkAbs(file))
			ts.Check(err)
			files[name] = b
		}
		s.Publish(args[1], args[2], files)
	case args[0] == "stop":
		s.Close()
	default:
		ts.Fatalf("ghsource: bad arguments %q", args)
	}
}
