package wasmtool

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule/capsuletest"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/wasm/cm"
)

// echoTool instantiates the component package's echo fixture: a real
// tool-world component whose run returns its input with state_effect read
// and resource_id echo.
func echoTool(t *testing.T) *component.Tool {
	t.Helper()
	rt, err := component.New(cm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	src, err := os.ReadFile("../../component/testdata/echo-tool.wat")
	if err != nil {
		t.Skipf("echo fixture: %v", err)
	}
	c, err := rt.CompileText(string(src))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := rt.Instantiate(context.Background(), c, component.Options{Name: "test/echo"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	tool, err := inst.Tool()
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func TestWASMToolInTheLoop(t *testing.T) {
	srv := providertest.Start(t,
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "echo", Input: `{"msg":"héllo"}`}}},
		providertest.Step{Text: "echoed"},
	)
	c, inst := capsuletest.Capsule(t, capsuletest.Spec{OutputCap: 100, Window: 10000})
	plan, err := agent.NewPlan(c, agent.Sources{Installed: inst,
		Tools: []agent.Tool{Tool{R: echoTool(t), D: agent.ToolDef{Name: "echo", Description: "Echo.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]}`)}}}})
	if err != nil {
		t.Fatal(err)
	}
	var calls []event.Event
	l, err := agent.NewLoop(plan, agent.Runtime{
		Driver: &providertest.Driver{Wire: providertest.Anthropic, Endpoint: srv.URL},
		Events: event.SinkFunc(func(e event.Event) {
			if e.Type == "tool_call" {
				calls = append(calls, e)
			}
		}),
		Workdir: t.TempDir(), BlobDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if o := l.RunTask(context.Background(), agent.Task{ID: "t1", Text: "echo something"}); o.Status != agent.ExitOK {
		t.Fatalf("outcome %+v", o)
	}
	if !strings.Contains(string(srv.Requests()[1].Raw), `{\"msg\":\"héllo\"}`) {
		t.Fatalf("tool output not sent back: %s", srv.Requests()[1].Raw)
	}
	if len(calls) != 1 {
		t.Fatalf("%d tool_call records", len(calls))
	}
	if f := calls[0].Fields; f["status"] != "passed" || f["state_effect"] != "read" || f["resource_id"] != "echo" {
		t.Fatalf("tool_call %v", f)
	}
}

func TestResultConversion(t *testing.T) {
	s, d, p := "sum", "data", "/x"
	got := Result(component.ToolResult{Status: component.StatusFailed, Summary: &s, Data: &d, DataPath: &p, Truncated: true,
		Metadata: []component.Pair{{"http_status", "503"}}})
	if got.Status != agent.StatusFailed || got.Summary != "sum" || got.Data != "data" || got.DataPath != "/x" || !got.Truncated {
		t.Fatalf("%+v", got)
	}
	if v, _ := got.Meta("http_status"); v != "503" {
		t.Fatalf("meta %v", got.Metadata)
	}
}
