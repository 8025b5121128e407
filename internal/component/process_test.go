package component

import (
	"context"
	"errors"
	"testing"

	"github.com/murmur/mur/internal/wasi"
)

func init() {
	for k, v := range map[string]any{
		"murmur:driver/process.interrupt-mode": InterruptMode(""),
		"murmur:driver/process.description":    ProcessDescription{},
		"murmur:driver/process.tool-server":    ToolServer{},
		"murmur:driver/process.launch-request": LaunchRequest{},
		"murmur:driver/process.launch-plan":    LaunchPlan{},
		"murmur:driver/process.tool-call":      HarnessToolCall{},
		"murmur:driver/process.usage":          HarnessUsage{},
	} {
		witShapes[k] = v
	}
}

// TestGuestProcessDriver drives the process-driver skeleton (examples/)
// through every export: describe, parse-version, launch and parse-line
// with each harness-event case.
func TestGuestProcessDriver(t *testing.T) {
	r := guestRuntime(t)
	c := guest(t, r, "process-driver-skeleton-go")
	if !ExportsProcess(c) {
		t.Fatal("ExportsProcess = false for the process driver skeleton")
	}
	ctx := context.Background()
	inst, err := r.Instantiate(ctx, c, Options{Name: "skeleton", Policy: wasi.Policy{}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	d, err := inst.ProcessDriver()
	if err != nil {
		t.Fatal(err)
	}
	desc, err := d.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Executable != "harness" || desc.Interrupt != InterruptSignalInt || !desc.ReportsUsage ||
		len(desc.RequiredEnv) != 1 || desc.RequiredEnv[0] != "HOME" || len(desc.TestedVersions) != 1 {
		t.Fatalf("describe = %+v", desc)
	}
	if v, ok, err := d.ParseVersion(ctx, "harness 1.2.3 (build x)\n"); err != nil || !ok || v != "1.2.3" {
		t.Fatalf("parse-version = %q %v %v", v, ok, err)
	}
	if _, ok, err := d.ParseVersion(ctx, "no version here"); err != nil || ok {
		t.Fatalf("parse-version of nothing = %v %v", ok, err)
	}
	model, resume := "m1", "hs-1"
	plan, err := d.Launch(ctx, LaunchRequest{Prompt: "do it", Model: &model, ResumeSession: &resume, MaxTurns: 3,
		Tools: &ToolServer{URL: "http://127.0.0.1:1/mcp", Token: "tok", ToolNames: []string{"a", "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(plan.Stdin) != "do it" || !plan.CloseStdin || len(plan.Args) == 0 {
		t.Fatalf("launch plan = %+v", plan)
	}
	foundTok := false
	for _, kv := range plan.EnvSet {
		foundTok = foundTok || (kv[0] == "HARNESS_MCP_TOKEN" && kv[1] == "tok")
	}
	if !foundTok {
		t.Fatalf("launch plan env = %v, want the tool server token", plan.EnvSet)
	}
	bad := `{`
	_, err = d.Launch(ctx, LaunchRequest{Prompt: "x", Config: &bad})
	var de *DriverError
	if !errors.As(err, &de) || de.Func != "launch" {
		t.Fatalf("launch with a bad config: %v, want a DriverError", err)
	}
	for _, tc := range []struct {
		line string
		want HarnessEvent
	}{
		{`{"type":"session","id":"hs-9"}`, HarnessEvent{Case: HarnessSession, Text: "hs-9"}},
		{`{"type":"text","text":"hi"}`, HarnessEvent{Case: HarnessMessage, Text: "hi"}},
		{`{"type":"tool_use","id":"c1","name":"echo","input":{"x":1}}`, HarnessEvent{Case: HarnessToolCallEvent, ToolCall: HarnessToolCall{ID: "c1", Name: "echo", Input: `{"x":1}`}}},
		{`{"type":"usage","input_tokens":7,"output_tokens":3}`, HarnessEvent{Case: HarnessUsageEvent, Usage: HarnessUsage{InputTokens: 7, OutputTokens: 3}}},
		{`{"type":"result","text":"done"}`, HarnessEvent{Case: HarnessFinished, Text: "done"}},
		{`{"type":"error","message":"boom"}`, HarnessEvent{Case: HarnessFailed, Text: "boom"}},
		{`{"type":"error","code":"session_not_found","message":"hs-1"}`, HarnessEvent{Case: HarnessSessionNotFound, Text: "hs-1"}},
	} {
		evs, err := d.ParseLine(ctx, tc.line)
		if err != nil || len(evs) != 1 || evs[0] != tc.want {
			t.Errorf("parse-line %s = %+v, %v; want %+v", tc.line, evs, err, tc.want)
		}
	}
	if evs, err := d.ParseLine(ctx, `{"type":"progress"}`); err != nil || len(evs) != 0 {
		t.Errorf("parse-line of a progress line = %+v, %v; want no events", evs, err)
	}
	if _, err := d.ParseLine(ctx, `not json`); !errors.As(err, &de) || de.Func != "parse-line" {
		t.Errorf("parse-line of invalid JSON: %v, want a DriverError", err)
	}
}

// TestToolIsNoProcessDriver: a component without murmur:driver/process is
// ErrNoProcess (E-RUN-029 at launch).
func TestToolIsNoProcessDriver(t *testing.T) {
	r := guestRuntime(t)
	c := guest(t, r, "echo-go")
	if ExportsProcess(c) {
		t.Fatal("ExportsProcess = true for a tool")
	}
	inst, err := r.Instantiate(context.Background(), c, Options{Name: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	if _, err := inst.ProcessDriver(); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("ProcessDriver of a tool: %v, want ErrNoProcess", err)
	}
}
