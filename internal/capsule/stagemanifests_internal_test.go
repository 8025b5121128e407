package capsule

import (
	"strings"
	"testing"
)

// TestCheckStageManifest: what an on-stage hook's tool manifest must be
// to be written.
func TestCheckStageManifest(t *testing.T) {
	allow := []string{"sh", "git"}
	base := "name: git\nversion: \"1\"\nruntime: tool\ndescription: run git\n"
	for _, tc := range []struct {
		name, binary, content, want string
	}{
		{"ok", "git", base, ""},
		{"ok schema string", "git", base + `input_schema: '{"type":"object","properties":{"command":{"type":"string"}}}'` + "\n", ""},
		{"not allowed", "curl", strings.ReplaceAll(base, "git", "curl"), "not in capabilities.shell.allow"},
		{"name differs", "git", strings.Replace(base, "name: git", "name: sh", 1), `name is "sh"`},
		{"runtime", "git", strings.Replace(base, "runtime: tool", "runtime: hook", 1), "runtime is"},
		{"no description", "git", "name: git\nruntime: tool\n", "description is empty"},
		{"unknown key", "git", base + "capabilities: {}\n", "not a tool manifest"},
		{"not yaml", "git", "{{", "not a tool manifest"},
		{"extra property", "git", base + "input_schema: {type: object, properties: {command: {type: string}, path: {type: string}}}\n", "only property is command"},
		{"command not string", "git", base + "input_schema: {type: object, properties: {command: {type: array}}}\n", "only property is command"},
		{"too big", "git", base + "# " + strings.Repeat("x", MaxStageManifest) + "\n", "over the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desc, _, err := checkStageManifest(tc.binary, tc.content, allow)
			switch {
			case tc.want == "" && (err != nil || desc != "run git"):
				t.Fatalf("refused: %v (description %q)", err, desc)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
