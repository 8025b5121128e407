package capsule_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/guesttest"
	"github.com/murmur/mur/internal/providertest"
)

// compactManifest is a capsule whose window is small enough that a long
// task passes it: 3000 tokens less the 200-token output cap is a 2800
// input budget, and compaction fires at half of it.
const compactManifest = `name: compacted
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
%HOOKS%inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_tokens: 200
%EXTRA%context:
  max_tokens: 3000
`

// window is what the provider double accepts, the capsule's
// context.max_tokens: a request larger than this (by the byte/4 rule of
// thumb) is refused as a real provider refuses a prompt past its window.
const window = 3000

// compactionProvider answers the agent's turns from a script of n turns
// (each but the last a file-go call; the last the answer) and every
// hook-compact summary call with a summary, deciding by the request's
// content, over providertest's OpenAI wire. A request past the window is
// a 400 context_length_exceeded.
type compactionProvider struct {
	srv   *providertest.Server
	turns int

	mu        sync.Mutex
	turn      int
	summaries int
	largest   int
	delay     time.Duration
	summary   string
}

func (p *compactionProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	p.mu.Lock()
	if len(raw)/4 > window {
		p.mu.Unlock()
		http.Error(w, `{"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"This model's maximum context length is 3000 tokens."}}`, http.StatusBadRequest)
		return
	}
	p.largest = max(p.largest, len(raw)/4)
	var step providertest.Step
	if bytes.Contains(raw, []byte("The conversation to summarise")) {
		p.summaries++
		text := p.summary
		if text == "" {
			text = fmt.Sprintf("Task: take 200 steps, one file-go write per step. Done so far: steps 1 to %d. Next: step %d.", p.turn, p.turn+1)
		}
		step = providertest.Step{Text: text, NoUsage: true, Delay: p.delay}
	} else {
		p.turn++
		if p.turn >= p.turns {
			step = providertest.Step{Text: fmt.Sprintf("All %d steps are done.", p.turns-1), NoUsage: true}
		} else {
			in := fmt.Sprintf(`{"op":"write","path":"step.txt","content":"step %d of the long task, written to show progress"}`, p.turn)
			step = providertest.Step{Calls: []providertest.Call{{ID: fmt.Sprintf("c%d", p.turn), Name: "file-go", Input: in}}, NoUsage: true}
		}
	}
	p.srv.Push(step)
	p.mu.Unlock()
	p.srv.ServeHTTP(w, r)
}

// compactRun is one mur run of the compaction scenario.
type compactRun struct {
	code   int
	stderr string
	lines  []map[string]any
	prov   *compactionProvider
}

func (r compactRun) of(ev string) []map[string]any {
	var out []map[string]any
	for _, l := range r.lines {
		if l["event"] == ev {
			out = append(out, l)
		}
	}
	return out
}

// runCompaction publishes the driver, file-go and (with hook set)
// murmur/hook-compact, and runs a task of turns turns against the
// compaction provider.
func runCompaction(t *testing.T, hook bool, entry, extra string, turns int, tweak func(*compactionProvider)) compactRun {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	shareCompileCache(t, home)
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	publish(t, root, "../../examples/file-go", "file-go")
	hooks := ""
	if hook {
		publish(t, root, "../../hooks/hook-compact", "hook-compact")
		hooks = "  - name: murmur/hook-compact\n    version: \"0.1.0\"\n    runtime: hook\n" + entry
	}
	p := &compactionProvider{srv: providertest.Start(t), turns: turns}
	if tweak != nil {
		tweak(p)
	}
	hs := httptest.NewServer(p)
	t.Cleanup(hs.Close)
	m := strings.NewReplacer("%HOOKS%", hooks, "%EXTRA%", extra).Replace(compactManifest)
	manifestPath := installManifest(t, root, m, hs.URL)
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "Take 200 steps: at each step write the step's number to step.txt with file-go."}, nil, &stdout, &stderr)
	r := compactRun{code: code, stderr: stderr.String(), prov: p}
	if code != 2 {
		r.lines = trace(t, home)
	}
	return r
}

