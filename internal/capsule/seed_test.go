package capsule_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/providertest"
)

// seedHook is hook-probe-go as an on-task-start seed-context hook that
// answers with msgs and logs its on-task-start to seed.jsonl.
func seedHook(t *testing.T, msgs ...[2]string) hookDecl {
	t.Helper()
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var seed []msg
	for _, m := range msgs {
		seed = append(seed, msg{m[0], m[1]})
	}
	b, err := json.Marshal(map[string]any{"log": "seed.jsonl", "seed": seed})
	if err != nil {
		t.Fatal(err)
	}
	return hookDecl{name: "seed", contract: "binding: on-task-start\ncommit_policy: seed-context\n",
		entry: config(string(b)) + "    capabilities:\n      filesystem:\n        records: true\n"}
}

// small is a context of 2,000 tokens with a 1,000-token output cap: an
// input budget of 1,000, so the default seed budget is 100 tokens.
const small = "  max_tokens: 1000\ncontext:\n  max_tokens: 2000\n"

// words is n words of text (about n tokens).
func words(n int) string { return strings.TrimSpace(strings.Repeat("note ", n)) }

// sent is the role and text content of each message the request carried.
func sent(t *testing.T, r providertest.Request) [][2]string {
	t.Helper()
	var out [][2]string
	msgs, _ := r.Body["messages"].([]any)
	for _, x := range msgs {
		m := x.(map[string]any)
		c, _ := m["content"].(string)
		out = append(out, [2]string{m["role"].(string), c})
	}
	return out
}

// afterSystem drops a leading system message.
func afterSystem(msgs [][2]string) [][2]string {
	if len(msgs) > 0 && msgs[0][0] == "system" {
		return msgs[1:]
	}
	return msgs
}

func onlySeed(t *testing.T, r hookRun) map[string]any {
	t.Helper()
	recs := r.of("context_seed")
	if len(recs) != 1 {
		t.Fatalf("context_seed records: %v", recs)
	}
	return recs[0]
}

// TestHookSeedContext: an on-task-start hook whose commit_policy is
// seed-context seeds the task: its messages are sent after the context's
// history and before the task's text, on every turn of the task; the hook
// was told the budget (context.seed_budget × the input budget, rounded
// down) and the window; the context_seed record says accepted; the
// durable conversation record does not keep the seed.
func TestHookSeedContext(t *testing.T) {
	seed := [][2]string{{"user", "Project notes: the build runs with make."}, {"assistant", "Understood, I will use make."}}
	r := runHooks(t, []hookDecl{seedHook(t, seed...)}, small, toolSteps...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := append(append([][2]string{}, seed...), [2]string{"user", "do the work"})
	for i, q := range r.reqs {
		got := afterSystem(sent(t, q))
		if len(got) < len(want) {
			t.Fatalf("request %d carried %v", i, got)
		}
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("request %d message %d = %v, want %v (all: %v)", i, j, got[j], want[j], got)
			}
		}
	}
	rec := onlySeed(t, r)
	if rec["status"] != "accepted" || rec["budget_tokens"] != float64(100) || rec["context_window"] != float64(2000) ||
		rec["messages"] != float64(2) || rec["seeded"] != float64(2) || rec["hook"] != "murmur/seed" {
		t.Errorf("context_seed = %v", rec)
	}
	if st := r.of("task_start")[0]; st["seed_messages"] != float64(2) {
		t.Errorf("task_start = %v", st)
	}
	var env []any
	for _, e := range events(t, filepath.Join(r.records, "hooks", "seed.jsonl")) {
		if e["event"] == "on-task-start" {
			env, _ = e["seed_env"].([]any)
		}
	}
	if len(env) != 2 || env[0] != "MURMUR_SEED_BUDGET_TOKENS=100" || env[1] != "MURMUR_CONTEXT_WINDOW=2000" {
		t.Errorf("the hook's seed environment = %v", env)
	}
}

