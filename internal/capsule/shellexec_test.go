package capsule_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// publishShellExec builds testdata/shell-exec.wat (a tool that calls
// murmur:shell/execute run("echo", ["from-wasm"], [])) into an artifact
// and publishes it as murmur/shx.
func publishShellExec(t *testing.T, root string) {
	t.Helper()
	publishWAT(t, root, "shell-exec.wat", "shx")
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
	root, home := importsHome(t)
	publishShellExec(t, root)
	return runCapsule(t, root, home, strings.ReplaceAll(shellExecManifest, "%ALLOW%", allow), "shx")
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
