package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestTrustedKeys(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	gp := filepath.Join(home, ".murmur", FileName)
	if err := Set(gp, "trusted_keys.ana", "keys/ana.pub, /etc/murmur/ana-old.pub"); err != nil {
		t.Fatal(err)
	}
	if err := Set(gp, "trusted_keys.*", "/etc/murmur/release.pub"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := Get(gp, "trusted_keys.ana"); err != nil || !ok || v != "keys/ana.pub,/etc/murmur/ana-old.pub" {
		t.Fatalf("get = %q %v %v", v, ok, err)
	}
	// A relative key path is relative to the file that names it.
	f, err := Load(gp)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(home, ".murmur", "keys", "ana.pub"), "/etc/murmur/ana-old.pub"}
	if !reflect.DeepEqual(f.TrustedKeys["ana"], want) {
		t.Fatalf("trusted_keys.ana = %v, want %v", f.TrustedKeys["ana"], want)
	}

	// The project's entry for a scope replaces the global one; the others stay.
	proj := t.TempDir()
	if err := Set(ProjectPath(proj), "trusted_keys.ana", "p.pub"); err != nil {
		t.Fatal(err)
	}
	e, err := LoadEffective(proj)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.TrustedKeys["ana"]; len(got) != 1 || got[0] != filepath.Join(proj, ".murmur", "p.pub") {
		t.Fatalf("effective ana = %v", got)
	}
	if e.TrustedKeysFrom["ana"] != ProjectPath(proj) || e.TrustedKeysFrom["*"] != gp {
		t.Fatalf("from = %v", e.TrustedKeysFrom)
	}
	if len(e.TrustedKeys["*"]) != 1 {
		t.Fatalf("global * entry lost: %v", e.TrustedKeys)
	}

	for name, body := range map[string]string{
		"bad scope":   "trusted_keys:\n  Ana: [a.pub]\n",
		"empty list":  "trusted_keys:\n  ana: []\n",
		"empty entry": "trusted_keys:\n  ana: [\"\"]\n",
	} {
		if _, err := Parse(name, []byte(body)); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	if err := Set(gp, "trusted_keys.a.b", "x"); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad key: %v", err)
	}
	if err := Set(gp, "trusted_keys.ana", ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(gp); len(b) == 0 {
		t.Fatal("removing one scope emptied the file")
	}
	if _, ok, _ := Get(gp, "trusted_keys.ana"); ok {
		t.Fatal("trusted_keys.ana still set after removal")
	}
}
