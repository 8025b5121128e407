package capsule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/guesttest"
	"github.com/murmur/mur/internal/providertest"
)

// hookDecl is one hook of a hook scenario: its contract fields (the
// hook's own murmur.yaml) and its capsule entry's extra lines.
type hookDecl struct {
	name     string // bare name, published as murmur/<name>
	contract string // lines of the hook's own murmur.yaml
	entry    string // lines under the capsule entry (indented 4)
	guest    string // the built component; "" is hook-probe-go
}

// publishHook publishes the hook's component (examples/hook-probe-go's
// unless it names another) as murmur/<name> with the given contract fields.
func publishHook(t *testing.T, root string, h hookDecl) {
	t.Helper()
	guest := h.guest
	if guest == "" {
		guest = "hook-probe-go"
	}
	b, err := os.ReadFile(guesttest.File(t, guest))
	if err != nil {
		t.Fatal(err)
	}
	own := fmt.Sprintf("name: %s\nversion: \"0.1.0\"\nruntime: hook\nrequires_files: [%s.wasm]\n%s", h.name, h.name, h.contract)
	publishDir(t, root, h.name, map[string][]byte{h.name + ".wasm": b, "murmur.yaml": []byte(own)})
}

const hookManifest = `name: hooked
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      keyless: true
  - name: murmur/file-go
    version: "0.1.0"
%HOOKS%capabilities:
  shell:
    allow: [sh]
inference:
  model: %MODEL%
  driver:
    artifact: murmur/driver-openai
  max_turns: 8
%EXTRA%`

// hookRun is one mur run of a hook scenario.
type hookRun struct {
	code    int
	stderr  string
	reqs    []providertest.Request
	lines   []map[string]any
	records string
	workdir string
}

// runHooks publishes the driver, file-go and the hooks into a fresh HOME,
// installs a capsule declaring them and runs it against a provider
// scripted with steps.
func runHooks(t *testing.T, hooks []hookDecl, extra string, steps ...providertest.Step) hookRun {
	t.Helper()
	return runHooksModel(t, "gpt-4o-mini", hooks, extra, steps...)
}

// runHooksModel is runHooks with inference.model set to model.
func runHooksModel(t *testing.T, model string, hooks []hookDecl, extra string, steps ...providertest.Step) hookRun {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	shareCompileCache(t, home)
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	publish(t, root, "../../examples/file-go", "file-go")
	var entries strings.Builder
	for _, h := range hooks {
		publishHook(t, root, h)
		fmt.Fprintf(&entries, "  - name: murmur/%s\n    version: \"0.1.0\"\n    runtime: hook\n%s", h.name, h.entry)
	}
	prov := providertest.Start(t, steps...)
	m := strings.NewReplacer("%HOOKS%", entries.String(), "%EXTRA%", extra, "%MODEL%", model).Replace(hookManifest)
	manifestPath := installManifest(t, root, m, prov.URL)
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "do the work"}, nil, &stdout, &stderr)
	r := hookRun{code: code, stderr: stderr.String(), reqs: prov.Requests()}
	if code == 2 {
		return r
	}
	r.lines = trace(t, home)
	r.records, _ = r.lines[0]["records_dir"].(string)
	r.workdir, _ = r.lines[0]["workdir"].(string)
	return r
}

// of returns the trace lines of one event type.
func (r hookRun) of(ev string) []map[string]any {
	var out []map[string]any
	for _, l := range r.lines {
		if l["event"] == ev {
			out = append(out, l)
		}
	}
	return out
}

// hookLog is the hook's log in the session's logs/.
func (r hookRun) hookLog(name string) string {
	b, _ := os.ReadFile(filepath.Join(r.records, "logs", "hook-murmur-"+name+".log"))
	return string(b)
}

