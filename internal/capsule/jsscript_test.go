package capsule_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/cli"
)

const jsScriptManifest = `name: greeter
version: "0.1.0"
artifacts:
  - name: murmur/script-js
    version: "0.1.0"
    runtime: capsule
  - name: murmur/echo-go
    version: "0.1.0"
  - name: murmur/file-go
    version: "0.1.0"
%HOOK%`

// runJSScript installs jsScriptManifest (with hook) in root/<dir> and
// runs it; it returns the exit status, stdout, stderr and the session's
// trace.
func runJSScript(t *testing.T, root, dir, hook string) (int, string, string, []map[string]any) {
	t.Helper()
	capDir := filepath.Join(root, dir)
	if err := os.MkdirAll(capDir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifestPath := filepath.Join(capDir, "murmur.yaml")
	if err := os.WriteFile(manifestPath, []byte(strings.ReplaceAll(jsScriptManifest, "%HOOK%", hook)), 0o644); err != nil {
		t.Fatal(err)
	}
	mur(t, capDir, "install")
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath}, nil, &stdout, &stderr)
	m := regexp.MustCompile(`records (\S+)\)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("exit %d and no records folder named:\n%s%s", code, stdout.String(), stderr.String())
	}
	return code, stdout.String(), stderr.String(), events(t, filepath.Join(m[1], "trace.jsonl"))
}

// TestScriptCapsuleJS: examples/script-js, a script capsule written in
// JavaScript and built with componentize-js, runs under mur run as
// script-go does: its invokes of echo-go and file-go are dispatched as a
// model's calls are (tool_call records naming the script as caller, in
// call order), what it prints with console.log is the answer, and an
// on-tool-call policy hook (hook-gate-js, also JavaScript) denies its
// file-go write, so nothing is written and the script's thrown error
// fails the task with the hook's reason.
func TestScriptCapsuleJS(t *testing.T) {
	root, home := scriptHome(t)
	shareCompileCache(t, home)
	publish(t, root, "../../examples/script-js", "script-js")
	publish(t, root, "../../examples/echo-go", "echo-go")
	publish(t, root, "../../examples/file-go", "file-go")
	publishHook(t, root, hookDecl{name: "jsgate", guest: "hook-gate-js", contract: "binding: on-tool-call\ncommit_policy: deny\n"})

	code, stdout, stderr, lines := runJSScript(t, root, "ok", "")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	const answer = "greeting.txt: hello from a JS script capsule\n"
	if stdout != answer {
		t.Errorf("stdout = %q, want %q", stdout, answer)
	}
	taskID, _ := eventsOf(lines, "task_start")[0]["task_id"].(string)
	calls := toolCalls(lines)
	want := []struct{ tool, effect string }{{"echo-go", ""}, {"file-go", "mutate"}, {"file-go", "read"}}
	if len(calls) != len(want) {
		t.Fatalf("tool_call records = %v", calls)
	}
	for i, w := range want {
		c := calls[i]
		if c["tool"] != w.tool || c["caller"] != "script-js" || c["status"] != "passed" || c["call_id"] != taskID+"."+string(rune('1'+i)) {
			t.Errorf("call %d = %v, want %s by script-js, passed", i+1, c, w.tool)
		}
		if w.effect != "" && c["state_effect"] != w.effect {
			t.Errorf("call %d state_effect = %v, want %s", i+1, c["state_effect"], w.effect)
		}
	}
	records, _ := lines[0]["records_dir"].(string)
	if b, err := os.ReadFile(filepath.Join(records, "out", "result.txt")); err != nil || string(b) != answer {
		t.Errorf("out/result.txt = %q, %v", b, err)
	}
	workdir, _ := lines[0]["workdir"].(string)
	if b, err := os.ReadFile(filepath.Join(workdir, "greeting.txt")); err != nil || string(b) != "hello from a JS script capsule" {
		t.Errorf("greeting.txt = %q, %v", b, err)
	}

	code, stdout, stderr, lines = runJSScript(t, root, "denied", "  - name: murmur/jsgate\n    version: \"0.1.0\"\n    runtime: hook\n")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	if den := eventsOf(lines, "hook_denied"); len(den) != 1 || den[0]["tool"] != "file-go" || den[0]["handler"] != "on-tool-call" {
		t.Fatalf("hook_denied = %v", den)
	}
	calls = toolCalls(lines)
	if len(calls) != 2 || calls[0]["tool"] != "echo-go" || calls[0]["status"] != "passed" || calls[1]["tool"] != "file-go" || calls[1]["caller"] != "script-js" || calls[1]["status"] == "passed" {
		t.Fatalf("tool_call records = %v, want echo-go passed and file-go denied", calls)
	}
	failed := eventsOf(lines, "task_failed")
	if len(failed) != 1 || failed[0]["cause"] != "script" || !strings.Contains(failed[0]["reason"].(string), "file-go is not allowed by hook-gate-js") {
		t.Fatalf("task_failed = %v", failed)
	}
	workdir, _ = lines[0]["workdir"].(string)
	if _, err := os.Stat(filepath.Join(workdir, "greeting.txt")); err == nil {
		t.Error("the denied write ran: greeting.txt exists")
	}
}
