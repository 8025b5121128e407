package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/capsule/capsuletest"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
)

// testLoop starts a loop from the plan of a capsuletest capsule whose model
// has output cap outputCap, offering tools; edit, when set, changes the
// effective capsule before the plan is built. rt.Workdir defaults to a
// temporary folder.
func testLoop(tb testing.TB, outputCap int64, tools []Tool, rt Runtime, edit func(*manifest.Capsule)) *Loop {
	tb.Helper()
	c, inst := capsuletest.Capsule(tb, capsuletest.Spec{OutputCap: outputCap})
	if edit != nil {
		edit(c)
	}
	p, err := NewPlan(c, Sources{Installed: inst, Tools: tools})
	if err != nil {
		tb.Fatal(err)
	}
	if rt.Workdir == "" {
		rt.Workdir = tb.TempDir()
	}
	l, err := NewLoop(p, rt)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// The plan holds the effective manifest's blocks as they are and the limits
// the manifest engine resolved: retry, tool refresh and the done check's
// timeout are the engine's defaults, not the loop's.
func TestPlanReadsTheEffectiveManifest(t *testing.T) {
	c, inst := capsuletest.Capsule(t, capsuletest.Spec{OutputCap: 10, Window: 100})
	timeout := int64(5)
	c.Lifecycle.DoneCheck = &manifest.DoneCheck{Command: "true", Limit: 1, TimeoutSecs: &timeout}
	p, err := NewPlan(c, Sources{Installed: inst, Contained: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Inference != c.Inference || p.Lifecycle != c.Lifecycle {
		t.Fatal("the plan copied the manifest's blocks instead of holding them")
	}
	want := manifest.ChoiceLimits{Choice: manifest.PrimaryChoice, Driver: "test/driver", Model: "m", OutputCap: 10, OutputCapSource: manifest.SourceTableOutput,
		Window: 100, WindowSource: manifest.SourceTableWindow, Budget: 90, Basis: manifest.BasisWindowLessCap}
	if len(p.Limits) != 1 || p.Limits[0] != want {
		t.Fatalf("limits %+v, want %+v", p.Limits, want)
	}
	l, err := NewLoop(p, Runtime{Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	d := l.Describe()
	retry := d["retry"].(map[string]any)
	if retry["max_retries"] != int64(manifest.DefaultMaxRetries) || retry["initial_delay_ms"] != int64(manifest.DefaultInitialDelayMS) ||
		retry["max_delay_ms"] != int64(manifest.DefaultMaxDelayMS) || d["tool_refresh"] != "compaction" || d["capture"] != "meta" {
		t.Fatalf("session_start fields %v", d)
	}
}

// A manifest whose defaults were not applied is refused, not filled in a
// second time by the loop.
func TestPlanRefusesUnresolvedManifest(t *testing.T) {
	edits := map[string]func(*manifest.Capsule){
		"retry":      func(c *manifest.Capsule) { c.Inference.Retry = nil },
		"max delay":  func(c *manifest.Capsule) { c.Inference.Retry.MaxDelayMS = nil },
		"refresh":    func(c *manifest.Capsule) { c.Inference.ToolRefresh = "" },
		"transport":  func(c *manifest.Capsule) { c.Inference.Transport = "" },
		"capture":    func(c *manifest.Capsule) { c.Trace.Capture = "" },
		"lifecycle":  func(c *manifest.Capsule) { c.Lifecycle = nil },
		"done check": func(c *manifest.Capsule) { c.Lifecycle.DoneCheck = &manifest.DoneCheck{Command: "true", Limit: 1} },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			c, inst := capsuletest.Capsule(t, capsuletest.Spec{})
			edit(c)
			if _, err := NewPlan(c, Sources{Installed: inst, Contained: true}); !errors.Is(err, errUnresolved) {
				t.Fatalf("err %v, want %v", err, errUnresolved)
			}
		})
	}
}

// Limits the resolver refuses refuse the plan with the resolver's code; a
// driver that is not installed has no limits at all.
func TestPlanRefusesUnresolvableLimits(t *testing.T) {
	c, _ := capsuletest.Capsule(t, capsuletest.Spec{})
	unlisted := manifest.InstalledMap{"test/driver": {Models: map[string]manifest.ModelLimits{"other": {MaxOutputTokens: 1, ContextWindow: 10}}}}
	_, err := NewPlan(c, Sources{Installed: unlisted})
	var refused diag.ListError
	if !errors.As(err, &refused) || len(refused) == 0 || refused[0].Code != diag.RunModels {
		t.Fatalf("err %v, want %s", err, diag.RunModels)
	}
	if _, err := NewPlan(c, Sources{Installed: manifest.InstalledMap{}}); err == nil || !strings.Contains(err.Error(), "not among the installed") {
		t.Fatalf("err %v", err)
	}
}

// Each driver choice's limits come from the manifest engine's resolver
// against its own driver's models: table, so session_start's model_limits
// lists every choice under the spec's names.
func TestPlanResolvesEveryChoice(t *testing.T) {
	c, inst := capsuletest.Capsule(t, capsuletest.Spec{Driver: "murmur/driver-openai", Model: "m1", OutputCap: 10, Window: 100})
	c.Inference.Alternates = []manifest.Alternate{{Name: "backup", Model: "m2", Driver: manifest.DriverRef{Artifact: "murmur/driver-anthropic"}}}
	inst.(manifest.InstalledMap)["murmur/driver-anthropic"] = &manifest.Artifact{Models: map[string]manifest.ModelLimits{"m2": {MaxOutputTokens: 20, ContextWindow: 200}}}
	p, err := NewPlan(c, Sources{Installed: inst})
	if err != nil {
		t.Fatal(err)
	}
	want := []manifest.ChoiceLimits{
		{Choice: "primary", Driver: "murmur/driver-openai", Model: "m1", OutputCap: 10, OutputCapSource: "models.max_output_tokens",
			Window: 100, WindowSource: "models.context_window", Budget: 90, Basis: "context_window_less_output_cap"},
		{Choice: "backup", Driver: "murmur/driver-anthropic", Model: "m2", OutputCap: 20, OutputCapSource: "models.max_output_tokens",
			Window: 200, WindowSource: "models.context_window", Budget: 180, Basis: "context_window_less_output_cap"},
	}
	if len(p.Limits) != len(want) {
		t.Fatalf("model limits %+v", p.Limits)
	}
	for i := range want {
		if p.Limits[i] != want[i] {
			t.Fatalf("choice %d = %+v, want %+v", i, p.Limits[i], want[i])
		}
	}
}
