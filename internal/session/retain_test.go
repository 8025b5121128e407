package session

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
		d.Release() // ended: retention may remove it
		made = append(made, d)
		time.Sleep(2 * time.Millisecond)
	}
	// A --workdir session in the same group: its folder must survive.
	own := t.TempDir()
	wd, _ := Create(Layout{MurmurHome: home, ManifestDir: proj, Workdir: own})
	wd.Release()
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

// TestSweepSkipsLiveSession is two runs of one capsule with max_sessions: 1
// in two processes: the older session, still running in a child process,
// survives the newer one's sweep; once the child is killed (the kernel
// drops its lock), the next sweep removes it.
func TestSweepSkipsLiveSession(t *testing.T) {
	if os.Getenv("MUR_LIVE_CHILD") != "" {
		d, err := Create(Layout{MurmurHome: os.Getenv("MUR_LIVE_HOME"), ManifestDir: os.Getenv("MUR_LIVE_PROJ")})
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString(d.ID + "\n")
		time.Sleep(time.Minute) // until killed
		return
	}
	home, proj := t.TempDir(), t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestSweepSkipsLiveSession$", "-test.count=1")
	child.Env = append(os.Environ(), "MUR_LIVE_CHILD=1", "MUR_LIVE_HOME="+home, "MUR_LIVE_PROJ="+proj)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	older := strings.TrimSpace(line)
	group, _ := RecordsGroup(home, proj)
	time.Sleep(2 * time.Millisecond)
	cur, err := Create(Layout{MurmurHome: home, ManifestDir: proj})
	if err != nil {
		t.Fatal(err)
	}
	if cur.ID <= older {
		t.Fatalf("ids out of order: %s then %s", older, cur.ID)
	}
	got, err := Sweep(cur, proj, Retain{MaxSessions: 1}, time.Now())
	if err != nil || len(got) != 0 {
		t.Fatalf("swept a live session: %+v %v", got, err)
	}
	for _, p := range []string{filepath.Join(group, older), filepath.Join(proj, "workdir", older)} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("live session's %s: %v", p, err)
		}
	}
	// Resuming the live session from here is refused too.
	if _, err := CreateWithID(Layout{MurmurHome: home, ManifestDir: proj}, older); err == nil || !strings.Contains(err.Error(), "live in another mur process") {
		t.Fatalf("resumed a session live elsewhere: %v", err)
	}
	child.Process.Kill()
	child.Wait()
	got, err = Sweep(cur, proj, Retain{MaxSessions: 1}, time.Now())
	if err != nil || len(got) != 1 || got[0].ID != older {
		t.Fatalf("after the crash: %+v %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(group, older)); err == nil {
		t.Fatal("the crashed session was kept")
	}
	if _, err := os.Stat(cur.Records); err != nil {
		t.Fatal("the running session was removed")
	}
}
