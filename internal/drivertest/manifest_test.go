package drivertest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/murmur/mur/internal/manifest"
)

// Each driver's murmur.yaml passes the artifact rules mur build applies
// (models: is E-BLD-005) and carries the upstream_auth: the gateway renders, names its
// component, and lists the models the spec's examples run on.
func TestDriverManifests(t *testing.T) {
	for _, c := range []struct {
		name   string
		header string
		value  string
		models []string
	}{
		{"driver-anthropic", "x-api-key", "{key}", []string{"claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5"}},
		{"driver-openai", "Authorization", "Bearer {key}", []string{"gpt-5", "gpt-4.1", "gpt-4o"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join("../../drivers", c.name, "murmur.yaml")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			a, ds := manifest.ParseArtifact(file, data)
			if a == nil || len(ds) != 0 {
				t.Fatalf("%s: %v", file, ds)
			}
			if a.Name != c.name || a.Runtime != "driver" || len(a.RequiresFiles) != 1 || a.RequiresFiles[0] != c.name+".wasm" {
				t.Fatalf("%+v", a)
			}
			if a.UpstreamAuth == nil || a.UpstreamAuth.Header != c.header || a.UpstreamAuth.Value != c.value {
				t.Fatalf("upstream_auth %+v", a.UpstreamAuth)
			}
			for _, m := range c.models {
				ml, ok := a.Models[m]
				if !ok || ml.MaxOutputTokens <= 0 {
					t.Errorf("models.%s = %+v, %v", m, ml, ok)
				}
			}
			for id, ml := range a.Models {
				if ml.MaxOutputTokens > ml.ContextWindow || (ml.MaxInputTokens != nil && *ml.MaxInputTokens+ml.MaxOutputTokens > ml.ContextWindow) {
					t.Errorf("models.%s limits do not fit the window: %+v", id, ml)
				}
			}
		})
	}
}
