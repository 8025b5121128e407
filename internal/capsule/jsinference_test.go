package capsule_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/guesttest"
	"github.com/murmur/mur/internal/providertest"
)

// TestJSHookRunInference: examples/hook-compact-js, an on-compaction hook
// written in JavaScript, summarises the conversation with run-inference
// through the capsule's own driver — the provider receives its request,
// the trace has one inference line with its origin — and its
// replace-context becomes the conversation the next turn sends. Before
// the host linked murmur:hook/lifecycle's functions (componentize-js
// imports that interface whole with run-inference) it did not
// instantiate and the session did not start.
func TestJSHookRunInference(t *testing.T) {
	// The provider reports 1,500 input tokens for the first turn, over
	// half the 2,800-token input budget: compaction runs after it.
	extra := "  max_tokens: 200\n  compaction:\n    threshold: 0.5\ncontext:\n  max_tokens: 3000\n"
	big := strings.Repeat("the report line that fills the window. ", 20)
	r := runHooks(t, []hookDecl{{name: "jscompact", guest: "hook-compact-js", contract: "binding: on-compaction\ncommit_policy: replace-context\n"}}, extra,
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "file-go", Input: `{"op":"write","path":"out.txt","content":"` + big + `"}`}}, InputTokens: 1500, OutputTokens: 5},
		providertest.Step{Text: "Wrote out.txt; nothing is left.", InputTokens: 30, OutputTokens: 6},
		providertest.Step{Text: "Done.", InputTokens: 10, OutputTokens: 3},
	)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if len(r.reqs) != 3 {
		t.Fatalf("%d provider requests, want 3 (turn, the hook's summary, turn): %s %v", len(r.reqs), r.stderr, r.of("compaction"))
	}
	if raw := string(r.reqs[1].Raw); !strings.Contains(raw, "The conversation to summarise (hook-compact-js)") || !strings.Contains(raw, "do the work") {
		t.Fatalf("the provider's second request is not the JS hook's: %s", raw)
	}
	infs := r.of("inference")
	var mine []map[string]any
	for _, l := range infs {
		if l["origin"] == "hook:murmur/jscompact" {
			mine = append(mine, l)
		}
	}
	if len(mine) != 1 || mine[0]["compaction"] != true {
		t.Fatalf("inference lines = %v", infs)
	}
	if comps := r.of("compaction"); len(comps) != 1 || comps[0]["committed"] != true || comps[0]["hook"] != "murmur/jscompact" {
		t.Fatalf("compaction = %v", comps)
	}
	if raw := string(r.reqs[2].Raw); !strings.Contains(raw, "compacted (hook-compact-js)") || !strings.Contains(raw, "Wrote out.txt; nothing is left.") || strings.Contains(raw, "fills the window") {
		t.Fatalf("the turn after compaction did not continue from the hook's summary: %s", raw)
	}
}

// TestJSToolRunInference: examples/summarize-js, a tool written in
// JavaScript, asks the capsule's own model through run-inference: the
// provider's second request is the tool's (its system prompt and text),
// the trace has one inference line with origin tool:murmur/summarize-js,
// the answer is the tool's result the model reads, and mur run's stdout
// shows the agent's answer but not the tool's summary (a guest's
// run-inference never streams into the task's live text).
func TestJSToolRunInference(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	shareCompileCache(t, home)
	guesttest.File(t, "summarize-js")
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	publish(t, root, "../../examples/summarize-js", "summarize-js")
	prov := providertest.Start(t,
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "summarize-js", Input: `{"text":"Quarterly revenue rose 8 % while costs held flat across every region."}`}}, InputTokens: 20, OutputTokens: 9},
		providertest.Step{Text: "Revenue rose 8 %.", InputTokens: 30, OutputTokens: 6},
		providertest.Step{Text: "The report says revenue rose 8 %.", InputTokens: 40, OutputTokens: 9},
	)
	m := `name: js-tool-inference
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      keyless: true
  - name: murmur/summarize-js
    version: "0.1.0"
    runtime: tool
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
`
	manifestPath := installManifest(t, root, m, prov.URL)
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "Summarise the report."}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	reqs := prov.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d provider requests, want 3", len(reqs))
	}
	if raw := string(reqs[1].Raw); !strings.Contains(raw, "Summarise the user's text in one line.") || !strings.Contains(raw, "Quarterly revenue rose 8 %") {
		t.Fatalf("the provider's second request is not the JS tool's: %s", raw)
	}
	if raw := string(reqs[2].Raw); !strings.Contains(raw, "Revenue rose 8 %.") {
		t.Fatalf("the model did not read the tool's result: %s", raw)
	}
	var infs []map[string]any
	for _, l := range trace(t, home) {
		if l["event"] == "inference" && l["origin"] == "tool:murmur/summarize-js" {
			infs = append(infs, l)
		}
	}
	if len(infs) != 1 {
		t.Fatalf("inference lines with the tool's origin: %v", infs)
	}
	if out := stdout.String(); !strings.Contains(out, "The report says revenue rose 8 %.") || strings.Contains(out, "Revenue rose 8 %.\n") || strings.Count(out, "evenue rose 8 %.") != 1 {
		t.Fatalf("mur run's stdout shows more than the agent's answer:\n%s", out)
	}
}
