package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSetGet(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", FileName)
	steps := []struct{ key, val string }{
		{"registries.local.url", "http://127.0.0.1:5000"},
		{"registries.local.username", "ana"},
		{"resolution", "project, global,local"},
		{"credentials.TAVILY_API_KEY", "tv-1"},
		{"publish", "local"},
		{"spend.machine_tokens_per_day", "5000000"},
	}
	for _, s := range steps {
		if err := Set(p, s.key, s.val); err != nil {
			t.Fatalf("Set %s: %v", s.key, err)
		}
	}
	for key, want := range map[string]string{
		"registries.local.url": "http://127.0.0.1:5000", "resolution": "project,global,local",
		"credentials.TAVILY_API_KEY": "tv-1", "publish": "local", "spend.machine_tokens_per_day": "5000000",
	} {
		got, ok, err := Get(p, key)
		if err != nil || !ok || got != want {
			t.Errorf("Get %s = %q %v %v, want %q", key, got, ok, err, want)
		}
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v, want 0600", fi.Mode().Perm())
	}
	if err := Set(p, "credentials.TAVILY_API_KEY", ""); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := Get(p, "credentials.TAVILY_API_KEY"); ok {
		t.Error("empty value did not remove the key")
	}
	f, err := Load(p)
	if err != nil || f.Registries["local"].Username != "ana" || len(f.Resolution) != 3 || f.Spend == nil || f.Spend.MachineTokensPerDay != 5000000 {
		t.Fatalf("Load = %+v, %v", f, err)
	}
}

func TestSetRefuses(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	for _, tt := range []struct{ key, val string }{
		{"registry", "x"},
		{"credentials.lower", "x"},
		{"registries.local.bogus", "x"},
		{"registries.local.url", "ftp://x"},
		{"registries.local.plain_http", "maybe"},
		{"resolution", "project,project"},
		{"spend.machine_tokens_per_day", "0"},
		{"spend.machine_tokens_per_day", "lots"},
		{"spend.other", "1"},
	} {
		if err := Set(p, tt.key, tt.val); !errors.Is(err, ErrConfig) {
			t.Errorf("Set(%s, %s) = %v, want ErrConfig", tt.key, tt.val, err)
		}
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused Set wrote the file")
	}
}

func TestEffective(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	proj := t.TempDir()
	g, _ := GlobalPath()
	Set(g, "registries.hub.url", "https://registry.example.com")
	Set(g, "registries.a.url", "https://a.example.com")
	e, err := LoadEffective(proj)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.Order(), ","); got != "project,global,a,hub" {
		t.Fatalf("default order = %s", got)
	}
	if e.PublishTarget() != SourceGlobal {
		t.Fatal("default publish target is not global")
	}
	Set(ProjectPath(proj), "resolution", "hub,project")
	e, err = LoadEffective(proj)
	if err != nil || strings.Join(e.Order(), ",") != "hub,project" {
		t.Fatalf("project order = %v, %v", e.Order(), err)
	}
	Set(ProjectPath(proj), "resolution", "nowhere")
	if _, err := LoadEffective(proj); !errors.Is(err, ErrConfig) {
		t.Fatalf("unknown source accepted: %v", err)
	}
	Set(ProjectPath(proj), "resolution", "")
	os.WriteFile(ProjectPath(proj), []byte("credentials:\n  K: v\n"), 0o600)
	if _, err := LoadEffective(proj); !errors.Is(err, ErrConfig) {
		t.Fatalf("project credentials accepted: %v", err)
	}
}

func TestCredentialsReread(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	c := NewCredentials(p)
	if _, ok, err := c.Credential("K"); ok || err != nil {
		t.Fatalf("missing file: %v %v", ok, err)
	}
	Set(p, "credentials.K", "one")
	if v, ok, _ := c.Credential("K"); !ok || v != "one" {
		t.Fatalf("got %q %v", v, ok)
	}
	// Same size, rewritten in the same instant: the inode changes because
	// Set renames a new file into place.
	Set(p, "credentials.K", "two")
	if v, _, _ := c.Credential("K"); v != "two" {
		t.Fatalf("rotated key not seen: %q", v)
	}
	os.WriteFile(p, []byte("credentials: [\n"), 0o600)
	os.Chtimes(p, time.Now().Add(time.Second), time.Now().Add(time.Second))
	if _, _, err := c.Credential("K"); err == nil {
		t.Fatal("malformed config silently accepted")
	}
	Set(filepath.Join(filepath.Dir(p), "other.yaml"), "credentials.K", "x")
	os.Rename(filepath.Join(filepath.Dir(p), "other.yaml"), p)
	if v, _, err := c.Credential("K"); err != nil || v != "x" {
		t.Fatalf("after repair: %q %v", v, err)
	}
	Set(p, "credentials.K", "")
	if _, ok, _ := c.Credential("K"); ok {
		t.Fatal("removed key still served")
	}
}

func BenchmarkCredential(b *testing.B) {
	p := filepath.Join(b.TempDir(), FileName)
	Set(p, "credentials.K", "v")
	c := NewCredentials(p)
	for b.Loop() {
		c.Credential("K")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("resolution: [project, hub]\nregistries:\n  hub: {url: https://x}\ncredentials: {K: v}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		Parse("fuzz", b)
	})
}
