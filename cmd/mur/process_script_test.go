package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// Script commands for the process transport scripts (run_process_*.txtar):
//
//	processhome   publish the process driver skeleton (examples/process-driver-skeleton-go)
//	              as local/process-driver-skeleton-go into $HOME's store, and put
//	              tools/harness-fake into $WORK/bin as harness, harness-v0.9.0 and
//	              harness-noversion (their --version output differs); both are built
//	              once per test process
func init() {
	scriptCmds["processhome"] = cmdProcessHome
}

const processDriverName = "process-driver-skeleton-go"

// processBuilt is what every process script shares: the packed driver and
// the fake harness binary, beside the run scripts' packed components.
var processBuilt struct {
	once         sync.Once
	zip, harness string
	err          error
}

func buildProcessParts() error {
	dir, err := guestDir()
	if err != nil {
		return err
	}
	if dir == "" {
		return fmt.Errorf("MUR_GUEST_OUT is unset; start the script with [!exec:mur-guests] skip")
	}
	mur, err := exec.LookPath("mur")
	if err != nil {
		return err
	}
	src := filepath.Join(dir, "src", processDriverName)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	for from, to := range map[string]string{
		filepath.Join("../../examples", processDriverName, "murmur.yaml"):    "murmur.yaml",
		filepath.Join(os.Getenv("MUR_GUEST_OUT"), processDriverName+".wasm"): processDriverName + ".wasm",
	} {
		b, err := os.ReadFile(from)
		if err != nil {
			return fmt.Errorf("the process scripts need make guests: %w", err)
		}
		if err := os.WriteFile(filepath.Join(src, to), b, 0o644); err != nil {
			return err
		}
	}
	pid := os.Getpid()
	tmp := filepath.Join(dir, fmt.Sprintf("%s.%d.mur.zip", processDriverName, pid))
	cmd := exec.Command(mur, "build", src, "-o", tmp)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"))
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mur build %s: %w\n%s", processDriverName, err, b)
	}
	processBuilt.zip = filepath.Join(dir, processDriverName+".mur.zip")
	if err := os.Rename(tmp, processBuilt.zip); err != nil {
		return err
	}
	// Built under a name of its own and renamed, as the packages are.
	bin := filepath.Join(dir, "bin", fmt.Sprintf(".harness-fake.%d", pid))
	if b, err := exec.Command("go", "build", "-o", bin, "../../tools/harness-fake").CombinedOutput(); err != nil {
		return fmt.Errorf("go build tools/harness-fake: %w\n%s", err, b)
	}
	processBuilt.harness = filepath.Join(dir, "harness-fake")
	return os.Rename(bin, processBuilt.harness)
}

func cmdProcessHome(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: processhome")
	}
	processBuilt.once.Do(func() { processBuilt.err = buildProcessParts() })
	ts.Check(processBuilt.err)
	home := ts.Getenv("HOME")
	ts.Check(os.MkdirAll(filepath.Join(home, ".murmur"), 0o755))
	// The shared compile cache, as runhome links it (runhome may have).
	if _, err := os.Lstat(filepath.Join(home, ".murmur", "cache")); err != nil {
		ts.Check(os.Symlink(guests.cache, filepath.Join(home, ".murmur", "cache")))
	}
	if err := ts.Exec("mur", "publish", processBuilt.zip, "--scope", "local"); err != nil {
		ts.Fatalf("processhome: mur publish: %v", err)
	}
	b, err := os.ReadFile(processBuilt.harness)
	ts.Check(err)
	bin := ts.MkAbs("bin")
	ts.Check(os.MkdirAll(bin, 0o755))
	for _, name := range []string{"harness", "harness-v0.9.0", "harness-noversion"} {
		ts.Check(os.WriteFile(filepath.Join(bin, name), b, 0o755))
	}
}
