package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/capsule/capsuletest"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/door"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/trace"
)

// writeTool writes a file in the work folder: a mutating tool with a
// required schema and a declared resource_id.
type writeTool struct{ dir *string }

func (w writeTool) Def() agent.ToolDef {
	return agent.ToolDef{Name: "write", Description: "Write a file.\nMore.", Kind: agent.KindTool,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)}
}

func (w writeTool) Call(_ context.Context, in json.RawMessage) (agent.Result, error) {
	var a struct{ Path, Content string }
	json.Unmarshal(in, &a)
	if err := os.WriteFile(filepath.Join(*w.dir, a.Path), []byte(a.Content), 0o600); err != nil {
		return agent.Result{Status: agent.StatusFailed, Summary: err.Error()}, nil
	}
	return agent.Result{Status: agent.StatusPassed, Data: "wrote " + a.Path,
		Metadata: [][2]string{{agent.MetaStateEffect, "mutate"}, {agent.MetaResourceID, "file:" + a.Path}}}, nil
}

// run is one launch against a scripted provider.
type run struct {
	t       *testing.T
	opts    capsule.Parts
	srv     *providertest.Server
	workdir string
	dirs    session.Dirs
	stderr  bytes.Buffer
	code    int
	err     error
	waits   []time.Duration
	mu      sync.Mutex
}

func newRun(t *testing.T, wire string, steps ...providertest.Step) *run {
	t.Helper()
	r := &run{t: t, srv: providertest.Start(t, steps...)}
	home := t.TempDir()
	c, inst := capsuletest.Capsule(t, capsuletest.Spec{Driver: "murmur/driver-" + wire, Model: "double-1", OutputCap: 1000, Window: 100000})
	r.opts = capsule.Parts{
		Capsule: c, Installed: inst,
		ManifestDir: t.TempDir(), MurmurHome: home,
		LaunchTask: "write hello.txt",
		Driver:     &providertest.Driver{Wire: wire, Endpoint: r.srv.URL, APIKey: "sk-test"},
		Tools:      []agent.Tool{writeTool{dir: &r.workdir}, agent.NewSkill("style", "House style.", "# Style\nBe brief.")},
		Sleep: func(ctx context.Context, d time.Duration) error {
			r.mu.Lock()
			r.waits = append(r.waits, d)
			r.mu.Unlock()
			return ctx.Err()
		},
	}
	return r
}

func (r *run) launch() *run {
	r.t.Helper()
	r.code, r.err = r.launchCtx(context.Background())
	if r.err != nil {
		r.t.Fatalf("launch: %v", r.err)
	}
	return r
}

// launchCtx runs the launch task as mur run does: a refusal is printed and
// exits 2 with no session; otherwise the session closes with the task's
// outcome and its exit status is returned.
func (r *run) launchCtx(ctx context.Context) (int, error) {
	r.opts.Stderr = &r.stderr
	s, err := capsule.OpenParts(ctx, r.opts)
	if err != nil {
		var refused diag.ListError
		if errors.As(err, &refused) {
			for _, d := range refused {
				fmt.Fprintln(&r.stderr, d.String())
			}
			return capsule.ExitRefused, nil
		}
		return capsule.ExitRefused, err
	}
	r.dirs = s.Dirs()
	r.workdir = r.dirs.Workdir
	out := s.RunLaunchTask(ctx, nil)
	return capsule.ExitStatus(out), s.Close(out)
}

func (r *run) lines(typ string) []trace.Line {
	r.t.Helper()
	all, err := trace.ReadFile(r.dirs.Trace())
	if err != nil {
		r.t.Fatal(err)
	}
	if typ == "" {
		return all
	}
	return trace.Filter(all, typ)
}

func (r *run) result() string {
	b, err := os.ReadFile(r.dirs.Result())
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b)
}

func (r *run) wantCode(code int) {
	r.t.Helper()
	if r.code != code {
		r.t.Fatalf("exit code %d, want %d; stderr:\n%s", r.code, code, r.stderr.String())
	}
}

func (r *run) wantStderr(subs ...string) {
	r.t.Helper()
	for _, s := range subs {
		if !strings.Contains(r.stderr.String(), s) {
			r.t.Fatalf("stderr lacks %q:\n%s", s, r.stderr.String())
		}
	}
}

func writeCall(id, path, content string) providertest.Call {
	in, _ := json.Marshal(map[string]string{"path": path, "content": content})
	return providertest.Call{ID: id, Name: "write", Input: string(in)}
}

