package session

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSweep(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	var made []Dirs
	for i := 0; i < 4; i++ {
		d, err := Create(Layout{MurmurHome: home, ManifestDir: proj})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, d)
		time.Sleep(2 * time.Millisecond)
	}
	// A --workdir session in the same group: its folder must survive.
	own := t.TempDir()
	wd, _ := Create(Layout{MurmurHome: home, ManifestDir: proj, Workdir: own})
	cur, _ := Create(Layout{MurmurHome: home, ManifestDir: proj})
	later, _ := Create(Layout{MurmurHome: home, ManifestDir: proj}) // launched after cur

	got, err := Sweep(cur, proj, Retain{MaxSessions: 3}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Keep cur + the 2 newest before it (wd, made[3]); remove made[0..2].
	if len(got) != 3 {
		t.Fatalf("removed %+v", got)
	}
	for _, d := range made[:3] {
		if _, err := os.Stat(d.Records); err == nil {
			t.Errorf("%s kept", d.ID)
		}
		if _, err := os.Stat(d.Workdir); err == nil {
			t.Errorf("%s work folder kept", d.ID)
		}
	}
	for _, d := range []Dirs{made[3], wd, cur, later} {
		if _, err := os.Stat(d.Records); err != nil {
			t.Errorf("%s removed", d.ID)
		}
	}
	if _, err := os.Stat(own); err != nil {
		t.Error("a --workdir folder was touched")
	}

	// max_age: everything older than cur is past an hour from "now".
	got, _ = Sweep(cur, proj, Retain{MaxAge: time.Hour}, time.Now().Add(2*time.Hour))
	if len(got) != 2 || got[0].Reason != "max_age" {
		t.Fatalf("age sweep %+v", got)
	}
	if _, err := os.Stat(filepath.Join(later.Records)); err != nil {
		t.Fatal("a later session was removed")
	}
}

func TestSweepNothingSet(t *testing.T) {
	d, _ := Create(Layout{MurmurHome: t.TempDir(), ManifestDir: t.TempDir()})
	if got, err := Sweep(d, t.TempDir(), Retain{}, time.Now()); got != nil || err != nil {
		t.Fatalf("%v %v", got, err)
	}
}