// TestCompaction200Turns: a 200-turn scripted task whose conversation
// would pass the window runs to its end under murmur/hook-compact: each
// time the conversation reaches the threshold the hook summarises it with
// run-inference (through the capsule's own driver, recorded with its
// origin) and its replace-context becomes the conversation, so no request
// ever passes the window. Without the hook the same task dies at the
// window.
func TestCompaction200Turns(t *testing.T) {
	guesttest.File(t, "hook-compact")
	const turns = 200
	extra := "  compaction:\n    threshold: 0.5\n    max_tokens: 150\n    dump_summaries: true\n"
	r := runCompaction(t, true, "", extra, turns, nil)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	end := r.of("task_end")
	if len(end) != 1 || end[0]["exit_status"] != "ok" {
		t.Fatalf("task_end = %v", end)
	}
	comps := r.of("compaction")
	if len(comps) < 3 {
		t.Fatalf("%d compactions over %d turns; want several", len(comps), turns)
	}
	budget := float64(window - 200)
	for _, c := range comps {
		if c["committed"] != true || c["hook"] != "murmur/hook-compact" || c["messages_after"] != float64(1) {
			t.Fatalf("compaction = %v", c)
		}
		if st := c["session_tokens"].(float64); st < 0.5*budget || c["tokens_after"].(float64) >= st {
			t.Fatalf("compaction fired at %v tokens (threshold %v) and left %v", st, 0.5*budget, c["tokens_after"])
		}
	}
	var agentTurns, hookCalls int
	for _, l := range r.of("inference") {
		switch l["origin"] {
		case nil:
			agentTurns++
		case "hook:murmur/hook-compact":
			hookCalls++
			// The summary call: the compaction model's cap, the
			// compaction flag, and a turn of the task.
			if l["max_tokens"] != float64(150) || l["compaction"] != true || l["model"] != "gpt-4o-mini" || l["turn"] == nil {
				t.Fatalf("hook inference = %v", l)
			}
		default:
			t.Fatalf("inference origin %v", l["origin"])
		}
	}
	if agentTurns != turns || hookCalls != len(comps) || r.prov.summaries != len(comps) {
		t.Fatalf("agent turns %d, hook calls %d, summaries served %d, compactions %d", agentTurns, hookCalls, r.prov.summaries, len(comps))
	}
	t.Logf("%d agent turns, %d compactions, largest request %d tokens", agentTurns, len(comps), r.prov.largest)
	// A hook's counted run-inference is one of the task's turns.
	if got := end[0]["turns"].(float64); int(got) != turns+len(comps) {
		t.Fatalf("task_end.turns = %v, want %d", got, turns+len(comps))
	}
	// After each compaction the next request is a full resend of the
	// summary: one user message (plus the system prompt, if any).
	if r.prov.largest > window {
		t.Fatalf("largest request %d tokens", r.prov.largest)
	}
	b, err := os.ReadFile(filepath.Join(r.lines[0]["records_dir"].(string), "out", "compaction-summaries.jsonl"))
	if err != nil || strings.Count(string(b), "\n") != len(comps) || !strings.Contains(string(b), "Done so far") {
		t.Fatalf("compaction-summaries.jsonl: %v\n%s", err, b)
	}

	// The same task without a compaction hook passes the window.
	bare := runCompaction(t, false, "", extra, turns, nil)
	if bare.code == 0 || !strings.Contains(bare.stderr, "context_length_exceeded") && !strings.Contains(bare.stderr, "maximum context length") {
		t.Fatalf("without the hook: exit %d: %s", bare.code, bare.stderr)
	}
}

// TestCompactionHookFaultIsFatal: a compaction hook whose run-inference
// outlasts its per-call deadline is interrupted (the time spent waiting on
// its own run-inference counts against the deadline), and a compaction
// hook's failure ends the task failed, with the failure in the trace.
func TestCompactionHookFaultIsFatal(t *testing.T) {
	guesttest.File(t, "hook-compact")
	entry := "    capabilities:\n      limits:\n        deadline_seconds: 1\n"
	extra := "  compaction:\n    threshold: 0.5\n"
	r := runCompaction(t, true, entry, extra, 200, func(p *compactionProvider) { p.delay = 3 * time.Second })
	if r.code == 0 {
		t.Fatalf("exit 0: %s", r.stderr)
	}
	fail := r.of("task_failed")
	if len(fail) != 1 || fail[0]["cause"] != "compaction" || !strings.Contains(fail[0]["reason"].(string), "deadline") {
		t.Fatalf("task_failed = %v", fail)
	}
	comps := r.of("compaction")
	if len(comps) != 1 || comps[0]["error"] == nil {
		t.Fatalf("compaction = %v", comps)
	}
	calls := r.of("hook_call")
	if len(calls) != 1 || calls[0]["fault"] != "deadline" || calls[0]["duration_ms"].(float64) >= 3000 {
		t.Fatalf("hook_call = %v", calls)
	}
}

// TestCompactionRefusedBySpendCeiling: the compaction hook's run-inference
// is admitted against inference.max_session_tokens like a turn; refused,
// the hook's error ends the task spend_ceiling_reached, not failed.
func TestCompactionRefusedBySpendCeiling(t *testing.T) {
	guesttest.File(t, "hook-compact")
	// The 34 agent turns before compaction is due are charged about
	// 28,000 tokens (TestCompaction200Turns logs the figure), each
	// reserving its input and its 200-token cap; the summary call
	// reserves its input (about 1,500) and its 2,700-token cap, which the
	// ceiling no longer holds.
	extra := "  max_session_tokens: 30700\n  compaction:\n    threshold: 0.5\n    max_tokens: 2700\n"
	r := runCompaction(t, true, "", extra, 200, nil)
	end := r.of("task_end")
	if len(end) != 1 || end[0]["exit_status"] != "spend_ceiling_reached" {
		t.Fatalf("task_end = %v\n%s", end, r.stderr)
	}
	refused := r.of("spend_ceiling_reached")
	if len(refused) == 0 || r.prov.summaries != 0 {
		t.Fatalf("refusals %v, summaries served %d", refused, r.prov.summaries)
	}
	var hookLine map[string]any
	for _, l := range r.of("compaction") {
		hookLine = l
	}
	if hookLine == nil || hookLine["error"] == nil {
		t.Fatalf("compaction = %v", hookLine)
	}
}
