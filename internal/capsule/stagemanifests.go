package capsule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/hooks"
)

// MaxStageManifest is the largest tool manifest an on-stage hook may
// write, in bytes.
const MaxStageManifest = 64 << 10

// stageManifest is what an on-stage hook's tool manifest may hold: the
// keys of the synthetic manifest it replaces, and nothing else.
type stageManifest struct {
	Name        string    `yaml:"name"`
	Version     string    `yaml:"version"`
	Runtime     string    `yaml:"runtime"`
	Description string    `yaml:"description"`
	InputSchema yaml.Node `yaml:"input_schema"`
}

// commitManifests commits on-stage's write-manifests answers, in hook
// declaration order (a later hook's manifest for a binary replaces an
// earlier one's). A hook describes only the shell binaries stage-event
// handed it: each accepted manifest is written to
// tools/<binary>/murmur.yaml in the session's runtime directory in place
// of the synthetic one, and its description and input schema are what
// the model is offered for that binary. A manifest that fails a check is
// skipped, the synthetic one stays, and the hook's log says why; what was
// written and what was refused is recorded once the trace is open
// (manifestRecords).
func (h *sessionHooks) commitManifests(r hooks.Result, allow []string, runtimeDir string, inv *agent.Inventory) {
	for _, c := range r.Commits {
		seen := map[string]bool{}
		for _, m := range c.Output.Manifests {
			rec := map[string]any{"hook": c.Hook, "binary": m.BinaryName}
			desc, schema, err := checkStageManifest(m.BinaryName, m.Content, allow)
			if err == nil && seen[m.BinaryName] {
				err = errors.New("a second manifest for the same binary in one answer")
			}
			seen[m.BinaryName] = true
			if err == nil {
				err = writeStageManifest(runtimeDir, m.BinaryName, m.Content)
			}
			if err == nil && inv != nil && !inv.Redescribe(m.BinaryName, desc, schema) {
				err = errors.New("the session offers no tool of that name")
			}
			if err != nil {
				rec["refused"] = err.Error()
				h.set.Logf(c.Hook, "on-stage: write-manifests: the manifest for %q was not written: %v", m.BinaryName, err)
			} else {
				rec["path"] = filepath.Join(runtimeDir, "tools", m.BinaryName, "murmur.yaml")
			}
			h.staged = append(h.staged, rec)
		}
	}
}

// checkStageManifest validates one tool manifest a hook wrote for binary:
// binary is in the shell allow-list; content is a YAML mapping of only
// name (equal to binary), version, runtime (tool), description (not
// empty) and input_schema; the schema, when present, takes exactly the
// shell tool's one input, a string command. It returns the description
// and the schema as JSON (nil when absent).
func checkStageManifest(binary, content string, allow []string) (string, json.RawMessage, error) {
	if !slices.Contains(allow, binary) {
		return "", nil, fmt.Errorf("%q is not in capabilities.shell.allow; an on-stage hook describes only the binaries stage-event.shell-allow lists", binary)
	}
	if len(content) > MaxStageManifest {
		return "", nil, fmt.Errorf("the manifest is %d bytes, over the %d-byte limit", len(content), MaxStageManifest)
	}
	var m stageManifest
	dec := yaml.NewDecoder(bytes.NewReader([]byte(content)))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return "", nil, fmt.Errorf("not a tool manifest of name, version, runtime, description and input_schema: %v", err)
	}
	switch {
	case m.Name != binary:
		return "", nil, fmt.Errorf("name is %q, not the binary %q", m.Name, binary)
	case m.Runtime != "tool":
		return "", nil, fmt.Errorf("runtime is %q; a shell binary's manifest says runtime: tool", m.Runtime)
	case m.Description == "":
		return "", nil, errors.New("description is empty; it is what the model reads about the binary")
	}
	if m.InputSchema.Kind == 0 {
		return m.Description, nil, nil
	}
	var raw []byte
	if m.InputSchema.Kind == yaml.ScalarNode {
		raw = []byte(m.InputSchema.Value)
	} else {
		var v any
		if err := m.InputSchema.Decode(&v); err != nil {
			return "", nil, fmt.Errorf("input_schema: %v", err)
		}
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return "", nil, fmt.Errorf("input_schema is not JSON: %v", err)
		}
	}
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", nil, fmt.Errorf("input_schema is not a JSON Schema object: %v", err)
	}
	var cmd struct {
		Type string `json:"type"`
	}
	if s.Type != "object" || len(s.Properties) != 1 || json.Unmarshal(s.Properties["command"], &cmd) != nil || cmd.Type != "string" {
		return "", nil, errors.New(`input_schema must be an object whose only property is command, a string: the runtime runs the binary with {"command": "<arguments>"} and nothing else`)
	}
	return m.Description, json.RawMessage(raw), nil
}

// writeStageManifest puts content at tools/<binary>/murmur.yaml by a
// rename, so it replaces the synthetic manifest whichever is written
// first (the shell layer does not overwrite one that is there).
func writeStageManifest(runtimeDir, binary, content string) error {
	dir := filepath.Join(runtimeDir, "tools", binary)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".murmur.yaml-")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(content)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, "murmur.yaml"))
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// manifestRecords records, once session_start has opened the trace, one
// hook_manifest record per manifest on-stage answered: written (path) or
// refused (the reason).
func (h *sessionHooks) manifestRecords() {
	for _, rec := range h.staged {
		h.set.Record("hook_manifest", rec)
	}
	h.staged = nil
}