// TestHookSeedOverflowMargin: a seed over context.seed_budget but within
// context.seed_overflow_margin has its oldest messages dropped until it
// fits (truncated); one past the margin, with no compaction hook, is
// rejected over_budget and the task runs unseeded.
func TestHookSeedOverflowMargin(t *testing.T) {
	// Budget 100, margin 0.5: up to 150 tokens is cut to fit.
	extra := small + "  seed_overflow_margin: 0.5\n"
	old, recent := words(30), words(75)
	r := runHooks(t, []hookDecl{seedHook(t, [2]string{"user", old}, [2]string{"user", recent})}, extra, providertest.Step{Text: "Done."})
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := afterSystem(sent(t, r.reqs[0]))
	if len(got) != 2 || got[0] != [2]string{"user", recent} || got[1] != [2]string{"user", "do the work"} {
		t.Fatalf("request carried %v", got)
	}
	rec := onlySeed(t, r)
	if rec["status"] != "truncated" || rec["dropped"] != float64(1) || rec["seeded"] != float64(1) || rec["overflow_limit"] != float64(150) {
		t.Errorf("context_seed = %v", rec)
	}

	over := runHooks(t, []hookDecl{seedHook(t, [2]string{"user", words(120)}, [2]string{"user", words(60)})}, extra, providertest.Step{Text: "Done."})
	if over.code != 0 {
		t.Fatalf("exit %d: %s", over.code, over.stderr)
	}
	if got := afterSystem(sent(t, over.reqs[0])); len(got) != 1 || got[0] != [2]string{"user", "do the work"} {
		t.Fatalf("a rejected seed was sent: %v", got)
	}
	rec = onlySeed(t, over)
	if rec["status"] != "rejected" || rec["reason"] != "over_budget" {
		t.Errorf("context_seed = %v", rec)
	}
	if !strings.Contains(over.hookLog("seed"), "seed-context rejected: over_budget") {
		t.Errorf("hook log: %q", over.hookLog("seed"))
	}
}

// TestHookSeedSummarized: a seed past the margin is handed to the
// on-compaction hook (murmur/hook-compact), whose run-inference summary
// — sent through the capsule's driver, recorded with its origin — is the
// seed the task gets.
func TestHookSeedSummarized(t *testing.T) {
	compact := hookDecl{name: "hook-compact", guest: "hook-compact", contract: "binding: on-compaction\ncommit_policy: replace-context\n"}
	r := runHooks(t, []hookDecl{seedHook(t, [2]string{"user", words(150)}, [2]string{"user", words(150)}), compact}, small,
		providertest.Step{Text: "Summary: the notes say note."}, providertest.Step{Text: "Done."})
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if len(r.reqs) != 2 {
		t.Fatalf("%d requests", len(r.reqs))
	}
	got := afterSystem(sent(t, r.reqs[1]))
	if len(got) != 2 || !strings.Contains(got[0][1], "Summary: the notes say note.") || got[1] != [2]string{"user", "do the work"} {
		t.Fatalf("the task's request carried %v", got)
	}
	rec := onlySeed(t, r)
	if rec["status"] != "summarized" || rec["seeded"] != float64(1) {
		t.Errorf("context_seed = %v", rec)
	}
	var origin bool
	for _, l := range r.of("inference") {
		if l["origin"] == "hook:murmur/hook-compact" {
			origin = true
		}
	}
	cp := r.of("compaction")
	if !origin || len(cp) != 1 || cp[0]["seed"] != true || cp[0]["committed"] != true {
		t.Errorf("summary call recorded: %v; compaction %v", origin, cp)
	}
}

// TestHookSeedNoBudget: with no context window (a model the driver's
// table does not list, and no context.max_tokens) there is no seed
// budget: the seed is rejected no_budget, the task runs unseeded, and the
// hook's environment has no budget.
func TestHookSeedNoBudget(t *testing.T) {
	r := runHooksModel(t, "unlisted-model", []hookDecl{seedHook(t, [2]string{"user", "notes"})}, "  max_tokens: 1000\n", providertest.Step{Text: "Done."})
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := afterSystem(sent(t, r.reqs[0])); len(got) != 1 || got[0] != [2]string{"user", "do the work"} {
		t.Fatalf("a rejected seed was sent: %v", got)
	}
	if rec := onlySeed(t, r); rec["status"] != "rejected" || rec["reason"] != "no_budget" {
		t.Errorf("context_seed = %v", rec)
	}
	for _, e := range events(t, filepath.Join(r.records, "hooks", "seed.jsonl")) {
		if e["event"] == "on-task-start" && e["seed_env"] != nil {
			t.Errorf("the hook was told a budget: %v", e)
		}
	}
}
