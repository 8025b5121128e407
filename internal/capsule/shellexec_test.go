package capsule_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/wasm/cm"
)

// publishShellExec builds testdata/shell-exec.wat (a tool that calls
// murmur:shell/execute run("echo", ["from-wasm"], [])) into an artifact
// and publishes it as murmur/shx.
func publishShellExec(t *testing.T, root string) {
	t.Helper()
	text, err := os.ReadFile("testdata/shell-exec.wat")
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := cm.Wat2Wasm(string(text))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "src", "shx")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shx.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "murmur.yaml"), []byte("name: shx\nversion: \"0.1.0\"\ndescription: Runs echo through murmur:shell/execute.\nruntime: tool\nrequires_files: [shx.wasm]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	zip := filepath.Join(root, "shx.mur.zip")
	mur(t, root, "build", dir, "-o", zip)
	mur(t, root, "publish", zip, "--scope", "murmur")
}

const shellExecManifest = `name: shx
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      keyless: true
  - name: murmur/shx
    version: "0.1.0"
capabilities:
  shell:
    allow: [%ALLOW%]
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 3
`

// runShellExec runs a capsule whose model calls the shx tool once, with
// capabilities.shell.allow set to allow, and returns the tool result the
// model read (the second request) and the session's trace.
func runShellExec(t *testing.T, allow string) (string, []map[string]any) {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	publishShellExec(t, root)
	prov := providertest.Start(t,
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "shx", Input: `{}`}}, InputTokens: 10, OutputTokens: 5},
		providertest.Step{Text: "Done.", InputTokens: 20, OutputTokens: 3},
	)
	capDir := filepath.Join(root, "cap")
	if err := os.MkdirAll(capDir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := strings.NewReplacer("%ENDPOINT%", prov.URL, "%ALLOW%", allow).Replace(shellExecManifest)
	if err := os.WriteFile(filepath.Join(capDir, "murmur.yaml"), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	mur(t, capDir, "install")
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"run", "--manifest", filepath.Join(capDir, "murmur.yaml"), "--task", "run it"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	reqs := prov.Requests()
	if len(reqs) != 2 {
		t.Fatalf("provider saw %d requests, want 2", len(reqs))
	}
	return string(reqs[1].Raw), trace(t, home)
}

// TestToolShellExecute: a tool component's murmur:shell/execute runs
// through the session's shell layer when the capsule allows the binary —
// the command's output reaches the component and the trace records the
// command as a shell tool call's is — and is refused by the same
// allow-list when it does not, with nothing run.
func TestToolShellExecute(t *testing.T) {
	t.Run("allowed", func(t *testing.T) {
		got, lines := runShellExec(t, "echo")
		if !strings.Contains(got, "from-wasm") {
			t.Fatalf("the command's output did not reach the model through the tool: %s", got)
		}
		shells := 0
		for _, l := range lines {
			if l["event"] == "shell" {
				shells++
				if b, _ := l["binary"].(string); filepath.Base(b) != "echo" || l["command"] != "from-wasm" || l["exit_code"] != float64(0) {
					t.Errorf("shell record = %v", l)
				}
			}
			if l["event"] == "tool_call" && l["tool"] == "shx" && l["status"] != "ok" && l["status"] != "passed" {
				t.Errorf("tool_call = %v", l)
			}
		}
		if shells != 1 {
			t.Errorf("%d shell records, want 1: %v", shells, lines)
		}
	})
	t.Run("not allowed", func(t *testing.T) {
		got, lines := runShellExec(t, "ls")
		if strings.Contains(got, "from-wasm") || !strings.Contains(got, "echo") {
			t.Fatalf("the tool result does not carry the refusal: %s", got)
		}
		for _, l := range lines {
			if l["event"] == "shell" {
				t.Errorf("a refused command has a shell record: %v", l)
			}
		}
	})
}
