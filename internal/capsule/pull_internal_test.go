package capsule

import (
	"errors"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/store"
)

// The four install-entry forms.
func TestInstallEntryAdmits(t *testing.T) {
	for _, c := range []struct {
		entry, name string
		want        bool
	}{
		{"ana/code-review", "ana/code-review", true},
		{"ana/code-review", "ana/code-reviewer", false},
		{"ana/style-*", "ana/style-short", true},
		{"ana/style-*", "ana/styles", false},
		{"ana/style-*", "bob/style-short", false},
		{"ana/*", "ana/anything", true},
		{"ana/*", "anabel/x", false},
		{"*", "bob/x", true},
	} {
		if got := admits([]string{c.entry}, c.name); got != c.want {
			t.Errorf("admits(%q, %q) = %v, want %v", c.entry, c.name, got, c.want)
		}
	}
}

// A pull's package check: an entry admits only its own kind, a role must
// match its payload, drivers and hooks are never pulled, native and
// provider tools are refused; each with E-RUN-905.
func TestInstallAdmit(t *testing.T) {
	in := &installs{grant: manifest.Install{Skill: []string{"ana/s-*"}, Tool: []string{"*"}}, l: &launcher{c: &manifest.Capsule{}}}
	wasm := artifact.Entry{Path: "t.wasm", Data: []byte("\x00asm")}
	skill := artifact.Entry{Path: "skill.md", Data: []byte("# S\n")}
	for _, c := range []struct {
		name, yaml string
		files      []artifact.Entry
		refusal    string // "" admitted
		code       diag.Code
	}{
		{"ana/s-one", "runtime: skill\nrequires_files: [skill.md]\n", []artifact.Entry{skill}, "", ""},
		{"ana/t", "runtime: tool\nrequires_files: [t.wasm]\n", []artifact.Entry{wasm}, "", ""},
		{"ana/other", "runtime: skill\nrequires_files: [skill.md]\n", []artifact.Entry{skill}, "is a skill, and no entry of capabilities.install.skill", ""},
		{"ana/s-two", "runtime: skill\nrequires_files: [t.wasm]\n", []artifact.Entry{wasm}, "has no skill.md", ""},
		{"ana/t", "runtime: tool\nrequires_files: [t.wasm]\n", []artifact.Entry{skill}, "has no component", ""},
		{"ana/d", "runtime: driver\nrequires_files: [t.wasm]\n", []artifact.Entry{wasm}, "never drivers or hooks", ""},
		{"ana/h", "runtime: hook\nbinding: on-tool-call\nexecution_mode: async\ncommit_policy: none\nrequires_files: [t.wasm]\n", []artifact.Entry{wasm}, "never drivers or hooks", ""},
		{"ana/computer", "runtime: tool\nrequires_files: [t.wasm]\nprovider_tool: {kind: computer, display_width: 1280, display_height: 800}\n", []artifact.Entry{wasm}, "must run sealed", diag.CapProviderToolFloor},
		{"ana/n", "runtime: tool\nimplementation: native\nrequires_files: [n.sh]\n", []artifact.Entry{{Path: "n.sh", Data: []byte("#!/bin/sh\n"), Exec: true}}, "is a native tool", ""},
	} {
		ref, _ := artifact.ParseRef(c.name + "@1.0.0")
		mf := "name: " + ref.Name + "\nversion: 1.0.0\n" + c.yaml
		b, err := artifact.Pack(append([]artifact.Entry{{Path: "murmur.yaml", Data: []byte(mf)}}, c.files...))
		if err != nil {
			t.Fatal(err)
		}
		pkg, err := artifact.Open(b, artifact.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		_, err = in.admit(&store.Fetched{Ref: ref}, pkg)
		var d diag.Diagnostic
		switch {
		case c.code != "":
			if !errors.As(err, &d) || d.Code != c.code || !strings.Contains(d.Msg, c.refusal) {
				t.Errorf("%s %q = %v, want %s %q", c.name, c.yaml, err, c.code, c.refusal)
			}
		case c.refusal == "" && err != nil:
			t.Errorf("%s %q refused: %v", c.name, c.yaml, err)
		case c.refusal != "" && (!errors.As(err, &d) || d.Code != diag.RunInstall || !strings.Contains(d.Msg, c.refusal)):
			t.Errorf("%s %q = %v, want E-RUN-905 %q", c.name, c.yaml, err, c.refusal)
		}
	}
	// Under a sealed floor (and no vision: false model) the same provider
	// tool is admitted, as a declared one would launch.
	sealed := &installs{grant: in.grant, l: &launcher{c: &manifest.Capsule{Capabilities: &manifest.Capabilities{Containment: "sealed"}}}}
	b, _ := artifact.Pack([]artifact.Entry{{Path: "murmur.yaml", Data: []byte("name: computer\nversion: 1.0.0\nruntime: tool\nrequires_files: [t.wasm]\nprovider_tool: {kind: computer, display_width: 1280, display_height: 800}\n")}, wasm})
	pkg, _ := artifact.Open(b, artifact.DefaultLimits)
	ref, _ := artifact.ParseRef("ana/computer@1.0.0")
	if _, err := sealed.admit(&store.Fetched{Ref: ref}, pkg); err != nil {
		t.Fatalf("a provider tool under a sealed floor: %v", err)
	}
}
