package capsule_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/wasm/cm"
)

// publishScript compiles testdata/script.wat, invoking a then b and
// ending with tail, into the script capsule murmur/<name> (runtime:
// capsule in its own murmur.yaml) and publishes it to the global store.
func publishScript(t *testing.T, root, name, a, b, tail string) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "script.wat"))
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := cm.Wat2Wasm(strings.NewReplacer("%A%", a, "%B%", b, "%ALEN%", strconv.Itoa(len(a)), "%BLEN%", strconv.Itoa(len(b)), "%TAIL%", tail).Replace(string(text)))
	if err != nil {
		t.Fatal(err)
	}
	own := "name: " + name + "\nversion: \"0.1.0\"\ndescription: Test script " + name + ".\nruntime: capsule\nrequires_files: [" + name + ".wasm]\n"
	publishDir(t, root, name, map[string][]byte{name + ".wasm": wasm, "murmur.yaml": []byte(own)})
}

const scriptManifest = `name: scripted
version: "0.1.0"
artifacts:
  - name: murmur/script
    version: "0.1.0"
    runtime: capsule
  - name: murmur/shx
    version: "0.1.0"
capabilities:
  shell:
    allow: [echo]
%EXTRA%`

// runScriptCapsule installs and runs the script capsule (manifest with
// %EXTRA% replaced) with mur run and no task; it returns the exit status,
// stderr and the trace.
func runScriptCapsule(t *testing.T, root, home, extra string, args ...string) (int, string, []map[string]any) {
	t.Helper()
	manifestPath := installManifest(t, root, strings.ReplaceAll(scriptManifest, "%EXTRA%", extra), "")
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), append([]string{"run", "--manifest", manifestPath}, args...), nil, &stdout, &stderr)
	return code, stdout.String() + stderr.String(), trace(t, home)
}

// scriptHome is a fresh HOME with no driver at all: a script capsule
// needs none.
func scriptHome(t *testing.T) (root, home string) {
	t.Helper()
	root = t.TempDir()
	home = filepath.Join(root, "home")
	t.Setenv("HOME", home)
	return root, home
}

func eventsOf(lines []map[string]any, name string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["event"] == name {
			out = append(out, l)
		}
	}
	return out
}

// TestScriptCapsule: mur run runs a script capsule — no driver, no model
// — by calling its murmur:capsule/run; each of its invoke calls goes
// through the session's dispatch path as a model's call would: the callee
// (a tool running echo through murmur:shell/execute) runs under its own
// grants and leaves its shell and tool_call records, the record names the
// script as the caller, and a name outside the capsule's inventory is the
// same "no such tool" error result, with nothing run. The session records
// session_start, task_start, task_end and session_end, status ok.
func TestScriptCapsule(t *testing.T) {
	root, home := scriptHome(t)
	publishScript(t, root, "script", "shx", "nosuch", "")
	publishShellExec(t, root)
	code, out, lines := runScriptCapsule(t, root, home, "")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	start := eventsOf(lines, "session_start")
	if len(start) != 1 || start[0]["script"] != "murmur/script" || start[0]["model"] != nil || start[0]["driver"] != nil {
		t.Fatalf("session_start = %v", start)
	}
	if ts := eventsOf(lines, "task_start"); len(ts) != 1 || ts[0]["script"] != "script" {
		t.Fatalf("task_start = %v", ts)
	}
	calls := toolCalls(lines)
	if len(calls) != 2 {
		t.Fatalf("tool_call records = %v, want shx's and nosuch's", calls)
	}
	taskID, _ := eventsOf(lines, "task_start")[0]["task_id"].(string)
	if c := calls[0]; c["tool"] != "shx" || c["caller"] != "script" || c["status"] != "passed" || c["call_id"] != taskID+".1" {
		t.Errorf("shx's record = %v", c)
	}
	if c := calls[1]; c["tool"] != "nosuch" || c["caller"] != "script" || c["status"] != "error" || c["error"] != "unknown tool" || c["call_id"] != taskID+".2" {
		t.Errorf("nosuch's record = %v", c)
	}
	if n := len(eventsOf(lines, "shell")); n != 1 {
		t.Errorf("%d shell records, want shx's one", n)
	}
	if n := len(eventsOf(lines, "inference")); n != 0 {
		t.Errorf("%d inference records in a script capsule", n)
	}
	end := eventsOf(lines, "task_end")
	if len(end) != 1 || end[0]["exit_status"] != "ok" || end[0]["turns"] != float64(0) {
		t.Fatalf("task_end = %v", end)
	}
	if se := eventsOf(lines, "session_end"); len(se) != 1 || se[0]["exit_status"] != "ok" {
		t.Fatalf("session_end = %v", se)
	}
}

