// Package capsuletest builds the resolved manifest capsule.OpenParts and
// agent.NewPlan take, for tests and benchmarks that bring their own driver
// and tools: a capsule parsed and given its defaults by the manifest
// engine, never a hand-filled copy of one.
package capsuletest

import (
	"fmt"
	"testing"

	"github.com/murmur/mur/internal/manifest"
)

// Spec describes the capsule: its name, its one driver and the model that
// driver's models: table lists with its output cap and context window.
// Zero values are "test", "test/driver", "m", 1000 and 100000.
type Spec struct {
	Name      string
	Driver    string
	Model     string
	OutputCap int64
	Window    int64
}

// Capsule is the effective capsule of s (manifest.Capsule.Effective) and
// the installed driver its limits resolve against. A manifest the engine
// refuses fails tb.
func Capsule(tb testing.TB, s Spec) (*manifest.Capsule, manifest.Installed) {
	tb.Helper()
	if s.Name == "" {
		s.Name = "test"
	}
	if s.Driver == "" {
		s.Driver = "test/driver"
	}
	if s.Model == "" {
		s.Model = "m"
	}
	if s.OutputCap == 0 {
		s.OutputCap = 1000
	}
	if s.Window == 0 {
		s.Window = 100000
	}
	src := fmt.Sprintf(`name: %s
version: "0.1.0"
artifacts:
  - name: %s
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: http://127.0.0.1:9/v1
      api_key: ${TEST_API_KEY}
inference:
  model: %s
  driver:
    artifact: %s
`, s.Name, s.Driver, s.Model, s.Driver)
	c, ds := manifest.ParseCapsule("murmur.yaml", []byte(src))
	if ds.HasErrors() || c == nil {
		tb.Fatalf("capsuletest: the manifest engine refused the capsule: %v", ds.Errors())
	}
	return c.Effective(), manifest.InstalledMap{s.Driver: {
		Models: map[string]manifest.ModelLimits{s.Model: {MaxOutputTokens: s.OutputCap, ContextWindow: s.Window}},
	}}
}