// requestText flattens every string in a provider request body.
func requestText(req providertest.Request) string { return string(req.Raw) }

func TestToolLoopBothWires(t *testing.T) {
	for _, wire := range []string{providertest.Anthropic, providertest.OpenAI} {
		t.Run(wire, func(t *testing.T) {
			r := newRun(t, wire,
				providertest.Step{Text: "Writing.", Calls: []providertest.Call{writeCall("c1", "hello.txt", "hi")}, InputTokens: 50, OutputTokens: 10},
				providertest.Step{Text: "Done: hello.txt holds hi.", InputTokens: 80, OutputTokens: 8},
			).launch()
			r.wantCode(0)
			r.wantStderr("status: ok", "2 turns")
			if b, _ := os.ReadFile(filepath.Join(r.workdir, "hello.txt")); string(b) != "hi" {
				t.Fatalf("tool did not run: %q", b)
			}
			if got := r.result(); got != "Done: hello.txt holds hi." {
				t.Fatalf("result.txt = %q", got)
			}
			var order []string
			for _, l := range r.lines("") {
				order = append(order, l.Event)
			}
			want := "session_start task_start inference tool_call inference task_end session_end"
			if strings.Join(order, " ") != want {
				t.Fatalf("events %v", order)
			}
			tc := r.lines("tool_call")[0]
			if tc.String("status") != "passed" || tc.String("state_effect") != "mutate" || tc.String("resource_id") != "file:hello.txt" {
				t.Fatalf("tool_call %v", tc.Fields)
			}
			inf := r.lines("inference")[1]
			if inf.Int("input_tokens_actual") != 80 || inf.Int("charged") != 88 || inf.String("charge_basis") != "provider" || inf.Int("input_budget") != 99000 {
				t.Fatalf("inference %v", inf.Fields)
			}
			reqs := r.srv.Requests()
			if len(reqs) != 2 || !strings.Contains(requestText(reqs[1]), "wrote hello.txt") {
				t.Fatalf("second request lacks the tool result: %s", reqs[1].Raw)
			}
			// The output cap goes in the wire's own field: OpenAI's
			// max_completion_tokens is the driver's default there.
			capField := "max_tokens"
			if wire == providertest.OpenAI {
				capField = "max_completion_tokens"
			}
			if v, _ := reqs[0].Body[capField].(float64); v != 1000 {
				t.Fatalf("%s sent %v", capField, reqs[0].Body[capField])
			}
			end := r.lines("session_end")[0]
			if end.String("exit_status") != "ok" || end.Int("turns") != 2 {
				t.Fatalf("session_end %v", end.Fields)
			}
			md, err := os.ReadFile(filepath.Join(r.dirs.Runtime(), "MURMUR.md"))
			if err != nil || !strings.Contains(string(md), "## Installed Skills\n\n- style: House style.") || !strings.Contains(string(md), "- write: Write a file.") {
				t.Fatalf("MURMUR.md: %s %v", md, err)
			}
		})
	}
}

func TestSkillCallReturnsSkillMD(t *testing.T) {
	r := newRun(t, providertest.Anthropic,
		providertest.Step{Calls: []providertest.Call{{ID: "s1", Name: "style"}}},
		providertest.Step{Text: "ok"},
	).launch()
	r.wantCode(0)
	if !strings.Contains(requestText(r.srv.Requests()[1]), "# Style\\nBe brief.") {
		t.Fatalf("skill.md not returned: %s", r.srv.Requests()[1].Raw)
	}
}

func TestRequiredFieldRefusal(t *testing.T) {
	r := newRun(t, providertest.Anthropic,
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "write", Input: `{"path":"a.txt"}`}}},
		providertest.Step{Calls: []providertest.Call{{ID: "c2", Name: "write", Input: `[]`}}},
		providertest.Step{Text: "gave up"},
	).launch()
	r.wantCode(0)
	if _, err := os.Stat(filepath.Join(r.workdir, "a.txt")); err == nil {
		t.Fatal("a refused call ran")
	}
	var body struct {
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(r.srv.Requests()[1].Raw, &body)
	got := body.Messages[len(body.Messages)-1].Content[0]
	want := "write: missing required field \"content\"\n\nThis call did not run. write's input_schema requires: \"path\", \"content\". Call it again with every one of them present. Only the presence of required fields is checked before a call runs — not their types, allowed values or nested contents."
	if got["content"] != want || got["is_error"] != true {
		t.Fatalf("model read %q", got["content"])
	}
	if !strings.Contains(requestText(r.srv.Requests()[2]), `missing required fields \"path\", \"content\"`) {
		t.Fatal("a non-object input misses every field")
	}
	ref := r.lines("tool_input_refused")
	calls := r.lines("tool_call")
	if len(ref) != 2 || len(calls) != 2 || calls[0].String("status") != "error" {
		t.Fatalf("refused %v calls %v", ref, calls)
	}
}

