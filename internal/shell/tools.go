package shell

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Tool is a synthetic tool the session offers: one per allowed binary, plus
// background-command when lifecycle.shell_grace_secs is set.
type Tool struct {
	Name        string
	Description string
	InputSchema string
}

// Tools lists the synthetic tools in allow order.
func (s *Session) Tools() []Tool {
	var out []Tool
	for _, b := range s.p.Allow {
		desc := fmt.Sprintf("Run %s with the given arguments (the runtime supplies the binary) in the work folder. "+
			"The result holds the exit code and each output stream that printed anything.", b)
		cmdDesc := fmt.Sprintf("The arguments to %s, split like a shell would (quotes group words); no shell operators.", b)
		if s.interp[b] {
			desc = fmt.Sprintf("Run a %s command line (passed as %s -c) in the work folder. "+
				"The result holds the exit code and each output stream that printed anything.", b, b)
			cmdDesc = "The whole command line."
		}
		if s.p.GraceSecs != nil {
			desc += fmt.Sprintf(" A command still running after %d s moves to the background and returns a work id for %s.", *s.p.GraceSecs, BackgroundTool)
		}
		schema, _ := json.Marshal(map[string]any{
			"type":       "object",
			"properties": map[string]any{"command": map[string]any{"type": "string", "description": cmdDesc}},
			"required":   []string{"command"},
		})
		out = append(out, Tool{Name: b, Description: desc, InputSchema: string(schema)})
	}
	if s.p.GraceSecs != nil {
		out = append(out, Tool{Name: BackgroundTool, InputSchema: BackgroundSchema,
			Description: "Check on a shell command that moved to the background: its state and output so far, wait for it to exit, or stop it."})
	}
	return out
}

// WriteManifests writes tools/<binary>/murmur.yaml in the session's runtime
// directory for each allowed binary, so the agent discovers them alongside
// artifact-backed tools.
func (s *Session) WriteManifests() error {
	if s.p.RuntimeDir == "" {
		return fmt.Errorf("no runtime directory for the shell tool manifests: %w", ErrPolicy)
	}
	for _, t := range s.Tools() {
		if t.Name == BackgroundTool {
			continue
		}
		dir := filepath.Join(s.p.RuntimeDir, "tools", t.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write the %q tool manifest: %w", t.Name, err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "# Synthetic manifest for capabilities.shell.allow entry %q, written at session start.\n", t.Name)
		fmt.Fprintf(&b, "name: %s\nversion: \"0.0.0\"\nruntime: tool\ndescription: %s\ninput_schema: %s\n",
			yamlString(t.Name), yamlString(t.Description), yamlString(t.InputSchema))
		// O_EXCL: an on-stage hook's write-manifests may have put the
		// binary's manifest there first, and it replaces this one.
		f, err := os.OpenFile(filepath.Join(dir, "murmur.yaml"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			_, err = f.WriteString(b.String())
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("write the %q tool manifest: %w", t.Name, err)
		}
	}
	return nil
}

// yamlString quotes s as a YAML double-quoted scalar; JSON string syntax is
// a subset of it.
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