// TestScriptCapsuleTrap: a script that traps ends its task failed, cause
// script, the trap in the reason; mur run exits 1.
func TestScriptCapsuleTrap(t *testing.T) {
	root, home := scriptHome(t)
	publishScript(t, root, "script", "shx", "shx", "unreachable")
	publishShellExec(t, root)
	code, out, lines := runScriptCapsule(t, root, home, "")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	failed := eventsOf(lines, "task_failed")
	if len(failed) != 1 || failed[0]["cause"] != "script" || !strings.Contains(failed[0]["reason"].(string), "the script script failed") || !strings.Contains(failed[0]["reason"].(string), "unreachable") {
		t.Fatalf("task_failed = %v", failed)
	}
	if n := len(toolCalls(lines)); n != 2 {
		t.Errorf("%d tool_call records before the trap, want 2", n)
	}
	if se := eventsOf(lines, "session_end"); len(se) != 1 || se[0]["exit_status"] != "failed" {
		t.Fatalf("session_end = %v", se)
	}
}

// TestScriptCapsuleDeadline: a script that never returns is stopped at
// capabilities.limits.deadline_seconds, which bounds its run; the task
// fails with a reason naming the limit.
func TestScriptCapsuleDeadline(t *testing.T) {
	root, home := scriptHome(t)
	publishScript(t, root, "script", "shx", "shx", "(loop $spin (br $spin))")
	publishShellExec(t, root)
	code, out, lines := runScriptCapsule(t, root, home, "  limits:\n    deadline_seconds: 1\n")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	failed := eventsOf(lines, "task_failed")
	if len(failed) != 1 || failed[0]["cause"] != "script" || !strings.Contains(failed[0]["reason"].(string), "capabilities.limits.deadline_seconds") {
		t.Fatalf("task_failed = %v", failed)
	}
}

// TestScriptCapsulePolicyHook: a script's calls pass the capsule's policy
// hooks as a model's calls do: an on-tool-call deny hook (hook-probe-go,
// commit_policy deny) refuses shx, so neither of the script's two shx
// calls runs (no shell record), each is recorded as denied, and the
// script, which reads the refusals as results, ends ok.
func TestScriptCapsulePolicyHook(t *testing.T) {
	root, home := scriptHome(t)
	manifestPath := hookedScript(t, root, "binding: on-tool-call\ncommit_policy: deny\n", config(`{"deny_tools":["shx"]}`))
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	lines := trace(t, home)
	den := eventsOf(lines, "hook_denied")
	if len(den) != 2 || den[0]["tool"] != "shx" || den[0]["handler"] != "on-tool-call" {
		t.Fatalf("hook_denied = %v", den)
	}
	if n := len(eventsOf(lines, "shell")); n != 0 {
		t.Fatalf("%d shell records: a denied call ran", n)
	}
	for _, c := range toolCalls(lines) {
		if c["tool"] != "shx" || c["caller"] != "script" || c["status"] == "passed" {
			t.Errorf("tool_call = %v", c)
		}
	}
}

// hookedScript publishes the script capsule that calls shx twice, shx,
// and the hook murmur/gate with contract (its own murmur.yaml) and the
// capsule entry's extra lines, and installs the capsule; it returns the
// manifest's path.
func hookedScript(t *testing.T, root, contract, entryExtra string) string {
	t.Helper()
	publishScript(t, root, "script", "shx", "shx", "")
	publishShellExec(t, root)
	publishHook(t, root, hookDecl{name: "gate", contract: contract})
	extra := "  - name: murmur/gate\n    version: \"0.1.0\"\n    runtime: hook\n" + entryExtra
	manifest := strings.Replace(scriptManifest, "capabilities:\n", extra+"capabilities:\n", 1)
	return installManifest(t, root, strings.ReplaceAll(manifest, "%EXTRA%", ""), "")
}

// TestScriptCapsuleRefusesModelHooks: a hook bound to an event only a
// model makes (on-compaction, on-inference) or committing a seed would
// never act in a script capsule, so the launch refuses it, naming the
// entry, instead of running without it.
func TestScriptCapsuleRefusesModelHooks(t *testing.T) {
	for _, contract := range []string{
		"binding: on-compaction\ncommit_policy: replace-context\n",
		"binding: on-inference\n",
		"binding: on-task-start\ncommit_policy: seed-context\n",
	} {
		root, _ := scriptHome(t)
		manifestPath := hookedScript(t, root, contract, "")
		var stdout, stderr bytes.Buffer
		code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath}, nil, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), string(diag.ManInvalid)) ||
			!strings.Contains(stderr.String(), "script capsule has no model") || !strings.Contains(stderr.String(), "artifacts[") {
			t.Errorf("%q: exit %d, want 2 and %s naming the entry\n%s", contract, code, diag.ManInvalid, stderr.String())
		}
		if strings.Contains(stdout.String(), "status: ok") {
			t.Errorf("%q: the script ran: %s", contract, stdout.String())
		}
	}
}