// events reads a hook-probe log of {"seq","event","data"} lines.
func events(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("hook log: %v", err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("hook log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// toolSteps: the model writes a file with file-go, runs a shell command,
// then answers.
var toolSteps = []providertest.Step{
	{Calls: []providertest.Call{{ID: "c1", Name: "file-go", Input: `{"op":"write","path":"out.txt","content":"hi"}`}}, InputTokens: 10, OutputTokens: 5},
	{Calls: []providertest.Call{{ID: "c2", Name: "sh", Input: `{"command":"echo ran > ran.txt; echo shell-ran"}`}}, InputTokens: 20, OutputTokens: 5},
	{Text: "Done.", InputTokens: 30, OutputTokens: 3},
}

func config(js string) string { return "    config: " + js + "\n" }

// TestHookObserverEveryEvent: a hook with no binding is dispatched at
// every event, in order, on one instance, with each event's data; a
// filesystem.records grant makes hooks/ beside the trace its directory.
func TestHookObserverEveryEvent(t *testing.T) {
	r := runHooks(t, []hookDecl{{name: "obs",
		entry: config(`{"log":"events.jsonl"}`) + "    capabilities:\n      filesystem:\n        records: true\n"}}, "", toolSteps...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	evs := events(t, filepath.Join(r.records, "hooks", "events.jsonl"))
	var names []string
	for i, e := range evs {
		names = append(names, e["event"].(string))
		if e["seq"] != float64(i+1) {
			t.Errorf("event %d has seq %v: one instance serves the session", i, e["seq"])
		}
	}
	want := "on-stage on-session-start on-task-start on-inference on-tool-call on-inference on-shell on-tool-call on-inference on-task-end on-session-end"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	data := func(i int) map[string]any { return evs[i]["data"].(map[string]any) }
	if d := data(1); d["capsule_name"] != "hooked" || !strings.HasPrefix(d["session_id"].(string), "ses_") || d["model"] != "gpt-4o-mini" {
		t.Errorf("session context = %v", d)
	}
	if d := data(2); d["source"] != "cli" || d["input_bytes"] != float64(len("do the work")) {
		t.Errorf("task-start = %v", d)
	}
	if d := data(3); d["turn"] != float64(1) || d["decision"] != "tool_use" {
		t.Errorf("first inference = %v", d)
	}
	if d := data(4); d["tool_name"] != "file-go" || d["status"] != "passed" || d["input_bytes"] == float64(0) {
		t.Errorf("tool event = %v", d)
	}
	if d := data(6); d["binary"] != canonicalSh(t) || d["command"] != "echo ran > ran.txt; echo shell-ran" || d["exit_code"] != float64(0) || d["turn"] != float64(2) || d["stdout_bytes"] != float64(len("shell-ran\n")) {
		t.Errorf("shell event = %v", d)
	}
	if d := data(9); d["exit_status"] != "ok" {
		t.Errorf("task-end = %v", d)
	}
	if d := data(10); d["total_turns"] != float64(3) || d["total_tool_calls"] != float64(2) || d["total_shell_calls"] != float64(1) || d["exit_status"] != "ok" {
		t.Errorf("session-end = %v", d)
	}
	// Every call but on-stage's (before session_start opens the trace)
	// has its record; none of them failed.
	calls := r.of("hook_call")
	if len(calls) != len(evs)-1 {
		t.Errorf("%d hook_call records for %d calls after on-stage", len(calls), len(evs)-1)
	}
	if r.lines[0]["event"] != "session_start" {
		t.Errorf("the trace starts with %v", r.lines[0]["event"])
	}
	for _, c := range calls {
		if c["hook"] != "murmur/obs" || c["outcome"] != "none" || c["mode"] != "blocking" {
			t.Errorf("hook_call = %v", c)
		}
	}
	// The hook is not a tool the model is offered.
	if strings.Contains(string(r.reqs[0].Raw), "murmur/obs") || strings.Contains(string(r.reqs[0].Raw), `"obs"`) {
		t.Errorf("the hook reached the model's tool list")
	}
}

// TestHookDefaultDeny: a hook entry with no capabilities gets no
// directory: its writes fail, each failure is logged to its log, the
// session is not disturbed, and nothing lands in the work folder.
func TestHookDefaultDeny(t *testing.T) {
	r := runHooks(t, []hookDecl{{name: "nofs", entry: config(`{"log":"events.jsonl"}`)}}, "", toolSteps...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, p := range []string{filepath.Join(r.workdir, "events.jsonl"), filepath.Join(r.records, "hooks", "events.jsonl")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s written by a hook granted no directory", p)
		}
	}
	log := r.hookLog("nofs")
	if n := strings.Count(log, " error: "); n != 11 {
		t.Errorf("hook log has %d error lines, want one per call (11):\n%s", n, log)
	}
	// A blocking hook's error is its log's, not a trace record.
	if n := len(r.of("hook_dispatch_error")); n != 0 {
		t.Errorf("%d hook_dispatch_error records for a blocking hook's err", n)
	}
	if len(r.of("hook_call")) != 10 {
		t.Errorf("hook_call records: %d", len(r.of("hook_call")))
	}
}

// TestPolicyHookDeniesToolCall: an on-tool-call policy hook's deny means
// the call does not run (no file written), the model reads the reason,
// and the trace records the denial; other tools still run.
func TestPolicyHookDeniesToolCall(t *testing.T) {
	r := runHooks(t, []hookDecl{{name: "gate", contract: "binding: on-tool-call\ncommit_policy: deny\n",
		entry: config(`{"deny_tools":["file-go"]}`)}}, "", toolSteps...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(r.workdir, "out.txt")); err == nil {
		t.Fatal("the denied file-go call wrote out.txt")
	}
	if raw := string(r.reqs[1].Raw); !strings.Contains(raw, "denied by the policy hook murmur/gate") || !strings.Contains(raw, "not allowed by hook-probe") {
		t.Fatalf("the model did not read the reason: %s", raw)
	}
	den := r.of("hook_denied")
	if len(den) != 1 || den[0]["tool"] != "file-go" || den[0]["handler"] != "on-tool-call" {
		t.Fatalf("hook_denied = %v", den)
	}
	// The shell tool was allowed and ran.
	if _, err := os.Stat(filepath.Join(r.workdir, "ran.txt")); err != nil {
		t.Errorf("the allowed shell call did not run: %v", err)
	}
}

// TestPolicyHookDeniesShell: an on-shell policy hook sees the resolved
// binary and its deny leaves no process, no shell record and nothing
// written; a trapping on-shell policy hook fails closed the same way.
func TestPolicyHookDeniesShell(t *testing.T) {
	// The hook is handed the binary as it will run: sh's canonical path
	// (dash on Debian), so that is the name it denies.
	deny := fmt.Sprintf(`{"deny_shell":[%q]}`, filepath.Base(canonicalSh(t)))
	for name, cfg := range map[string]string{"deny": deny, "trap": `{"trap":"on-shell"}`} {
		t.Run(name, func(t *testing.T) {
			r := runHooks(t, []hookDecl{{name: "shgate", contract: "binding: on-shell\ncommit_policy: deny\n", entry: config(cfg)}}, "", toolSteps...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(r.workdir, "ran.txt")); err == nil {
				t.Fatal("the denied command ran")
			}
			if n := len(r.of("shell")); n != 0 {
				t.Fatalf("%d shell records for a denied command", n)
			}
			if raw := string(r.reqs[2].Raw); !strings.Contains(raw, "sh: denied by the policy hook murmur/shgate") || !strings.Contains(raw, "This call did not run") {
				t.Fatalf("third request: %s", raw)
			}
			if den := r.of("hook_denied"); len(den) != 1 || den[0]["handler"] != "on-shell" {
				t.Fatalf("hook_denied = %v", den)
			}
			// file-go is not a shell tool: the on-shell gate let it run.
			if _, err := os.Stat(filepath.Join(r.workdir, "out.txt")); err != nil {
				t.Errorf("file-go did not run: %v", err)
			}
		})
	}
}

// TestHookReopensTask: an on-task-end hook with commit_policy
// reopen-task reopens the task with its feedback, once under the default
// lifecycle.max_task_reopens (1); the second reopen is refused and
// recorded.
func TestHookReopensTask(t *testing.T) {
	r := runHooks(t, []hookDecl{{name: "reopen", contract: "binding: on-task-end\ncommit_policy: reopen-task\n",
		entry: config(`{"reopen":"check the output again"}`)}}, "",
		providertest.Step{Text: "First answer.", InputTokens: 10, OutputTokens: 3},
		providertest.Step{Text: "Second answer.", InputTokens: 10, OutputTokens: 3},
	)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if len(r.reqs) != 2 {
		t.Fatalf("%d model calls, want 2 (the task and its one reopen)", len(r.reqs))
	}
	if raw := string(r.reqs[1].Raw); !strings.Contains(raw, "check the output again") || !strings.Contains(raw, "First answer.") || !strings.Contains(raw, "do the work") {
		t.Fatalf("the reopened attempt lacks the task, the answer or the feedback: %s", raw)
	}
	re := r.of("task_reopened")
	if len(re) != 1 || re[0]["hook"] != "murmur/reopen" || re[0]["feedback"] != "check the output again" {
		t.Fatalf("task_reopened = %v", re)
	}
	ref := r.of("task_reopen_refused")
	if len(ref) != 1 || !strings.Contains(ref[0]["refused"].(string), "max_task_reopens (1)") {
		t.Fatalf("task_reopen_refused = %v", ref)
	}
	if b, _ := os.ReadFile(filepath.Join(r.records, "out", "result.txt")); string(b) != "Second answer." {
		t.Errorf("result.txt = %q", b)
	}
	end := r.of("session_end")
	if len(end) != 1 || end[0]["turns"] != float64(2) {
		t.Errorf("session_end = %v", end)
	}
}

// TestHookReopenDisabled: lifecycle.max_task_reopens: 0 turns reopening
// off.
func TestHookReopenDisabled(t *testing.T) {
	r := runHooks(t, []hookDecl{{name: "reopen", contract: "binding: on-task-end\ncommit_policy: reopen-task\n",
		entry: config(`{"reopen":"again"}`)}}, "lifecycle:\n  max_task_reopens: 0\n",
		providertest.Step{Text: "Only answer.", InputTokens: 10, OutputTokens: 3},
	)
	if r.code != 0 || len(r.reqs) != 1 || len(r.of("task_reopened")) != 0 || len(r.of("task_reopen_refused")) != 1 {
		t.Fatalf("exit %d, %d requests, reopened %v, refused %v", r.code, len(r.reqs), r.of("task_reopened"), r.of("task_reopen_refused"))
	}
}

// TestAsyncHookInSession: an async hook sees every event on one
// instance, in order, and its queue is drained before session_end, so
// its on-session-end call is not lost; its err is a hook_dispatch_error.
func TestAsyncHookInSession(t *testing.T) {
	r := runHooks(t, []hookDecl{
		{name: "asyncobs", contract: "execution_mode: async\n", entry: config(`{"log":"events.jsonl"}`) + "    capabilities:\n      filesystem:\n        scope: hooklog\n"},
		{name: "asyncfail", contract: "execution_mode: async\nbinding: on-task-end\n", entry: config(`{"fail":"on-task-end"}`)},
	}, "", toolSteps...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	evs := events(t, filepath.Join(r.workdir, "hooklog", "events.jsonl"))
	if len(evs) != 11 || evs[10]["event"] != "on-session-end" || evs[10]["seq"] != float64(11) {
		t.Fatalf("async hook saw %d events, last %v", len(evs), evs[len(evs)-1])
	}
	var endAt, drainAt, errAt int
	for i, l := range r.lines {
		switch l["event"] {
		case "session_end":
			endAt = i
		case "hook_drain":
			drainAt = i
		case "hook_dispatch_error":
			errAt = i
			if l["hook"] != "murmur/asyncfail" || l["fault"] != "error" || l["mode"] != "async" {
				t.Errorf("hook_dispatch_error = %v", l)
			}
		}
	}
	if errAt == 0 || drainAt == 0 || drainAt > endAt || errAt > endAt {
		t.Fatalf("records out of place: error at %d, drain at %d, session_end at %d", errAt, drainAt, endAt)
	}
}

// TestHookRefusals: a hook whose own commit_policy its binding cannot
// honour (seed-context on on-task-end) is refused at staging, before
// anything runs.
func TestHookRefusals(t *testing.T) {
	r := runHooks(t, []hookDecl{{name: "seed", contract: "binding: on-task-end\ncommit_policy: seed-context\n"}}, "",
		providertest.Step{Text: "never"})
	if r.code != 2 || !strings.Contains(r.stderr, "E-MAN-003") || !strings.Contains(r.stderr, "seed-context") || !strings.Contains(r.stderr, "reopen-task") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if len(r.reqs) != 0 {
		t.Fatalf("a refused capsule called the model")
	}
}

// canonicalSh is sh resolved on PATH to its canonical path, as a shell
// event names the binary.
func canonicalSh(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	if p, err = filepath.EvalSymlinks(p); err != nil {
		t.Fatal(err)
	}
	return p
}
