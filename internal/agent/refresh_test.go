package agent

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/murmur/mur/internal/manifest"
)

// installer is a tool whose call changes the inventory, as pull-artifact
// does (byAgent) or as a script's manage.pull does (not).
type installer struct {
	inv     **Inventory
	byAgent bool
}

func (i installer) Def() ToolDef { return ToolDef{Name: "install", Kind: KindRuntime} }

func (i installer) Call(context.Context, json.RawMessage) (Result, error) {
	if err := (*i.inv).Add(NewSkill("pulled", "A pulled skill.", "# Pulled"), i.byAgent); err != nil {
		return Result{}, err
	}
	return Result{Status: StatusPassed, Data: "installed"}, nil
}

// refreshRun runs tasks against a model that calls install, then the
// installed tool, then answers; it returns each request's tool names and
// the tools_refreshed lines.
func refreshRun(t *testing.T, byAgent bool, mode string, tasks int) ([][]string, []map[string]any) {
	return refreshRunWith(t, byAgent, mode, tasks, nil)
}

// committer is an on-compaction hook that always replaces the context,
// at every turn (the threshold is set to nothing).
type committer struct{}

func (committer) Active() bool { return true }

func (committer) Compact(context.Context, CompactionEvent) (CompactionResult, error) {
	return CompactionResult{Committed: true, Hook: "test/compact", Messages: []TextMessage{{Role: RoleUser, Content: "summary"}}}, nil
}

func refreshRunWith(t *testing.T, byAgent bool, mode string, tasks int, compactor Compactor) ([][]string, []map[string]any) {
	t.Helper()
	var inv *Inventory
	var seen [][]string
	calls := 0
	drv := DriverFunc(func(_ context.Context, data []byte) (Result, error) {
		var r struct {
			Tools []ToolDef `json:"tools"`
		}
		json.Unmarshal(data, &r)
		var names []string
		for _, d := range r.Tools {
			names = append(names, d.Name)
		}
		seen = append(seen, names)
		calls++
		if calls == 1 {
			return passed(`{"text":"","tool_calls":[{"id":"c1","name":"install","input":{}}],"stop_reason":"tool_use"}`), nil
		}
		if calls == 2 {
			return passed(`{"text":"","tool_calls":[{"id":"c2","name":"pulled","input":{}}],"stop_reason":"tool_use"}`), nil
		}
		return passed(`{"text":"done","stop_reason":"end_turn"}`), nil
	})
	sink := &recordSink{}
	l := testLoop(t, 100, []Tool{installer{&inv, byAgent}}, Runtime{Driver: drv, Events: sink, Compactor: compactor}, func(c *manifest.Capsule) {
		c.Inference.ToolRefresh = mode
		if compactor != nil {
			tiny := 1e-9
			c.Inference.Compaction = &manifest.Compaction{Threshold: &tiny}
		}
	})
	inv = l.plan.Tools
	for i := range tasks {
		if o := l.RunTask(context.Background(), Task{ID: "t" + string(rune('1'+i)), Text: "go"}); o.Status != ExitOK {
			t.Fatalf("task %d: %+v", i, o)
		}
	}
	return seen, sink.of("tools_refreshed")
}

// The model's own install is in its next call's tool list whatever
// tool_refresh says, with one tools_refreshed line naming the trigger
// agent; the pulled tool is callable in the same task.
func TestToolRefreshAgent(t *testing.T) {
	seen, lines := refreshRun(t, true, "compaction", 1)
	if len(seen) != 3 || slices.Contains(seen[0], "pulled") || !slices.Contains(seen[1], "pulled") {
		t.Fatalf("tool lists per call = %v", seen)
	}
	if len(lines) != 1 || lines[0]["trigger"] != RefreshAgent || lines[0]["turn"] != 2 || !slices.Equal(lines[0]["added"].([]string), []string{"pulled"}) {
		t.Fatalf("tools_refreshed = %v", lines)
	}
}

// Another install waits for the boundary tool_refresh names: the next
// task's first call under compaction, the next call under immediate. The
// installed tool is callable before it is offered (the dispatch
// allowlist).
func TestToolRefreshOtherInstalls(t *testing.T) {
	seen, lines := refreshRun(t, false, "compaction", 2)
	if len(seen) != 4 || slices.Contains(seen[1], "pulled") || slices.Contains(seen[2], "pulled") || !slices.Contains(seen[3], "pulled") {
		t.Fatalf("compaction: tool lists per call = %v", seen)
	}
	if len(lines) != 1 || lines[0]["trigger"] != RefreshTaskStart || lines[0]["task_id"] != "t2" {
		t.Fatalf("compaction: tools_refreshed = %v", lines)
	}
	seen, lines = refreshRun(t, false, "immediate", 1)
	if len(seen) != 3 || !slices.Contains(seen[1], "pulled") {
		t.Fatalf("immediate: tool lists per call = %v", seen)
	}
	if len(lines) != 1 || lines[0]["trigger"] != RefreshImmediate {
		t.Fatalf("immediate: tools_refreshed = %v", lines)
	}
}

// Under compaction, another install is offered at the first call after a
// compaction replaced the context, within the same task.
func TestToolRefreshAfterCompaction(t *testing.T) {
	seen, lines := refreshRunWith(t, false, "compaction", 1, committer{})
	if len(seen) != 3 || slices.Contains(seen[0], "pulled") || !slices.Contains(seen[1], "pulled") {
		t.Fatalf("tool lists per call = %v", seen)
	}
	if len(lines) != 1 || lines[0]["trigger"] != RefreshCompacted {
		t.Fatalf("tools_refreshed = %v", lines)
	}
}
