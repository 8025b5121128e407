package capsule

import (
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/manifest"
)

// Each alternate carries its own driver's models: table, so the launch
// resolves (and can refuse) its limits as it does the primary's.
func TestAgentConfigAlternatesCarryTheirTables(t *testing.T) {
	c := &manifest.Capsule{Name: "cap", Inference: &manifest.Inference{
		Model:  "m1",
		Driver: &manifest.DriverRef{Artifact: "murmur/driver-openai"},
		Alternates: []manifest.Alternate{
			{Name: "backup", Model: "m2", Driver: manifest.DriverRef{Artifact: "murmur/driver-anthropic"}},
			{Name: "unstaged", Model: "m3", Driver: manifest.DriverRef{Artifact: "x/missing"}},
		},
	}}
	primary := &manifest.Artifact{Models: map[string]manifest.ModelLimits{"m1": {MaxOutputTokens: 10, ContextWindow: 100}}}
	backup := &manifest.Artifact{Models: map[string]manifest.ModelLimits{"m2": {MaxOutputTokens: 20, ContextWindow: 200}}}
	lookup := func(name string) (*manifest.Artifact, bool) {
		if name == "murmur/driver-anthropic" {
			return backup, true
		}
		return nil, false
	}
	cfg, err := agentConfig(c, primary, lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := []agent.Choice{
		{Name: "backup", Driver: "murmur/driver-anthropic", Model: "m2", Table: map[string]agent.ModelLimits{"m2": {MaxOutputTokens: 20, ContextWindow: 200}}},
		{Name: "unstaged", Driver: "x/missing", Model: "m3"},
	}
	if len(cfg.Alternates) != len(want) {
		t.Fatalf("alternates %+v", cfg.Alternates)
	}
	for i, w := range want {
		got := cfg.Alternates[i]
		if got.Name != w.Name || got.Driver != w.Driver || got.Model != w.Model || len(got.Table) != len(w.Table) {
			t.Fatalf("alternate %d = %+v, want %+v", i, got, w)
		}
		for m, l := range w.Table {
			if got.Table[m] != l {
				t.Fatalf("alternate %d table[%s] = %+v, want %+v", i, m, got.Table[m], l)
			}
		}
	}
	// Resolved with the primary, the unlisted alternate has no output
	// cap: the launch refuses with E-RUN-052 naming it.
	choices := append([]agent.Choice{{Name: "inference", Driver: cfg.DriverName, Model: cfg.Model, Table: cfg.ModelTable}}, cfg.Alternates...)
	_, dl := agent.ResolveLimits(choices, cfg.Limits)
	if len(dl) == 0 || dl[0].Code != "E-RUN-052" {
		t.Fatalf("diagnostics %v, want E-RUN-052 for the unstaged alternate", dl)
	}
}
