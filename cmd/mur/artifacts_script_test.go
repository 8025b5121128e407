package main

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/registrytest"
)

// Script commands for the artifact scripts:
//
//	registry start [basic|bearer USER PASS]  start an in-process OCI registry; sets $REGISTRY
//	registry stop|stall|waitstalled|release|tamper|lie
//	mkzip OUT NAME=FILE...                     pack files into a .mur.zip as given, unchecked
var (
	regMu sync.Mutex
	regs  = map[*testscript.TestScript]*registrytest.Registry{}
)

func init() {
	scriptCmds["registry"] = cmdRegistry
	scriptCmds["mkzip"] = cmdMkzip
}

func cmdRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: registry start|stop|stall|release|tamper|lie")
	}
	regMu.Lock()
	r := regs[ts]
	regMu.Unlock()
	if args[0] != "start" && r == nil {
		ts.Fatalf("registry %s: no registry started", args[0])
	}
	switch args[0] {
	case "start":
		r = registrytest.New()
		if len(args) == 4 {
			mode := registrytest.Basic
			if args[1] == "bearer" {
				mode = registrytest.Bearer
			}
			r.RequireAuth(mode, args[2], args[3])
		}
		regMu.Lock()
		regs[ts] = r
		regMu.Unlock()
		ts.Defer(func() {
			r.Release()
			r.Close()
			regMu.Lock()
			delete(regs, ts)
			regMu.Unlock()
		})
		ts.Setenv("REGISTRY", r.URL())
	case "stop":
		r.Close()
	case "stall":
		r.Stall()
	case "waitstalled":
		if !r.WaitStalled(10 * time.Second) {
			ts.Fatalf("registry waitstalled: no download reached the registry in 10s")
		}
	case "release":
		r.Release()
	case "tamper":
		ts.Logf("tampered with %d blobs", r.TamperAll())
	case "lie":
		r.LieAboutDigests(true)
	default:
		ts.Fatalf("registry: unknown subcommand %q", args[0])
	}
}

func cmdMkzip(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: mkzip OUT NAME=FILE...")
	}
	var ents []artifact.Entry
	for _, a := range args[1:] {
		name, file := a, a
		for i := range a {
			if a[i] == '=' {
				name, file = a[:i], a[i+1:]
				break
			}
		}
		b, err := os.ReadFile(ts.MkAbs(file))
		ts.Check(err)
		ents = append(ents, artifact.Entry{Path: name, Data: b})
	}
	b, err := artifact.Pack(ents)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
	ts.Logf("%s: %d bytes, %s", filepath.Base(args[0]), len(b), strconv.Quote(artifact.Digest(b)))
}
