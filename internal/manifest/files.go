package manifest

import (
	"os"
	"path/filepath"

	"github.com/murmur/mur/internal/diag"
)

// Dir is the directory the manifest was read from: relative
// system_prompt_file and source paths resolve against it.
func (c *Capsule) Dir() string { return filepath.Dir(c.File) }

// CheckPromptFiles reads inference.system_prompt_file (and the compaction
// prompt file) relative to the manifest's directory, as a launch does
// before any inference call: a file missing or unreadable is E-RUN-009.
func CheckPromptFiles(c *Capsule) diag.List {
	in := c.Inference
	if in == nil {
		return nil
	}
	var ds diag.List
	check := func(field, name string) {
		if name == "" {
			return
		}
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(c.Dir(), p)
		}
		if _, err := os.ReadFile(p); err != nil {
			ds = append(ds, c.diagAt(diag.RunPromptFile, field, "%s cannot be read (%v); the path is relative to the directory holding murmur.yaml", name, err))
		}
	}
	check("inference.system_prompt_file", in.SystemPromptFile)
	if in.Compaction != nil {
		check("inference.compaction.system_prompt_file", in.Compaction.SystemPromptFile)
	}
	return ds
}
