package artifact

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
)

// Built is a packed artifact.
type Built struct {
	Data   []byte
	Digest string
	// Manifest is the packed murmur.yaml, decoded.
	Manifest *manifest.Artifact
	// Payload is every packed file but murmur.yaml, for WIT scanning.
	Payload [][]byte
	// Files is the payload with its paths, in requires_files order (set
	// by Build, for the payload checks; nil for an inspected package).
	Files []Entry
}

// Build packs the artifact in dir as the spec says: murmur.yaml plus
// exactly its requires_files (with the per-role default); a skill folder
// with no murmur.yaml packs every file, its skill file as skill.md, under a
// generated murmur.yaml. The returned diagnostics hold warnings even on
// success; any error means nothing was built.
func Build(dir string) (*Built, diag.List) {
	if _, err := os.Stat(filepath.Join(dir, "murmur.yaml")); errors.Is(err, fs.ErrNotExist) {
		return buildSkillFolder(dir)
	}
	a, ds := manifest.LoadArtifact(dir)
	if a == nil || ds.HasErrors() {
		return nil, ds
	}
	src, err := os.ReadFile(filepath.Join(dir, "murmur.yaml"))
	if err != nil {
		return nil, append(ds, diag.New(diag.IONotFound, diag.Pos{File: a.File}, "", err.Error()))
	}
	files, err := CollectRequired(dir, a.RequiresFiles, func(i int) diag.Pos { return a.Pos(fmt.Sprintf("requires_files[%d]", i)) })
	if err != nil {
		return nil, append(ds, asDiag(err, a.File))
	}
	entries := []Entry{{Path: "murmur.yaml", Data: src}}
	var payload [][]byte
	var own []Entry
	for _, f := range files {
		if f.Path == "murmur.yaml" {
			continue
		}
		entries = append(entries, f)
		payload = append(payload, f.Data)
		own = append(own, f)
	}
	data, err := Pack(entries)
	if err != nil {
		return nil, append(ds, diag.New(diag.BldPath, diag.Pos{File: a.File}, "requires_files", err.Error()))
	}
	return &Built{Data: data, Digest: Digest(data), Manifest: a, Payload: payload, Files: own}, ds
}

func buildSkillFolder(dir string) (*Built, diag.List) {
	sf, err := ReadSkillFolder(dir)
	if err != nil {
		var d diag.Diagnostic
		if errors.As(err, &d) {
			// The folder is being built, not named by a source: field.
			d.Field = ""
			if d.Code == diag.IONotFound {
				d.Msg = fmt.Sprintf("%s has no murmur.yaml and no skill.md: write a murmur.yaml, or make it a skill folder", dir)
			}
			return nil, diag.List{d}
		}
		return nil, diag.List{asDiag(err, dir)}
	}
	var skill []byte
	for _, f := range sf.Files {
		if f.Path == "skill.md" {
			skill = f.Data
		}
	}
	name, version, desc := SkillFrontMatter(skill)
	abs, _ := filepath.Abs(dir)
	if name == "" {
		name = filepath.Base(abs)
	}
	if version == "" {
		version = "0.1.0"
	}
	var y []byte
	y = fmt.Appendf(y, "name: %q\nversion: %q\nruntime: skill\n", name, version)
	if desc != "" {
		y = fmt.Appendf(y, "description: %q\n", desc)
	}
	y = append(y, "requires_files:\n"...)
	for _, f := range sf.Files {
		y = fmt.Appendf(y, "  - %q\n", f.Path)
	}
	file := filepath.Join(dir, "murmur.yaml (generated from the skill folder)")
	a, ds := manifest.ParseArtifact(file, y)
	if a == nil || ds.HasErrors() {
		return nil, ds
	}
	entries := append([]Entry{{Path: "murmur.yaml", Data: y}}, sf.Files...)
	payload := make([][]byte, 0, len(sf.Files))
	for _, f := range sf.Files {
		payload = append(payload, f.Data)
	}
	data, err := Pack(entries)
	if err != nil {
		return nil, append(ds, diag.New(diag.BldPath, diag.Pos{File: dir}, "", err.Error()))
	}
	return &Built{Data: data, Digest: Digest(data), Manifest: a, Payload: payload, Files: sf.Files}, ds
}

// asDiag keeps a diagnostic as is and files any other error under file.
func asDiag(err error, file string) diag.Diagnostic {
	var d diag.Diagnostic
	if errors.As(err, &d) {
		if d.Pos.File == "" {
			d.Pos.File = file
		}
		return d
	}
	return diag.New(diag.IONotFound, diag.Pos{File: file}, "", err.Error())
}

// Inspect reads a built .mur.zip back: it must open safely and carry a
// murmur.yaml that decodes. It returns the decoded manifest, the payload
// files and the parse diagnostics (E-BLD-… codes for what is wrong with
// the packed manifest).
func Inspect(data []byte, where string) (*Built, *Package, diag.List, error) {
	p, err := Open(data, DefaultLimits)
	if err != nil {
		return nil, nil, nil, err
	}
	mf, err := p.ReadFile("murmur.yaml")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s has no murmur.yaml", ErrPackage, where)
	}
	a, ds := manifest.ParseArtifact(where+"!murmur.yaml", mf)
	if a == nil {
		return nil, p, ds, nil
	}
	b := &Built{Data: data, Digest: Digest(data), Manifest: a}
	for _, n := range p.Names() {
		if n == "murmur.yaml" {
			continue
		}
		f, err := p.ReadFile(n)
		if err != nil {
			return nil, nil, nil, err
		}
		b.Payload = append(b.Payload, f)
	}
	return b, p, ds, nil
}
