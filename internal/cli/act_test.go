package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/act"
	"github.com/murmur/mur/internal/wasm/cm"
)

// kvFile writes internal/act's kv fixture, with an act:component section
// unless bare, to a file.
func kvFile(t *testing.T, bare bool) string {
	t.Helper()
	text, err := os.ReadFile("../act/testdata/kv.wat")
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := cm.Wat2Wasm(string(text))
	if err != nil {
		t.Fatal(err)
	}
	if !bare {
		sec, err := act.EncodeSection(act.Info{Name: "kv", Version: "0.1.0", Description: "A key-value fixture.", Capabilities: map[string]any{"wasi:filesystem": map[string]any{}}})
		if err != nil {
			t.Fatal(err)
		}
		wasm = act.AppendSection(wasm, sec)
	}
	p := filepath.Join(t.TempDir(), "kv.wasm")
	if err := os.WriteFile(p, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runMur(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, nil, &out, &errb)
	return code, out.String(), errb.String()
}

func TestActInfo(t *testing.T) {
	f := kvFile(t, false)
	code, out, errs := runMur(t, "act", "info", f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"kv 0.1.0\n", "A key-value fixture.", "capabilities: wasi:filesystem", "sessions: yes (act:sessions-sync/session-provider-sync@0.1.0)",
		"  echo  Echo the arguments back, as CBOR.\n    parameters: {\"type\":\"object\"", "  stats  Count the sessions"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runMur(t, "act", "info", f, "--json")
	var doc struct {
		Name     string `json:"name"`
		Sessions bool   `json:"sessions"`
		Tools    []struct {
			Name     string         `json:"name"`
			Metadata map[string]any `json:"metadata"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || doc.Name != "kv" || !doc.Sessions || len(doc.Tools) != 7 || doc.Tools[4].Metadata["std:read-only"] != true || doc.Tools[5].Metadata["std:timeout-ms"] != float64(50) {
		t.Fatalf("--json %d %v: %s", code, err, out)
	}
	code, _, errs = runMur(t, "act", "info", kvFile(t, true))
	if code != ExitFailed || !strings.Contains(errs, "no act:component custom section") {
		t.Fatalf("a component without the section: exit %d %s", code, errs)
	}
}

func TestActCall(t *testing.T) {
	f := kvFile(t, false)
	code, out, errs := runMur(t, "act", "call", f, "echo", "--args", `{"text":"hi","n":-1}`, "--session-args", `{"namespace":"x"}`)
	if code != 0 || out != `{"n":-1,"text":"hi"}`+"\n" {
		t.Fatalf("exit %d %q %s", code, out, errs)
	}
	if !strings.Contains(errs, "mur act: session kv-1 opened\nmur act: session kv-1 closed\n") {
		t.Fatalf("session not opened and closed: %s", errs)
	}
	code, out, _ = runMur(t, "act", "call", f, "echo", "--args", `{"text":1}`, "--session-args", `{"namespace":"x"}`)
	if code != ExitFailed || !strings.HasPrefix(out, "std:invalid-args: ") {
		t.Fatalf("schema failure: exit %d %q", code, out)
	}
	code, out, _ = runMur(t, "act", "call", f, "session")
	if code != ExitFailed || !strings.Contains(out, "std:invalid-args: the session args from artifacts[kv].config do not match") {
		t.Fatalf("no session args: exit %d %q", code, out)
	}
	outDir := t.TempDir()
	code, out, _ = runMur(t, "act", "call", f, "blob", "--session-args", `{"namespace":"x"}`, "--out", outDir)
	if code != 0 || !strings.Contains(out, "saved as "+filepath.Join(outDir, "act")) {
		t.Fatalf("blob: exit %d %q", code, out)
	}
	code, _, errs = runMur(t, "act", "call", f, "nope")
	if code != ExitFailed || !strings.Contains(errs, `has no tool "nope"; it lists: echo, fail, session, blob, stats`) {
		t.Fatalf("unknown tool: exit %d %s", code, errs)
	}
}
