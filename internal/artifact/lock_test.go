package artifact

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const pinA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestLockRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), LockFile)
	l, err := LoadLock(p)
	if err != nil || len(l.Artifacts) != 0 {
		t.Fatalf("missing lock: %v %v", l, err)
	}
	l.Upsert(Pin{Name: "z/tool", Version: "1.0.0", Digest: pinA, Origin: OriginOperator})
	l.Upsert(Pin{Name: "a/tool", Version: "2.0.0", Digest: pinA, Origin: OriginRuntime, From: "global"})
	l.Upsert(Pin{Name: "z/tool", Version: "1.1.0", Digest: pinA, Origin: OriginOperator, From: "source:z", OwnerID: 583231})
	if err := l.Save(p); err != nil {
		t.Fatal(err)
	}
	got, err := LoadLock(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Artifacts) != 2 || got.Artifacts[0].Name != "a/tool" || got.Artifacts[1].Version != "1.1.0" || got.Artifacts[1].OwnerID != 583231 {
		t.Fatalf("round trip = %+v", got.Artifacts)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".*tmp*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestParseLockRefuses(t *testing.T) {
	tests := map[string]string{
		"unknown key":   "lock_version: 1\nartifacts: []\nextra: 1\n",
		"bad version":   "lock_version: 2\n",
		"bare name":     "lock_version: 1\nartifacts:\n- {name: tool, version: 1.0.0, digest: " + pinA + ", origin: operator}\n",
		"bad digest":    "lock_version: 1\nartifacts:\n- {name: a/tool, version: 1.0.0, digest: sha256:xyz, origin: operator}\n",
		"bad origin":    "lock_version: 1\nartifacts:\n- {name: a/tool, version: 1.0.0, digest: " + pinA + ", origin: someone}\n",
		"pinned twice":  "lock_version: 1\nartifacts:\n- {name: a/tool, version: 1.0.0, digest: " + pinA + ", origin: operator}\n- {name: a/tool, version: 1.0.1, digest: " + pinA + ", origin: operator}\n",
		"slash version": "lock_version: 1\nartifacts:\n- {name: a/tool, version: ../1, digest: " + pinA + ", origin: operator}\n",
		"bad owner id":  "lock_version: 1\nartifacts:\n- {name: a/tool, version: 1.0.0, digest: " + pinA + ", origin: operator, owner_id: -3}\n",
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseLock([]byte(in)); !errors.Is(err, ErrLock) {
				t.Fatalf("err = %v, want ErrLock", err)
			}
		})
	}
}

func TestLoadLockNamesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), LockFile)
	os.WriteFile(p, []byte("lock_version: [\n"), 0o644)
	if _, err := LoadLock(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("err = %v, want it to name %s", err, p)
	}
}

func FuzzParseLock(f *testing.F) {
	f.Add([]byte("lock_version: 1\nartifacts:\n- {name: a/tool, version: 1.0.0, digest: " + pinA + ", origin: operator}\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLock(b)
		if err != nil {
			return
		}
		out, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseLock(out)
		if err != nil {
			t.Fatalf("a lock that parsed does not re-parse after marshal: %v\n%s", err, out)
		}
		if len(again.Artifacts) != len(l.Artifacts) {
			t.Fatal("round trip lost pins")
		}
	})
}
