package capsule_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/providertest"
)

// TestHookConversationRead: a hook granted conversation.read reads the
// task's record through murmur:conversation/read — every message the
// task appended, in order, indexed from 0, with the task's id; a hook
// without the grant gets not-granted, and a read with no task in
// progress and no context named gets no-context. With context.record:
// off a granted hook reads an empty page.
func TestHookConversationRead(t *testing.T) {
	records := "    capabilities:\n      filesystem:\n        records: true\n"
	grant := "      conversation:\n        read: true\n"
	hooks := []hookDecl{
		{name: "conv", entry: config(`{"log":"conv.jsonl","read_conversation":"on-task-end"}`) + records + grant},
		{name: "convnogrant", entry: config(`{"log":"nogrant.jsonl","read_conversation":"on-task-end"}`) + records},
		{name: "convearly", entry: config(`{"log":"early.jsonl","read_conversation":"on-session-start"}`) + records + grant},
	}
	r := runHooks(t, hooks, "", toolSteps...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	at := func(file, event string) map[string]any {
		for _, e := range events(t, filepath.Join(r.records, "hooks", file)) {
			if e["event"] == event {
				return e
			}
		}
		t.Fatalf("%s has no %s line", file, event)
		return nil
	}
	taskID := r.of("task_start")[0]["task_id"]
	e := at("conv.jsonl", "on-task-end")
	page, ok := e["conversation"].(map[string]any)
	if !ok {
		t.Fatalf("the granted hook read no page: %v", e)
	}
	entries := page["entries"].([]any)
	wantRoles := []string{"user", "assistant", "user", "assistant", "user", "assistant"}
	if len(entries) != len(wantRoles) || page["next"] != nil {
		t.Fatalf("page = %v", page)
	}
	for i, x := range entries {
		en := x.(map[string]any)
		if en["index"] != float64(i) || en["role"] != wantRoles[i] || en["task_id"] != taskID {
			t.Errorf("entry %d = %v", i, en)
		}
	}
	first, last := entries[0].(map[string]any), entries[5].(map[string]any)
	if first["content"] != "do the work" || last["content"] != "Done." {
		t.Errorf("first %v, last %v", first, last)
	}
	if c := entries[1].(map[string]any)["content"].(string); !strings.Contains(c, `"tool_use"`) || !strings.Contains(c, "file-go") {
		t.Errorf("a tool call's content = %s", c)
	}
	if e := at("nogrant.jsonl", "on-task-end"); !strings.HasPrefix(e["read_error"].(string), "not-granted: set capabilities.conversation.read: true") {
		t.Errorf("ungranted read = %v", e)
	}
	if e := at("early.jsonl", "on-session-start"); !strings.HasPrefix(e["read_error"].(string), "no-context: ") {
		t.Errorf("read with no task = %v", e)
	}

	off := runHooks(t, hooks[:1], "context:\n  record: \"off\"\n", toolSteps...)
	if off.code != 0 {
		t.Fatalf("exit %d: %s", off.code, off.stderr)
	}
	r = off
	if p, ok := at("conv.jsonl", "on-task-end")["conversation"].(map[string]any); !ok || len(p["entries"].([]any)) != 0 {
		t.Fatalf("record: off read %v", p)
	}
}

// TestHookState: a hook entry's state grant mounts the capsule's durable
// store as state/ (and nothing else: no work folder); what it writes
// there is under ~/.murmur/state/<capsule>/ after the session. A hook
// without the grant cannot write there.
func TestHookState(t *testing.T) {
	r := runHooks(t, []hookDecl{
		{name: "notes", entry: config(`{"log":"/state/events.jsonl"}`) + "    capabilities:\n      state: {}\n"},
		{name: "nostate", entry: config(`{"log":"/state/other.jsonl"}`)},
	}, "", toolSteps...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	store := filepath.Join(os.Getenv("HOME"), ".murmur", "state", "hooked")
	evs := events(t, filepath.Join(store, "events.jsonl"))
	if len(evs) != 11 || evs[0]["event"] != "on-stage" || evs[10]["event"] != "on-session-end" {
		t.Fatalf("the store holds %d events: %v", len(evs), evs)
	}
	if _, err := os.Stat(filepath.Join(store, "other.jsonl")); err == nil {
		t.Fatal("a hook without the state grant wrote into the store")
	}
	if n := strings.Count(r.hookLog("nostate"), " error: "); n != 11 {
		t.Errorf("the ungranted hook's log has %d errors, want 11:\n%s", n, r.hookLog("nostate"))
	}
	if n := strings.Count(r.hookLog("notes"), " error: "); n != 0 {
		t.Errorf("the granted hook failed:\n%s", r.hookLog("notes"))
	}
}

// TestHookWriteManifests: an on-stage hook with commit_policy
// write-manifests describes a shell binary: its manifest replaces the
// synthetic tools/sh/murmur.yaml and its description is what the model
// is offered for sh; a manifest for a binary outside
// capabilities.shell.allow is refused (the hook's log says why, the trace
// records it) and nothing is written for it. Before, the hook refused the
// launch with E-RUN-900.
func TestHookWriteManifests(t *testing.T) {
	good := "name: sh\nversion: \"1.0.0\"\nruntime: tool\ndescription: Run one sh line of the release checklist (stage hook).\n" +
		"input_schema:\n  type: object\n  properties:\n    command: {type: string, description: the checklist line}\n  required: [command]\n"
	bad := "name: curl\nversion: \"1.0.0\"\nruntime: tool\ndescription: fetch\n"
	cfg, err := json.Marshal(map[string]any{"manifests": []map[string]string{{"binary_name": "sh", "content": good}, {"binary_name": "curl", "content": bad}}})
	if err != nil {
		t.Fatal(err)
	}
	r := runHooks(t, []hookDecl{{name: "stagew", contract: "binding: on-stage\ncommit_policy: write-manifests\n", entry: config(string(cfg))}}, "",
		providertest.Step{Text: "Done.", InputTokens: 10, OutputTokens: 3})
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	runtime := r.lines[0]["runtime_dir"].(string)
	if b, err := os.ReadFile(filepath.Join(runtime, "tools", "sh", "murmur.yaml")); err != nil || string(b) != good {
		t.Fatalf("tools/sh/murmur.yaml = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(runtime, "tools", "curl")); err == nil {
		t.Fatal("a manifest for a binary outside shell.allow was written")
	}
	var req struct {
		Tools []struct {
			Function struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.reqs[0].Raw, &req); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range req.Tools {
		if tl.Function.Name == "sh" {
			found = tl.Function.Description == "Run one sh line of the release checklist (stage hook)."
		}
	}
	if !found {
		t.Fatalf("the model was not offered the hook's description of sh: %s", r.reqs[0].Raw)
	}
	recs := r.of("hook_manifest")
	if len(recs) != 2 || recs[0]["binary"] != "sh" || recs[0]["path"] == nil || recs[1]["binary"] != "curl" || !strings.Contains(fmt.Sprint(recs[1]["refused"]), "not in capabilities.shell.allow") {
		t.Fatalf("hook_manifest records = %v", recs)
	}
	if log := r.hookLog("stagew"); !strings.Contains(log, `the manifest for "curl" was not written`) {
		t.Errorf("hook log = %s", log)
	}
}

// TestHookReopenTurnCap: a reopened attempt is handed only the turns the
// task has left under inference.max_turns (8 here): the first attempt
// spends 6, so the reopened one stops at 2 with max_turns_reached
// although the model keeps calling tools; it used to get 8 of its own.
func TestHookReopenTurnCap(t *testing.T) {
	call := func(id string) providertest.Step {
		return providertest.Step{Calls: []providertest.Call{{ID: id, Name: "file-go", Input: `{"op":"write","path":"n.txt","content":"x"}`}}, InputTokens: 5, OutputTokens: 2}
	}
	steps := []providertest.Step{call("a1"), call("a2"), call("a3"), call("a4"), call("a5"), {Text: "First answer.", InputTokens: 5, OutputTokens: 2},
		call("b1"), call("b2"), call("b3"), {Text: "Second answer.", InputTokens: 5, OutputTokens: 2}}
	r := runHooks(t, []hookDecl{{name: "reopen", contract: "binding: on-task-end\ncommit_policy: reopen-task\n",
		entry: config(`{"reopen":"again"}`)}}, "", steps...)
	if r.code != 1 && r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if len(r.reqs) != 8 {
		t.Fatalf("%d model calls, want 8 (6 in the first attempt, the 2 left in the reopened one)", len(r.reqs))
	}
	starts, ends := r.of("task_start"), r.of("task_end")
	if len(starts) != 2 || starts[0]["max_turns"] != float64(8) || starts[1]["max_turns"] != float64(2) {
		t.Fatalf("task_start = %v", starts)
	}
	if len(ends) != 2 || ends[1]["exit_status"] != "max_turns_reached" {
		t.Fatalf("task_end = %v", ends)
	}
	if end := r.of("session_end"); len(end) != 1 || end[0]["turns"] != float64(8) {
		t.Errorf("session_end = %v", end)
	}
}

// TestJSHook: examples/hook-gate-js, a hook written in JavaScript and
// built with componentize-js, runs through mur run as the Go hooks do: as
// an on-tool-call policy hook its thrown error denies file-go (nothing is
// written, the model reads the reason), and as an on-task-end hook it
// reads the task through murmur:task-io/read and reopens it with what it
// read.
func TestJSHook(t *testing.T) {
	r := runHooks(t, []hookDecl{
		{name: "jsgate", guest: "hook-gate-js", contract: "binding: on-tool-call\ncommit_policy: deny\n"},
		{name: "jsreopen", guest: "hook-gate-js", contract: "binding: on-task-end\ncommit_policy: reopen-task\n", entry: "    capabilities:\n      task_io:\n        read: true\n"},
	}, "",
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "file-go", Input: `{"op":"write","path":"out.txt","content":"hi"}`}}, InputTokens: 10, OutputTokens: 5},
		providertest.Step{Text: "First answer.", InputTokens: 10, OutputTokens: 3},
		providertest.Step{Text: "Second answer.", InputTokens: 10, OutputTokens: 3},
	)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(r.workdir, "out.txt")); err == nil {
		t.Fatal("the call the JS policy hook denied wrote out.txt")
	}
	if raw := string(r.reqs[1].Raw); !strings.Contains(raw, "denied by the policy hook murmur/jsgate: file-go is not allowed by hook-gate-js") {
		t.Fatalf("the model did not read the JS hook's reason: %s", raw)
	}
	re := r.of("task_reopened")
	if len(re) != 1 || re[0]["feedback"] != `hook-gate-js read "do the work" and the answer "First answer."` {
		t.Fatalf("task_reopened = %v", re)
	}
}

