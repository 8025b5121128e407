package capsule

import (
	"testing"

	"github.com/murmur/mur/internal/manifest"
)

// Each driver choice's limits come from the manifest engine's resolver
// against its own driver's models: table, so session_start's model_limits
// lists every choice under the spec's names.
func TestAgentConfigResolvesEveryChoice(t *testing.T) {
	c := &manifest.Capsule{Name: "cap", Inference: &manifest.Inference{
		Model:  "m1",
		Driver: &manifest.DriverRef{Artifact: "murmur/driver-openai"},
		Alternates: []manifest.Alternate{
			{Name: "backup", Model: "m2", Driver: manifest.DriverRef{Artifact: "murmur/driver-anthropic"}},
		},
	}}
	inst := manifest.InstalledMap{
		"murmur/driver-openai":    {Models: map[string]manifest.ModelLimits{"m1": {MaxOutputTokens: 10, ContextWindow: 100}}},
		"murmur/driver-anthropic": {Models: map[string]manifest.ModelLimits{"m2": {MaxOutputTokens: 20, ContextWindow: 200}}},
	}
	cfg, err := agentConfig(c, inst)
	if err != nil {
		t.Fatal(err)
	}
	want := []manifest.ChoiceLimits{
		{Choice: "primary", Driver: "murmur/driver-openai", Model: "m1", OutputCap: 10, OutputCapSource: "models.max_output_tokens",
			Window: 100, WindowSource: "models.context_window", Budget: 90, Basis: "context_window_less_output_cap"},
		{Choice: "backup", Driver: "murmur/driver-anthropic", Model: "m2", OutputCap: 20, OutputCapSource: "models.max_output_tokens",
			Window: 200, WindowSource: "models.context_window", Budget: 180, Basis: "context_window_less_output_cap"},
	}
	if len(cfg.ModelLimits) != len(want) {
		t.Fatalf("model limits %+v", cfg.ModelLimits)
	}
	for i := range want {
		if cfg.ModelLimits[i] != want[i] {
			t.Fatalf("choice %d = %+v, want %+v", i, cfg.ModelLimits[i], want[i])
		}
	}
}