func TestUnknownToolIsAFailedResult(t *testing.T) {
	r := newRun(t, providertest.OpenAI,
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "rm_rf"}}},
		providertest.Step{Text: "ok"},
	).launch()
	r.wantCode(0)
	if !strings.Contains(requestText(r.srv.Requests()[1]), "rm_rf: no such tool") {
		t.Fatal("model not told the tool does not exist")
	}
}

// Other producers record into the session's one stream: what the door
// records is in trace.jsonl, before session_end.
func TestOtherProducersRecordIntoTheStream(t *testing.T) {
	r := newRun(t, providertest.Anthropic, providertest.Step{Text: "ok"})
	r.opts.Stderr = &r.stderr
	s, err := capsule.OpenParts(context.Background(), r.opts)
	if err != nil {
		t.Fatal(err)
	}
	r.dirs = s.Dirs()
	out := s.RunLaunchTask(context.Background(), nil)
	s.DoorBackend().Record(door.RecordTaskRejected, door.Task{ID: "tsk_queued"})
	if err := s.Close(out); err != nil {
		t.Fatal(err)
	}
	all := r.lines("")
	if len(all) < 2 || all[len(all)-2].Event != "task_rejected" || all[len(all)-1].Event != "session_end" {
		var names []string
		for _, l := range all {
			names = append(names, l.Event)
		}
		t.Fatalf("events %v", names)
	}
}

// One session object runs several tasks (as the A2A door will); session_end
// sums them and takes its status from the outcome it is closed with.
func TestSessionRunsSeveralTasks(t *testing.T) {
	r := newRun(t, providertest.Anthropic,
		providertest.Step{Text: "one", InputTokens: 10, OutputTokens: 2},
		providertest.Step{Text: "two", InputTokens: 20, OutputTokens: 3})
	r.opts.LaunchTask = ""
	r.opts.Stderr = &r.stderr
	s, err := capsule.OpenParts(context.Background(), r.opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	r.dirs = s.Dirs()
	if _, source, _ := s.LaunchTask(); source != session.TaskAbsent {
		t.Fatalf("task source %q", source)
	}
	o1 := s.RunTask(context.Background(), capsule.Task{ID: "t1", ContextID: "ctx-1", Text: "first"})
	o2 := s.RunTask(context.Background(), capsule.Task{ID: "t2", ContextID: "ctx-2", Text: "second"})
	if o1.Answer != "one" || o2.Answer != "two" {
		t.Fatalf("%+v %+v", o1, o2)
	}
	if err := s.Close(o2); err != nil || capsule.ExitStatus(o2) != 0 {
		t.Fatalf("close %d %v", capsule.ExitStatus(o2), err)
	}
	end := r.lines("session_end")[0]
	if end.Int("turns") != 2 || end.Int("input_tokens") != 30 || end.Int("output_tokens") != 5 {
		t.Fatalf("session_end %v", end.Fields)
	}
	if n := len(r.lines("task_end")); n != 2 {
		t.Fatalf("%d task_end lines", n)
	}
	r.wantStderr("2 turns, 35 tokens")
}

func TestRetentionAtLaunch(t *testing.T) {
	first := newRun(t, providertest.Anthropic, providertest.Step{Text: "one"}).launch()
	second := newRun(t, providertest.Anthropic, providertest.Step{Text: "two"})
	second.opts.ManifestDir, second.opts.MurmurHome = first.opts.ManifestDir, first.opts.MurmurHome
	second.opts.Capsule.Trace.Retain = &manifest.TraceRetain{MaxSessions: ptr[int64](1)}
	second.launch()
	second.wantCode(0)
	if _, err := os.Stat(first.dirs.Records); err == nil {
		t.Fatal("the older session survived max_sessions: 1")
	}
	if _, err := os.Stat(first.dirs.Workdir); err == nil {
		t.Fatal("its runtime-created work folder survived")
	}
	r := second.lines("retention")
	if len(r) != 1 || r[0].String("session_id") != first.dirs.ID || r[0].String("reason") != "max_sessions" {
		t.Fatalf("retention lines %v", r)
	}
}

// ptr is v's address, for the manifest's optional fields.
func ptr[T any](v T) *T { return &v }