// TestJSHookEveryEvent: a JavaScript hook with no binding is dispatched at
// every event, in the order a Go observer is (TestHookObserverEveryEvent),
// through the one lifecycle export componentize-js builds; no call traps
// or runs past its deadline. (hook-gate-js answers err to file-go's call
// and reopen-task at the task's end: an observer's answers are recorded,
// not committed.)
func TestJSHookEveryEvent(t *testing.T) {
	r := runHooks(t, []hookDecl{{name: "jsobs", guest: "hook-gate-js", entry: "    capabilities:\n      task_io:\n        read: true\n"}}, "", toolSteps...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var handlers []string
	for _, c := range r.of("hook_call") {
		if c["hook"] != "murmur/jsobs" {
			continue
		}
		if k := c["fault"]; k == "fault" || k == "deadline" {
			t.Errorf("hook_call %v: the JS hook trapped or ran past its deadline", c)
		}
		handlers = append(handlers, c["handler"].(string))
	}
	// on-stage runs before session_start opens the trace, so it has no record.
	want := "on-session-start on-task-start on-inference on-tool-call on-inference on-shell on-tool-call on-inference on-task-end on-session-end"
	if got := strings.Join(handlers, " "); got != want {
		t.Fatalf("handlers:\n got %s\nwant %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(r.workdir, "out.txt")); err != nil {
		t.Errorf("an observer's err denied file-go's write: %v", err)
	}
}
