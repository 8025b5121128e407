package component

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/guesttest"
	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
)

// The guests under examples/ are built from source by `make guests` into
// build/guests. These tests run them under the host with typed calls. The
// default `go test` skips them when the build is absent;
// `make test-component-guests` (run by CI) builds first and sets
// MUR_REQUIRE_GUESTS=1 so a missing guest fails instead.
func guest(t *testing.T, r *Runtime, name string) *cm.Component {
	t.Helper()
	b := guesttest.Read(t, name)
	c, err := r.Compile(b)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return c
}

// guestRuntime is a runtime whose compile cache outlives the test run:
// compiling a Go or JS guest takes seconds, loading it from the cache
// milliseconds, and the key covers the component's digest.
func guestRuntime(t *testing.T) *Runtime {
	t.Helper()
	r, err := New(cm.Config{CacheDir: filepath.Join(os.TempDir(), "mur-test-compile-cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

type replyInput struct{ prompts []string }

func (r *replyInput) RequestInput(_ context.Context, prompt string) (string, error) {
	r.prompts = append(r.prompts, prompt)
	return "target main", nil
}

func TestGuestEchoGoAndJS(t *testing.T) {
	r := guestRuntime(t)
	for _, name := range []string{"echo-go", "echo-js"} {
		t.Run(name, func(t *testing.T) {
			c := guest(t, r, name)
			ctx := context.Background()
			_, tool := toolOf(t, r, c, Options{Name: "examples/" + name, Limits: cm.Limits{Deadline: 30 * time.Second}})
			res, err := tool.Run(ctx, ToolInput{Data: str(`{"text":"ünïcode ✓"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != StatusPassed || res.Data == nil || !strings.Contains(*res.Data, "ünïcode ✓") {
				t.Fatalf("result = %+v (data %v)", res, res.Data)
			}
			res, err = tool.Run(ctx, ToolInput{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status == StatusPassed {
				t.Fatalf("echo without data passed: %+v", res)
			}
		})
	}
}

func TestGuestFileToolIsConfinedAndDeclaresEffects(t *testing.T) {
	r := guestRuntime(t)
	c := guest(t, r, "file-go")
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := os.MkdirAll(filepath.Join(work, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "secret.txt"), []byte("sibling secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	inst, err := r.Instantiate(ctx, c, Options{Name: "examples/file-go",
		Policy: wasi.Policy{Workdir: work, ReadOnly: []string{"docs"}}, Limits: cm.Limits{Deadline: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	tool, err := inst.Tool()
	if err != nil {
		t.Fatal(err)
	}
	call := func(in string) ToolResult {
		t.Helper()
		res, err := tool.Run(ctx, ToolInput{Data: str(in)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := call(`{"op":"write","path":"notes/a.txt","content":"hello"}`)
	if res.Status != StatusPassed {
		t.Fatalf("write: %+v %v", res, res.Summary)
	}
	if e, _ := res.Meta("state_effect"); e != "mutate" {
		t.Fatalf("write state_effect = %q", e)
	}
	if b, err := os.ReadFile(filepath.Join(work, "notes/a.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("file on host = %q, %v", b, err)
	}
	res = call(`{"op":"read","path":"notes/a.txt"}`)
	if res.Data == nil || *res.Data != "hello" {
		t.Fatalf("read = %+v", res)
	}
	if e, _ := res.Meta("state_effect"); e != "read" {
		t.Fatalf("read state_effect = %q", e)
	}
	if id, _ := res.Meta("resource_id"); id != "file:notes/a.txt" {
		t.Fatalf("resource_id = %q", id)
	}
	// The tool cleans "..", so the sibling is unreachable through it; the
	// read-only subtree refuses a write through WASI itself.
	if res := call(`{"op":"read","path":"../secret.txt"}`); res.Data != nil && strings.Contains(*res.Data, "sibling secret") {
		t.Fatal("file tool read a sibling of its scope")
	}
	if res := call(`{"op":"write","path":"docs/x.txt","content":"no"}`); res.Status == StatusPassed {
		t.Fatalf("write under read_only passed: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(work, "docs/x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read-only subtree was written: %v", err)
	}
}

func TestGuestRequestInput(t *testing.T) {
	r := guestRuntime(t)
	c := guest(t, r, "ask-go")
	ctx := context.Background()

	// Outside an A2A task the import is unavailable and the call traps.
	inst, err := r.Instantiate(ctx, c, Options{Name: "examples/ask-go", Limits: cm.Limits{Deadline: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := inst.Tool()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Run(ctx, ToolInput{Data: str("Which branch?")}); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Fatalf("request-input outside a task: err = %v", err)
	}
	inst.Close()

	in := &replyInput{}
	chunks := make(chan string, 8)
	inst, err = r.Instantiate(ctx, c, Options{Name: "examples/ask-go", Host: &Host{Input: in, Text: TextChan{Ctx: ctx, C: chunks}},
		Limits: cm.Limits{Deadline: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	tool, _ = inst.Tool()
	res, err := tool.Run(ctx, ToolInput{Data: str("Which branch?")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Data == nil || *res.Data != "target main" || len(in.prompts) != 1 || in.prompts[0] != "Which branch?" {
		t.Fatalf("result %+v, prompts %q", res, in.prompts)
	}
	if got := <-chunks; !strings.Contains(got, "asking: Which branch?") {
		t.Fatalf("chunk = %q", got)
	}
}

func TestGuestHookEveryEvent(t *testing.T) {
	r := guestRuntime(t)
	c := guest(t, r, "hook-log-go")
	ctx := context.Background()
	var stderr bytes.Buffer
	inst, err := r.Instantiate(ctx, c, Options{Name: "examples/hook-log-go", Policy: wasi.Policy{Stderr: &stderr},
		Limits: cm.Limits{Deadline: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	h, err := inst.Hook()
	if err != nil {
		t.Fatal(err)
	}
	events := []struct {
		name string
		ev   any
	}{
		{OnStage, StageEvent{ShellAllow: []string{"bash"}}},
		{OnSessionStart, SessionContext{CapsuleName: "c", CapsuleVersion: "1", SessionID: "ses_1", Model: "m", Capabilities: []string{"net"}}},
		{OnTaskStart, TaskStartEvent{TaskID: "t1", ContextID: "c1", Source: "cli", InputBytes: 3}},
		{OnInference, InferenceEvent{Turn: 1, InputTokens: 10, OutputTokens: 5, Decision: "tool", ToolName: str("echo")}},
		{OnToolCall, ToolEvent{Turn: 1, ToolName: "echo", Status: "passed"}},
		{OnShell, ShellEvent{Turn: 1, Binary: "/bin/sh", Command: "true", ExitCode: 0}},
		{OnCompaction, CompactionEvent{Messages: []Message{{Role: "user", Content: "hi"}}, SessionTokens: 9, Threshold: 0.98}},
		{OnTaskEnd, TaskEndEvent{TaskID: "t1", ExitStatus: "ok"}},
		{OnSessionEnd, SessionEndEvent{TotalTurns: 1, ExitStatus: "ok"}},
	}
	for _, e := range events {
		out, err := h.Call(ctx, e.name, e.ev)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if out.Case != OutNone {
			t.Fatalf("%s returned %s, want none", e.name, out.Case)
		}
	}
	lines := strings.Count(stderr.String(), "\n")
	if lines < len(events) {
		t.Fatalf("hook logged %d lines for %d events:\n%s", lines, len(events), stderr.String())
	}
	for _, e := range events {
		if !strings.Contains(stderr.String(), e.name) {
			t.Errorf("log lacks %s", e.name)
		}
	}
}
