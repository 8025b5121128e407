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
	in := &installs{grant: manifest.Install{Skill: []string{"ana/s-*"}, Tool: []string{"*"}}}
	wasm := artifact.Entry{Path: "t.wasm", Data: []byte("\x00asm")}
	skill := artifact.Entry{Path: "skill.md", Data: []byte("# S\n")}
	for _, c := range []struct {
		name, yaml string
		files      []artifact.Entry
		refusal    string // "" admitted
	}{
		{"ana/s-one", "runtime: skill\nrequires_files: [skill.md]\n", []artifact.Entry{skill}, ""},
		{"ana/t", "runtime: tool\nrequires_files: [t.wasm]\n", []artifact.Entry{wasm}, ""},
		{"ana/other", "runtime: skill\nrequires_files: [skill.md]\n", []artifact.Entry{skill}, "is a skill, and no entry of capabilities.install.skill"},
		{"ana/s-two", "runtime: skill\nrequires_files: [t.wasm]\n", []artifact.Entry{wasm}, "has no skill.md"},
		{"ana/t", "runtime: tool\nrequires_files: [t.wasm]\n", []artifact.Entry{skill}, "has no component"},
		{"ana/d", "runtime: driver\nrequires_files: [t.wasm]\n", []artifact.Entry{wasm}, "never drivers or hooks"},
		{"ana/h", "runtime: hook\nbinding: on-tool-call\nexecution_mode: async\ncommit_policy: none\nrequires_files: [t.wasm]\n", []artifact.Entry{wasm}, "never drivers or hooks"},
		{"ana/n", "runtime: tool\nimplementation: native\nrequires_files: [n.sh]\n", []artifact.Entry{{Path: "n.sh", Data: []byte("#!/bin/sh\n"), Exec: true}}, "is a native tool"},
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
		case c.refusal == "" && err != nil:
			t.Errorf("%s %q refused: %v", c.name, c.yaml, err)
		case c.refusal != "" && (!errors.As(err, &d) || d.Code != diag.RunInstall || !strings.Contains(d.Msg, c.refusal)):
			t.Errorf("%s %q = %v, want E-RUN-905 %q", c.name, c.yaml, err, c.refusal)
		}
	}
}
