package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/artifact"
)

func TestPull(t *testing.T) {
	ctx := context.Background()
	proj := ProjectAt(t.TempDir())
	global := NewLayout("global", t.TempDir())
	for _, v := range []string{"1.0.0", "1.4.0"} {
		b, m := pkg(t, "ana/tool", v)
		global.Put(ctx, ref("ana/tool@"+v), m, b)
	}
	b, m := pkg(t, "ana/tool", "2.0.0")
	m.WIT = []string{"murmur:tool/run@9.0.0"}
	global.Put(ctx, ref("ana/tool@2.0.0"), m, b)

	got, err := Pull(ctx, proj, global, "ana/tool", "", nil)
	if err != nil || got.Ref.Version != "1.4.0" {
		t.Fatalf("Pull newest = %+v, %v", got, err)
	}
	lock, _ := artifact.LoadLock(proj.LockPath())
	if pin, _ := lock.Find("ana/tool"); pin.Origin != artifact.OriginRuntime || pin.Version != "1.4.0" {
		t.Fatalf("pin = %+v", pin)
	}
	if _, err := Pull(ctx, proj, global, "ana/tool", "2.0.0", nil); !errors.Is(err, ErrWITLevel) || !strings.Contains(err.Error(), "ana/tool@1.4.0") {
		t.Fatalf("misfit = %v", err)
	}
	for _, bad := range [][2]string{{"tool", ""}, {"github:ana/tool", ""}, {"ana/tool/x", ""}, {"ana/tool", "../1"}, {"ana/tool", "a/b"}} {
		if _, err := Pull(ctx, proj, global, bad[0], bad[1], nil); !errors.Is(err, artifact.ErrName) {
			t.Errorf("Pull(%q, %q) = %v, want ErrName", bad[0], bad[1], err)
		}
	}
	refuse := errors.New("not admitted")
	before := snapshot(t, proj.Dir)
	if _, err := Pull(ctx, proj, global, "ana/tool", "1.0.0", func(*Fetched, *artifact.Package) error { return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("check = %v", err)
	}
	sameTree(t, before, snapshot(t, proj.Dir))
}

// Unpull drops only a pin a session pulled: an operator pin and an
// unpinned name are refused, writing nothing.
func TestUnpull(t *testing.T) {
	ctx := context.Background()
	proj := ProjectAt(t.TempDir())
	global := NewLayout("global", t.TempDir())
	for _, n := range []string{"ana/tool", "ana/other"} {
		b, m := pkg(t, n, "1.0.0")
		global.Put(ctx, ref(n+"@1.0.0"), m, b)
	}
	if _, err := Pull(ctx, proj, global, "ana/tool", "", nil); err != nil {
		t.Fatal(err)
	}
	in := &Installer{Project: proj, Sources: []Source{global}}
	if _, err := in.Install(ctx, []artifact.Ref{ref("ana/other@1.0.0")}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, proj.Dir)
	for _, n := range []string{"ana/other", "ana/none"} {
		if _, err := Unpull(proj, n); !errors.Is(err, ErrNotPulled) {
			t.Errorf("Unpull(%s) = %v, want ErrNotPulled", n, err)
		}
	}
	sameTree(t, before, snapshot(t, proj.Dir))
	if pin, err := Unpull(proj, "ana/tool"); err != nil || pin.Version != "1.0.0" {
		t.Fatalf("Unpull = %+v, %v", pin, err)
	}
	lock, _ := artifact.LoadLock(proj.LockPath())
	if _, ok := lock.Find("ana/tool"); ok {
		t.Fatal("the pulled pin is still in murmur.lock")
	}
	if _, ok := lock.Find("ana/other"); !ok {
		t.Fatal("the operator pin was dropped")
	}
}
