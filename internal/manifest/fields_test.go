package manifest

import (
	"strings"
	"testing"

	"github.com/murmur/mur/internal/diag"
)

// TestFieldsCoverTypes walks every field path of the capsule manifest
// types and requires each to be in Fields exactly once, and every Fields
// row to name a path the types have: a field added to the types without
// saying what a run does with it fails here.
func TestFieldsCoverTypes(t *testing.T) {
	paths := FieldPaths()
	if len(paths) < 150 {
		t.Fatalf("FieldPaths found %d paths; the walk lost its way", len(paths))
	}
	known := map[string]bool{}
	for _, p := range paths {
		known[p] = true
	}
	rows := map[string]int{}
	for _, f := range Fields {
		rows[f.Path]++
		if !known[f.Path] {
			t.Errorf("Fields lists %q, which no manifest type has", f.Path)
		}
		switch f.Status {
		case Honoured, Elsewhere:
			if f.Code != "" || f.RefusedIf != nil {
				t.Errorf("%s: a %s field carries no code", f.Path, f.Status)
			}
		case Refused:
			if f.Code.Severity() != diag.Error {
				t.Errorf("%s: refused with %q, not an error code", f.Path, f.Code)
			}
			if (f.RefusedIf == nil) != (f.When == "") {
				t.Errorf("%s: RefusedIf and When go together", f.Path)
			}
		case Warned:
			if f.Code.Severity() != diag.Warning {
				t.Errorf("%s: warned with %q, not a warning code", f.Path, f.Code)
			}
		default:
			t.Errorf("%s: status %q", f.Path, f.Status)
		}
		if f.Why == "" {
			t.Errorf("%s: no why", f.Path)
		}
	}
	for _, p := range paths {
		switch rows[p] {
		case 0:
			t.Errorf("%s is in the manifest types but not in manifest.Fields: say whether a run honours or refuses it", p)
		case 1:
		default:
			t.Errorf("%s is in Fields %d times", p, rows[p])
		}
	}
}

const runnable = "name: c\nversion: \"1\"\nartifacts:\n  - name: murmur/driver-openai\n    version: \"0.1.0\"\n    runtime: driver\n    gateway:\n      endpoint: http://127.0.0.1:1/v1\n      keyless: true\ninference:\n  model: m\n  driver:\n    artifact: murmur/driver-openai\n"

func TestUnhonoured(t *testing.T) {
	cases := []struct {
		name, extra string
		field       string // "" when nothing is refused
		code        diag.Code
		line        int
	}{
		{"plain", "", "", "", 0},
		{"exports", "exports:\n  files:\n    root: out\n    mode: read-only\n", "exports.files", diag.RunNotHonoured, 15},
		{"empty spawn block", "capabilities:\n  spawn: {}\n", "capabilities.spawn", diag.RunNotHonoured, 15},
		{"state on a tool", "  - name: ana/t\n    version: \"1\"\n    capabilities:\n      state: {store: s}\n", "", "", 0},
		{"empty state on a tool", "  - name: ana/t\n    version: \"1\"\n    capabilities:\n      state: {}\n", "", "", 0},
		{"threaded", "lifecycle:\n  conversation: threaded\n", "", "", 0},
		{"stateless", "lifecycle:\n  conversation: stateless\n", "", "", 0},
		{"record on", "context:\n  record: \"on\"\n  record_store: shared\n  retain: {max_messages: 5, max_age: 30d}\n", "", "", 0},
		{"record off", "context:\n  record: \"off\"\n", "", "", 0},
		{"control", "control:\n  settings: [inference.max_tokens]\n", "control", diag.RunNotHonoured, 14},
		{"compaction", "  compaction:\n    threshold: 0.5\n    model: m2\n    dump_summaries: true\n    max_tokens: 100\n", "", "", 0},
		{"otel", "observability:\n  otel_endpoint: http://127.0.0.1:4318\n", "", "", 0},
		{"install from stores", "capabilities:\n  install:\n    skill: [ana/*]\n    tool: [ana/jq]\n    from: [stores]\n", "", "", 0},
		{"install from sources", "capabilities:\n  install:\n    tool: [ana/jq]\n    from: [stores, sources]\n", "", "", 0},
		{"door", "network:\n  internal_port: 8080\n  authentication:\n    scheme: bearer\n    credentials:\n      ci: {scopes: [SendMessage]}\n", "", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := runnable
			if strings.HasPrefix(tc.extra, "  - ") {
				src = strings.Replace(src, "inference:", tc.extra+"inference:", 1)
			} else {
				src += tc.extra
			}
			c, ds := ParseCapsule("murmur.yaml", []byte(src))
			if c == nil || ds.HasErrors() {
				t.Fatalf("the manifest does not parse:\n%s\n%v", src, ds)
			}
			got := c.Unhonoured()
			if tc.field == "" {
				if len(got) != 0 {
					t.Fatalf("refused:\n%v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one refusal of %s, got:\n%v", tc.field, got)
			}
			d := got[0]
			if d.Code != tc.code || d.Field != tc.field || d.Pos.File != "murmur.yaml" || d.Pos.Line != tc.line {
				t.Errorf("got %s %s at %s:%d; want %s %s at line %d", d.Code, d.Field, d.Pos.File, d.Pos.Line, tc.code, tc.field, tc.line)
			}
			if !strings.Contains(d.Msg, "remove "+tc.field) {
				t.Errorf("the message does not say what to do: %s", d.Msg)
			}
		})
	}
}

// A hook entry runs: its runtime, on_overflow, filesystem.records,
// task_io.read, conversation.read and state are honoured.
func TestHookEntryHonoured(t *testing.T) {
	entry := "  - name: murmur/hook-debug\n    version: \"0.1.0\"\n    runtime: hook\n    on_overflow: block\n    capabilities:\n      filesystem: {records: true}\n      task_io: {read: true}\n      conversation: {read: true}\n      state: {store: notes}\n"
	src := strings.Replace(runnable, "inference:", entry+"inference:", 1)
	c, ds := ParseCapsule("murmur.yaml", []byte(src))
	if c == nil || ds.HasErrors() {
		t.Fatalf("does not parse: %v", ds)
	}
	if got := c.Unhonoured(); len(got) != 0 {
		t.Fatalf("a hook entry with honoured keys is refused:\n%v", got)
	}
}
