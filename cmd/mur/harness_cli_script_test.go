package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// Script command for the scripts that run a capsule on a real harness CLI
// (run_process_claude_code, run_process_codex; make test-process-cli):
//
//	harnesscli NAME   publish murmur/driver-NAME (drivers/driver-NAME, built by make
//	                  drivers) into $HOME's store and link the CLI's native binary,
//	                  installed by npm in tools/harness-cli, into $WORK/bin under the
//	                  name the driver runs.
//
// The scripts need the real CLIs and start with
//
//	[!exec:mur-harness-cli] skip 'needs the real harness CLIs: make test-process-cli'
//
// The marker is on PATH only under MUR_HARNESS_CLI=1, so test-run-scripts
// leaves these scripts to test-process-cli, where a missing CLI or driver
// fails them.
func init() {
	scriptCmds["harnesscli"] = cmdHarnessCLI
	scriptSetups = append(scriptSetups, setupHarnessCLI)
}

func setupHarnessCLI(env *testscript.Env) error {
	if os.Getenv("MUR_HARNESS_CLI") != "1" {
		return nil
	}
	dir := filepath.Join(env.WorkDir, ".harness-cli")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "mur-harness-cli"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		return err
	}
	env.Setenv("PATH", dir+string(filepath.ListSeparator)+env.Getenv("PATH"))
	return nil
}

// harnessCLIs are the CLIs' native binaries under tools/harness-cli: the
// npm launchers are node scripts that start them, and a contained harness
// is granted its own binary only.
var harnessCLIs = map[string]struct{ exe, bin string }{
	"claude-code": {"claude", "node_modules/@anthropic-ai/claude-code/bin/claude.exe"},
	"codex":       {"codex", "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"},
}

var harnessDrivers sync.Map // NAME → *harnessDriver

type harnessDriver struct {
	once sync.Once
	zip  string
	err  error
}

func buildHarnessDriver(name string) (string, error) {
	dir, err := guestDir()
	if err != nil {
		return "", err
	}
	if dir == "" {
		return "", fmt.Errorf("MUR_GUEST_OUT is unset: run make test-process-cli")
	}
	mur, err := exec.LookPath("mur")
	if err != nil {
		return "", err
	}
	drv := "driver-" + name
	src := filepath.Join(dir, "src", drv)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	for from, to := range map[string]string{
		filepath.Join("../../drivers", drv, "murmur.yaml"):     "murmur.yaml",
		filepath.Join(os.Getenv("MUR_GUEST_OUT"), drv+".wasm"): drv + ".wasm",
	} {
		b, err := os.ReadFile(from)
		if err != nil {
			return "", fmt.Errorf("the harness CLI scripts need make drivers: %w", err)
		}
		if err := os.WriteFile(filepath.Join(src, to), b, 0o644); err != nil {
			return "", err
		}
	}
	tmp := filepath.Join(dir, fmt.Sprintf("%s.%d.mur.zip", drv, os.Getpid()))
	cmd := exec.Command(mur, "build", src, "-o", tmp)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"))
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("mur build %s: %w\n%s", drv, err, b)
	}
	zip := filepath.Join(dir, drv+".mur.zip")
	return zip, os.Rename(tmp, zip)
}

func cmdHarnessCLI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: harnesscli claude-code|codex")
	}
	cli, ok := harnessCLIs[args[0]]
	if !ok {
		ts.Fatalf("harnesscli: no CLI named %q", args[0])
	}
	bin, err := filepath.Abs(filepath.Join("../../tools/harness-cli", cli.bin))
	ts.Check(err)
	if _, err := os.Stat(bin); err != nil {
		ts.Fatalf("harnesscli: %v (scripts/setup.d installs tools/harness-cli)", err)
	}
	v, _ := harnessDrivers.LoadOrStore(args[0], &harnessDriver{})
	d := v.(*harnessDriver)
	d.once.Do(func() { d.zip, d.err = buildHarnessDriver(args[0]) })
	ts.Check(d.err)
	home := ts.Getenv("HOME")
	ts.Check(os.MkdirAll(filepath.Join(home, ".murmur"), 0o755))
	if _, err := os.Lstat(filepath.Join(home, ".murmur", "cache")); err != nil {
		ts.Check(os.Symlink(guests.cache, filepath.Join(home, ".murmur", "cache")))
	}
	if err := ts.Exec("mur", "publish", d.zip, "--scope", "murmur"); err != nil {
		ts.Fatalf("harnesscli: mur publish: %v", err)
	}
	dir := ts.MkAbs("bin")
	ts.Check(os.MkdirAll(dir, 0o755))
	ts.Check(os.Symlink(bin, filepath.Join(dir, cli.exe)))
}
