package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/diag"
)

func noPos(string) diag.Pos { return diag.Pos{File: "murmur.yaml", Line: 7} }

// TestCheckDescription: the checks after describe(), in the spec's order:
// the first that fails refuses.
func TestCheckDescription(t *testing.T) {
	ok := component.ProcessDescription{Executable: "harness", RequiredEnv: []string{"HOME"}, ReportsUsage: true}
	for _, tc := range []struct {
		name    string
		desc    component.ProcessDescription
		allow   []string
		ceiling string
		want    diag.Code
	}{
		{"passes", ok, []string{"HOME"}, "inference.max_session_tokens", ""},
		{"unusable name", component.ProcessDescription{Executable: "h", RequiredEnv: []string{"NOT A NAME"}}, nil, "", diag.RunDescribe},
		{"no executable", component.ProcessDescription{}, nil, "", diag.RunDescribe},
		// E-RUN-032 comes before E-CAP-019.
		{"unusable before undeclared", component.ProcessDescription{Executable: "h", RequiredEnv: []string{"HOME", "1X"}}, nil, "", diag.RunDescribe},
		{"undeclared", ok, []string{"PATH"}, "", diag.CapProcessEnv},
		{"undeclared before usage", component.ProcessDescription{Executable: "h", RequiredEnv: []string{"HOME"}}, nil, "inference.max_session_tokens", diag.CapProcessEnv},
		{"ceiling without usage", component.ProcessDescription{Executable: "h"}, nil, "inference.max_session_tokens", diag.RunNoUsage},
		{"no ceiling, no usage", component.ProcessDescription{Executable: "h"}, nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := CheckDescription(tc.desc, "local/drv", tc.allow, tc.ceiling, noPos)
			switch {
			case tc.want == "" && d != nil:
				t.Fatalf("refused: %v", d)
			case tc.want != "" && (d == nil || d.Code != tc.want):
				t.Fatalf("got %v, want %s", d, tc.want)
			case d != nil && (d.Pos.Line != 7 || d.Field == ""):
				t.Fatalf("refusal names no place: %+v", d)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	dir := harnessBin(t)
	got, d := Resolve("", "harness", "relative/bin:"+dir, "/nowhere", noPos)
	if d != nil || got != filepath.Join(dir, "harness") {
		t.Fatalf("on PATH: %q %v", got, d)
	}
	got, d = Resolve(filepath.Join(dir, "harness-v0.9.0"), "harness", "", "/nowhere", noPos)
	if d != nil || got != filepath.Join(dir, "harness-v0.9.0") {
		t.Fatalf("inference.command path: %q %v", got, d)
	}
	// A relative inference.command is the manifest directory's.
	got, d = Resolve("./harness", "other", "", dir, noPos)
	if d != nil || got != filepath.Join(dir, "harness") {
		t.Fatalf("relative inference.command: %q %v", got, d)
	}
	if _, d := Resolve("", "no-such-harness", dir, "/", noPos); d == nil || d.Code != diag.RunNotInstalled || d.Field != "inference.driver.artifact" {
		t.Fatalf("missing executable: %v", d)
	}
	if _, d := Resolve("missing-cmd", "harness", dir, "/", noPos); d == nil || d.Code != diag.RunNotInstalled || d.Field != "inference.command" {
		t.Fatalf("missing inference.command: %v", d)
	}
	notExec := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(notExec, []byte("x"), 0o644)
	if _, d := Resolve(notExec, "harness", "", "/", noPos); d == nil || d.Code != diag.RunNotInstalled || !strings.Contains(d.Msg, "not an executable") {
		t.Fatalf("non-executable inference.command: %v", d)
	}
}

func TestVersionCheck(t *testing.T) {
	drv := skeleton(t)
	desc, err := drv.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := harnessBin(t)
	for _, tc := range []struct {
		bin, version string
		warn         bool
	}{
		{"harness", "1.2.3", false},
		{"harness-v0.9.0", "0.9.0", true},
		{"harness-noversion", "", true},
	} {
		v, w := VersionCheck(context.Background(), drv, desc, filepath.Join(dir, tc.bin), t.TempDir(), nil, noPos)
		if v != tc.version || (w != nil) != tc.warn || (w != nil && (w.Code != diag.RunHarnessVersion || w.Severity != diag.Warning)) {
			t.Errorf("%s: version %q, warning %v", tc.bin, v, w)
		}
	}
	// A binary that cannot run at all is a warning too: the run proceeds.
	if _, w := VersionCheck(context.Background(), drv, desc, "/nonexistent/harness", "/", nil, noPos); w == nil || w.Code != diag.RunHarnessVersion {
		t.Errorf("unrunnable binary: %v", w)
	}
}
