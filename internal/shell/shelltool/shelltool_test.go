package shelltool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/shell"
)

type bare struct{}

func (bare) Prepare(*exec.Cmd) error { return nil }

func session(t *testing.T, grace *int) (*shell.Session, string, *[]event.Event) {
	t.Helper()
	root := t.TempDir()
	wd := filepath.Join(root, "work")
	if err := os.MkdirAll(filepath.Join(wd, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	s, err := shell.New(shell.Policy{
		Allow: []string{"bash", "echo", "sleep"}, PATH: os.Getenv("PATH"), HostEnv: os.Environ(),
		Workdir: wd, Home: filepath.Join(root, "home"), Tmp: filepath.Join(root, "tmp"), RecordsDir: filepath.Join(root, "rec"),
		ReadOnly: []string{"tests"}, GraceSecs: grace,
	}, bare{}, event.SinkFunc(func(e event.Event) { evs = append(evs, e) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, wd, &evs
}

func find(tools []agent.Tool, name string) agent.Tool {
	for _, t := range tools {
		if t.Def().Name == name {
			return t
		}
	}
	return nil
}

func TestBinaryTools(t *testing.T) {
	s, _, evs := session(t, nil)
	tools := Tools(s)
	if len(tools) != 3 || find(tools, shell.BackgroundTool) != nil {
		t.Fatalf("tools = %d", len(tools))
	}
	bash := find(tools, "bash")
	if bash.Def().Kind != agent.KindShell || len(agent.MissingRequired(bash.Def().InputSchema, json.RawMessage(`{}`))) != 1 {
		t.Errorf("bash def = %+v", bash.Def())
	}
	ctx := context.Background()
	tests := []struct {
		input  string
		status agent.Status
		text   string
	}{
		{`{"command":"echo hi"}`, agent.StatusPassed, "Exit code: 0\nStdout:\nhi\n"},
		{`{"command":"exit 3"}`, agent.StatusFailed, "Exit code: 3\n"},
		{`{"command":"touch tests/x"}`, agent.StatusError, "Nothing ran"},
		{`{"cmd":"echo"}`, agent.StatusError, `{"command": "<string>"}`},
		{`[]`, agent.StatusError, "did not run"},
	}
	for _, tt := range tests {
		r, err := bash.Call(ctx, json.RawMessage(tt.input))
		if err != nil {
			t.Fatalf("%s: %v", tt.input, err)
		}
		got := r.Data + r.Summary
		if r.Status != tt.status || !strings.Contains(got, tt.text) {
			t.Errorf("%s: %s %q", tt.input, r.Status, got)
		}
	}
	denied := 0
	for _, e := range *evs {
		if e.Type == "protected_path_denied" {
			denied++
		}
	}
	if denied != 1 {
		t.Errorf("protected_path_denied records = %d", denied)
	}
}

func TestBackgroundTool(t *testing.T) {
	g := 0
	s, _, _ := session(t, &g)
	tools := Tools(s)
	bg := find(tools, shell.BackgroundTool)
	if bg == nil || bg.Def().Kind != agent.KindRuntime {
		t.Fatal("no background-command")
	}
	ctx := context.Background()
	r, err := find(tools, "bash").Call(ctx, json.RawMessage(`{"command":"sleep 0.3; echo bg"}`))
	if err != nil || r.Status != agent.StatusPassed || !strings.Contains(r.Data, "wrk_") {
		t.Fatalf("demoted call: %+v %v", r, err)
	}
	id := strings.Fields(r.Data[strings.Index(r.Data, "wrk_"):])[0]
	out, err := bg.Call(ctx, json.RawMessage(`{"work_id":"`+id+`","action":"wait"}`))
	if err != nil || !strings.Contains(out.Data, "Exit code: 0") || !strings.Contains(out.Data, "bg") {
		t.Errorf("wait: %+v %v", out, err)
	}
	out, err = bg.Call(ctx, json.RawMessage(`{"work_id":"wrk_0"}`))
	if err != nil || out.Status != agent.StatusError {
		t.Errorf("unknown id: %+v %v", out, err)
	}
}

func TestNativeTool(t *testing.T) {
	s, _, _ := session(t, nil)
	bin := filepath.Join(t.TempDir(), "writer")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"got $1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	def := agent.ToolDef{Name: "writer", InputSchema: json.RawMessage(`{"type":"object","properties":{"out":{"type":"string","format":"murmur-destination"}}}`)}
	tool, err := Native(s, shell.NativeTool{Name: "writer", Path: bin}, def)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := tool.Call(ctx, json.RawMessage(`{"out":"tests/a"}`))
	if err != nil || r.Status != agent.StatusError || !strings.Contains(r.Summary, "tests/a") {
		t.Errorf("refusal: %+v %v", r, err)
	}
	r, err = tool.Call(ctx, json.RawMessage(`{"out":"build/a"}`))
	if err != nil || r.Status != agent.StatusPassed || !strings.Contains(r.Data, `got {"out":"build/a"}`) {
		t.Errorf("run: %+v %v", r, err)
	}
	if _, err := Native(s, shell.NativeTool{Name: "x"}, agent.ToolDef{InputSchema: json.RawMessage(`{`)}); err == nil {
		t.Error("malformed schema accepted")
	}
}

func TestRunner(t *testing.T) {
	s, wd, _ := session(t, nil)
	r := Runner{S: s, Workdir: wd}
	ctx := context.Background()
	res, err := r.RunCheck(ctx, []string{"bash", "-c", "echo out; echo err >&2; exit 2"}, wd, 5*time.Second)
	if err != nil || res.ExitCode != 2 || res.Output != "out\nerr\n" || res.TimedOut {
		t.Errorf("check = %+v %v", res, err)
	}
	res, err = r.RunCheck(ctx, []string{"bash", "-c", "echo partial; sleep 30"}, "", 300*time.Millisecond)
	if err != nil || !res.TimedOut || res.Output != "partial\n" {
		t.Errorf("timeout = %+v %v", res, err)
	}
	if _, err := r.RunCheck(ctx, []string{"python3", "x"}, "", time.Second); !errors.Is(err, shell.ErrNotAllowed) {
		t.Errorf("disallowed: %v", err)
	}
	if _, err := r.RunCheck(ctx, []string{"echo"}, "/elsewhere", time.Second); !errors.Is(err, ErrDir) {
		t.Errorf("other dir: %v", err)
	}
}

func TestPrecheck(t *testing.T) {
	s, _, evs := session(t, nil)
	bash, ok := find(Tools(s), "bash").(Prechecker)
	if !ok {
		t.Fatal("bash tool is not a Prechecker")
	}
	if d := bash.Precheck(json.RawMessage(`{"command":"rm -r tests"}`)); d == nil || d.Path != "tests" {
		t.Errorf("Precheck = %v", d)
	}
	for _, in := range []string{`{"command":"rm -r src"}`, `{}`, `nope`} {
		if d := bash.Precheck(json.RawMessage(in)); d != nil {
			t.Errorf("Precheck(%s) = %v", in, d)
		}
	}
	bin := filepath.Join(t.TempDir(), "n")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ntouch ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	nt, err := Native(s, shell.NativeTool{Name: "n", Path: bin}, agent.ToolDef{Name: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if d := nt.(Prechecker).Precheck(json.RawMessage(`{"dest":"tests/x"}`)); d == nil || d.Location != "dest" {
		t.Errorf("native Precheck = %v", d)
	}
	n := 0
	for _, e := range *evs {
		if e.Type == "protected_path_denied" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("protected_path_denied records = %d, want 2", n)
	}
}
