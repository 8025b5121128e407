package store

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/murmur/mur/internal/artifact"
)

// TestInstallChild is the install a TestInstallKilledAnywhere run kills; it
// does nothing unless started by that test.
func TestInstallChild(t *testing.T) {
	src, proj := os.Getenv("MUR_KILL_SRC"), os.Getenv("MUR_KILL_PROJ")
	if src == "" {
		t.Skip("run by TestInstallKilledAnywhere")
	}
	var refs []artifact.Ref
	for i := range benchN {
		refs = append(refs, ref(childName(i)+"@1.0.0"))
	}
	in := &Installer{Project: ProjectAt(proj), Sources: []Source{NewLayout("global", src)}, Check: InstallChecker}
	if _, err := in.Install(context.Background(), refs); err != nil {
		t.Fatal(err)
	}
}

func childName(i int) string { return "kill/tool-" + string(rune('a'+i)) }

// TestInstallKilledAnywhere kills installs of 20 artifacts at random
// moments, write phase included, and checks after every kill that the
// project is consistent: murmur.lock is absent or whole, and every pin it
// holds resolves to verified bytes in the store.
func TestInstallKilledAnywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 12 subprocesses")
	}
	ctx := context.Background()
	src := NewLayout("global", t.TempDir())
	for i := range benchN {
		p, m := pkg(t, childName(i), "1.0.0")
		if _, err := src.Put(ctx, ref(childName(i)+"@1.0.0"), m, p); err != nil {
			t.Fatal(err)
		}
	}
	run := func(proj string, killAfter time.Duration) (time.Duration, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInstallChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "MUR_KILL_SRC="+src.Root(), "MUR_KILL_PROJ="+proj)
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		if killAfter > 0 {
			time.AfterFunc(killAfter, func() { cmd.Process.Kill() })
		}
		err := cmd.Wait()
		return time.Since(start), err
	}
	full, err := run(t.TempDir(), 0)
	if err != nil {
		t.Fatalf("uninterrupted child install: %v", err)
	}
	var entries []Entry
	for i := range benchN {
		entries = append(entries, Entry{Name: childName(i), Version: "1.0.0"})
	}
	proj := t.TempDir()
	p := ProjectAt(proj)
	for i := range 12 {
		after := time.Duration(rand.Int64N(int64(full))) + time.Millisecond
		run(proj, after)
		lock, err := artifact.LoadLock(p.LockPath())
		if err != nil {
			t.Fatalf("kill %d after %v: lock unreadable: %v", i, after, err)
		}
		if len(lock.Artifacts) > 0 {
			if _, err := p.Resolve(ctx, entries); err != nil {
				t.Fatalf("kill %d after %v: lock pins what the store cannot serve: %v", i, after, err)
			}
		}
		if len(lock.Artifacts) != 0 && len(lock.Artifacts) != benchN {
			t.Fatalf("kill %d: lock holds %d of %d pins", i, len(lock.Artifacts), benchN)
		}
		os.Remove(p.LockPath()) // the next run writes from nothing again
	}
	if _, err := run(proj, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Resolve(ctx, entries); err != nil {
		t.Fatal(err)
	}
}
