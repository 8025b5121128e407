package session

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestIDRoundTrip(t *testing.T) {
	before := time.Now().Add(-time.Millisecond)
	var ids []string
	for i := 0; i < 50; i++ {
		id, err := NewID()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(id, "ses_") || len(id) != 30 || strings.ContainsAny(id[4:], "ilou") {
			t.Fatalf("id %q", id)
		}
		ts, err := IDTime(id)
		if err != nil {
			t.Fatal(err)
		}
		if ts.Before(before) || ts.After(time.Now().Add(time.Millisecond)) {
			t.Fatalf("id time %v", ts)
		}
		ids = append(ids, id)
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatalf("ids not time-ordered: %v", ids)
	}
}

func TestParseIDRejects(t *testing.T) {
	for _, s := range []string{"", "ses_", "abc_01k4m2y7xq8f9v3n5r7t9w1c2e", "ses_01k4m2y7xq8f9v3n5r7t9w1c2", "ses_81k4m2y7xq8f9v3n5r7t9w1c2e", "ses_01k4m2y7xq8f9v3n5r7t9w1c2u"} {
		if _, err := ParseID(s); !errors.Is(err, ErrBadID) {
			t.Errorf("%q: err = %v", s, err)
		}
	}
}

func TestCreateLayout(t *testing.T) {
	home := t.TempDir()
	proj := t.TempDir()
	d, err := Create(Layout{MurmurHome: home, ManifestDir: proj})
	if err != nil {
		t.Fatal(err)
	}
	wantRec := filepath.Join(home, "records", strings.TrimPrefix(proj, "/"), d.ID)
	if d.Records != wantRec {
		t.Fatalf("records %q want %q", d.Records, wantRec)
	}
	if d.Workdir != filepath.Join(proj, "workdir", d.ID) || !d.OwnWorkdir {
		t.Fatalf("workdir %q own=%v", d.Workdir, d.OwnWorkdir)
	}
	for _, p := range []string{d.Blobs(), d.Out(), d.Home(), d.Tmp(), d.Logs(), d.Runtime(), d.Workdir} {
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", p, err)
		}
	}
	wd := filepath.Join(t.TempDir(), "mine")
	d2, err := Create(Layout{MurmurHome: home, ManifestDir: proj, Workdir: wd})
	if err != nil || d2.Workdir != wd || d2.OwnWorkdir {
		t.Fatalf("--workdir: %+v %v", d2, err)
	}
}

func TestLaunchTask(t *testing.T) {
	tests := []struct {
		name  string
		flag  string
		files map[string]string
		want  string
		src   TaskSource
	}{
		{"flag wins", "do it", map[string]string{"task.md": "file"}, "do it", TaskFlag},
		{"task.md before input.txt", "", map[string]string{"task.md": "md", "input.txt": "txt"}, "md", TaskMD},
		{"input.txt", "", map[string]string{"input.txt": "txt"}, "txt", TaskInput},
		{"none", "", nil, "", TaskAbsent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, c := range tt.files {
				os.WriteFile(filepath.Join(dir, n), []byte(c), 0o600)
			}
			got, src, err := LaunchTask(tt.flag, dir)
			if err != nil || got != tt.want || src != tt.src {
				t.Fatalf("got %q %q %v", got, src, err)
			}
		})
	}
}

func FuzzParseID(f *testing.F) {
	f.Add("ses_01k4m2y7xq8f9v3n5r7t9w1c2e")
	f.Add("ses_zzzzzzzzzzzzzzzzzzzzzzzzzz")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseID(s)
		if err != nil {
			return
		}
		if got := Prefix + encode(u); got != s {
			t.Fatalf("round trip %q -> %q", s, got)
		}
	})
}

// TestNewV7 checks the UUID v7 layout (RFC 9562): the millisecond in the
// top 48 bits, version 7, variant 10, and ids minted within one
// millisecond counting up so they sort in mint order.
func TestNewV7(t *testing.T) {
	at := time.UnixMilli(1_764_460_800_123)
	var m v7Minter
	var prev UUID
	for i := range 5000 { // more than the 4096 a millisecond's sequence holds
		u, err := m.next(at)
		if err != nil {
			t.Fatal(err)
		}
		if u.Version() != 7 || u[8]>>6 != 2 {
			t.Fatalf("version %d, variant bits %b", u.Version(), u[8]>>6)
		}
		if i == 0 {
			id := Prefix + encode(u)
			if ts, err := IDTime(id); err != nil || !ts.Equal(at.UTC()) {
				t.Fatalf("IDTime(%s) = %v, %v; want %v", id, ts, err, at.UTC())
			}
		} else if encode(u) <= encode(prev) {
			t.Fatalf("id %d does not sort after the one before", i)
		}
		prev = u
	}
}
