package capsule_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/capsule/capsuletest"
)

// TestCallToolRecordsTheRunningTask: a call made through Session.CallTool
// while a task runs (as a harness calls the loopback tool server) goes
// through the dispatch path and is recorded under that task; one made
// between tasks is recorded with no task.
func TestCallToolRecordsTheRunningTask(t *testing.T) {
	var (
		s      *capsule.Session
		during string
	)
	drv := agent.DriverFunc(func(ctx context.Context, _ []byte) (agent.Result, error) {
		if during == "" {
			during, _ = s.CallTool(ctx, agent.ToolCall{ID: "mcp_1", Name: "style", Input: json.RawMessage(`{}`)})
		}
		return agent.Result{Status: agent.StatusPassed, Data: `{"text":"ok","stop_reason":"end_turn"}`,
			Metadata: [][2]string{{agent.MetaInputTokens, "10"}, {agent.MetaOutputTokens, "1"}}}, nil
	})
	c, inst := capsuletest.Capsule(t, capsuletest.Spec{})
	var err error
	s, err = capsule.OpenParts(context.Background(), capsule.Parts{
		Capsule: c, Installed: inst, ManifestDir: t.TempDir(), MurmurHome: t.TempDir(), Driver: drv,
		Tools: []agent.Tool{agent.NewSkill("style", "House style.", "# Style")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if defs := s.ToolDefs(); len(defs) != 1 || defs[0].Name != "style" {
		t.Fatalf("ToolDefs = %+v", defs)
	}
	out := s.RunTask(context.Background(), capsule.Task{Text: "Go."})
	after, isErr := s.CallTool(context.Background(), agent.ToolCall{ID: "mcp_2", Name: "style", Input: json.RawMessage(`{}`)})
	if during != "# Style" || after != "# Style" || isErr {
		t.Fatalf("calls returned %q and %q (error %v), want the skill's text", during, after, isErr)
	}
	if err := s.Close(out); err != nil {
		t.Fatal(err)
	}
	if text, isErr := s.CallTool(context.Background(), agent.ToolCall{ID: "mcp_3", Name: "style"}); !isErr || text != capsule.ErrClosed.Error() {
		t.Fatalf("a call after Close: %q %v", text, isErr)
	}

	f, err := os.Open(s.Dirs().Trace())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tasks := map[string]any{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if line["event"] == "tool_call" {
			tasks[line["call_id"].(string)] = line["task_id"]
		}
	}
	if tasks["mcp_1"] != out.TaskID || tasks["mcp_2"] != "" || len(tasks) != 2 {
		t.Fatalf("tool_call task ids %v, want mcp_1 under %s and mcp_2 under none", tasks, out.TaskID)
	}
}
