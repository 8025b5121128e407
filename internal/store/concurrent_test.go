package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/murmur/mur/internal/artifact"
)

// TestConcurrentInstallChild is one install a TestConcurrentInstallsKeepPins
// run starts; it does nothing unless started by that test.
func TestConcurrentInstallChild(t *testing.T) {
	src, proj, n := os.Getenv("MUR_CONC_SRC"), os.Getenv("MUR_CONC_PROJ"), os.Getenv("MUR_CONC_N")
	if src == "" {
		t.Skip("run by TestConcurrentInstallsKeepPins")
	}
	i, _ := strconv.Atoi(n)
	in := &Installer{Project: ProjectAt(proj), Sources: []Source{NewLayout("global", src)}, Check: InstallChecker}
	if _, err := in.Install(context.Background(), []artifact.Ref{ref(concName(i) + "@1.0.0")}); err != nil {
		t.Fatal(err)
	}
}

func concName(i int) string { return fmt.Sprintf("conc/tool-%02d", i) }

// TestConcurrentInstallsKeepPins starts installs of different artifacts
// into one project in separate processes at once, several rounds: every
// install's pin must be in murmur.lock at the end. Without the project lock
// each process read the lock before another wrote it and wrote back its
// own view, losing the other's pins.
func TestConcurrentInstallsKeepPins(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 24 subprocesses")
	}
	const procs, rounds = 8, 3
	ctx := context.Background()
	src := NewLayout("global", t.TempDir())
	for i := range procs {
		p, m := pkg(t, concName(i), "1.0.0")
		if _, err := src.Put(ctx, ref(concName(i)+"@1.0.0"), m, p); err != nil {
			t.Fatal(err)
		}
	}
	for round := range rounds {
		proj := t.TempDir()
		var cmds []*exec.Cmd
		for i := range procs {
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentInstallChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "MUR_CONC_SRC="+src.Root(), "MUR_CONC_PROJ="+proj, "MUR_CONC_N="+strconv.Itoa(i))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("round %d: install %d: %v", round, i, err)
			}
		}
		lock, err := artifact.LoadLock(ProjectAt(proj).LockPath())
		if err != nil {
			t.Fatal(err)
		}
		for i := range procs {
			if _, ok := lock.Find(concName(i)); !ok {
				t.Errorf("round %d: %s's pin was lost (%d of %d pins)", round, concName(i), len(lock.Artifacts), procs)
			}
		}
		if t.Failed() {
			return
		}
	}
}
