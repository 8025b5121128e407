package config

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

func TestScopeSources(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	gp := filepath.Join(home, ".murmur", FileName)
	for _, kv := range [][2]string{
		{"sources.ana.repo", "ana-org/mur-artifacts"},
		{"sources.bo.repo", "bo/tools"},
		{"sources.bo.api_url", "https://ghe.example.com/api/v3/"},
		{"sources.bo.token_env", "GHE_TOKEN"},
		{"registries.hub.url", "https://hub.example.com"},
	} {
		if err := Set(gp, kv[0], kv[1]); err != nil {
			t.Fatalf("set %s: %v", kv[0], err)
		}
	}
	e, err := LoadEffective("")
	if err != nil {
		t.Fatal(err)
	}
	// By default the scope sources come after every registry.
	if got := e.Order(); !slices.Equal(got, []string{SourceProject, SourceGlobal, "hub", SourceScopes}) {
		t.Fatalf("order = %v", got)
	}
	ana, bo := e.Sources["ana"], e.Sources["bo"]
	if ana.APIURL() != DefaultGitHubAPI || bo.APIURL() != "https://ghe.example.com/api/v3" {
		t.Fatalf("api urls = %q %q", ana.APIURL(), bo.APIURL())
	}
	t.Setenv("GITHUB_TOKEN", "gh-token")
	t.Setenv("GHE_TOKEN", "ghe-token")
	if ana.Token() != "gh-token" || bo.Token() != "ghe-token" {
		t.Fatalf("tokens = %q %q", ana.Token(), bo.Token())
	}

	// The project's entry for a scope replaces the global one.
	proj := t.TempDir()
	if err := Set(ProjectPath(proj), "sources.ana.repo", "ana/other"); err != nil {
		t.Fatal(err)
	}
	if err := Set(ProjectPath(proj), "resolution", "sources,project"); err != nil {
		t.Fatal(err)
	}
	e, err = LoadEffective(proj)
	if err != nil {
		t.Fatal(err)
	}
	if e.Sources["ana"].Repo != "ana/other" || e.Sources["bo"].Repo != "bo/tools" {
		t.Fatalf("merged sources = %+v", e.Sources)
	}
	if got := e.Order(); !slices.Equal(got, []string{SourceScopes, SourceProject}) {
		t.Fatalf("configured order = %v", got)
	}

	bad := map[string]string{
		"scope":         "sources:\n  Ana: {repo: a/b}\n",
		"no repo":       "sources:\n  ana: {api_url: https://x}\n",
		"repo path":     "sources:\n  ana: {repo: a/b/c}\n",
		"repo dotdot":   "sources:\n  ana: {repo: a/..}\n",
		"api scheme":    "sources:\n  ana: {repo: a/b, api_url: ftp://x}\n",
		"token env":     "sources:\n  ana: {repo: a/b, token_env: 'A B'}\n",
		"unknown field": "sources:\n  ana: {repo: a/b, token: x}\n",
		"registry name": "registries:\n  sources: {url: https://x}\n",
	}
	for name, in := range bad {
		if _, err := Parse("config.yaml", []byte(in)); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: err = %v, want ErrConfig", name, err)
		}
	}
	if err := Set(gp, "sources.ana.token", "x"); !errors.Is(err, ErrConfig) {
		t.Errorf("set sources.ana.token: err = %v, want ErrConfig", err)
	}
	// A scope source is read-only: no publish target.
	pub := &Effective{File: File{Publish: SourceScopes, Sources: e.Sources}}
	if err := pub.check(); !errors.Is(err, ErrConfig) {
		t.Errorf("publish: sources: err = %v, want ErrConfig", err)
	}
}
