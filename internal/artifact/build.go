package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

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
func Build(dir string) (*Built, diag.List) { return BuildWith(dir, BuildOptions{}) }

// BuildOptions are mur build's flags.
type BuildOptions struct {
	// Skill packs dir by the skill-folder rules even when it holds a
	// murmur.yaml, which is then neither read nor packed (mur build
	// --skill).
	Skill bool
	// Version, when set, is the version packed in place of the one
	// murmur.yaml (or the skill's front matter) declares (mur build
	// --version); the source files are not changed.
	Version string
}

// BuildWith is Build with options.
func BuildWith(dir string, opts BuildOptions) (*Built, diag.List) {
	if opts.Version != "" && !ValidVersion(opts.Version) {
		return nil, diag.List{diag.New(diag.BldName, diag.Pos{}, "version", fmt.Sprintf("--version %q must be one segment of letters, digits, '.', '_' and '-' (it becomes the registry tag)", opts.Version))}
	}
	if _, err := os.Stat(filepath.Join(dir, "murmur.yaml")); opts.Skill || errors.Is(err, fs.ErrNotExist) {
		return buildSkillFolder(dir, opts.Version)
	}
	a, ds := manifest.LoadArtifact(dir)
	if a == nil || ds.HasErrors() {
		return nil, ds
	}
	src, err := os.ReadFile(filepath.Join(dir, "murmur.yaml"))
	if err != nil {
		return nil, append(ds, diag.New(diag.IONotFound, diag.Pos{File: a.File}, "", err.Error()))
	}
	if opts.Version != "" {
		if src, err = withVersion(src, opts.Version); err != nil {
			return nil, append(ds, diag.New(diag.BldName, a.Pos("version"), "version", err.Error()))
		}
		// The packed manifest is the one with the new version; its own
		// checks (a reserved version among them) are made on it.
		if a, ds = manifest.ParseArtifact(a.File, src); a == nil || ds.HasErrors() {
			return nil, ds
		}
		if a.Version != opts.Version {
			return nil, append(ds, diag.New(diag.BldName, a.Pos("version"), "version", fmt.Sprintf("--version %s: murmur.yaml's version: could not be replaced (it reads %q); write the version there", opts.Version, a.Version)))
		}
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

func buildSkillFolder(dir, version string) (*Built, diag.List) {
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
	name, fmVersion, desc := SkillFrontMatter(skill)
	if version == "" {
		version = fmVersion
	}
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

// withVersion returns a murmur.yaml with its top-level version: replaced by
// v (or added when it has none), every other byte kept, so the packed file
// differs from its source in that one value.
func withVersion(src []byte, v string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("murmur.yaml is not a YAML mapping: --version cannot set its version")
	}
	root := doc.Content[0]
	var val *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "version" {
			val = root.Content[i+1]
		}
	}
	quoted := strconv.Quote(v)
	if val == nil {
		out := append([]byte(nil), src...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		return fmt.Appendf(out, "version: %s\n", quoted), nil
	}
	if val.Kind != yaml.ScalarNode || strings.Contains(val.Value, "\n") {
		return nil, fmt.Errorf("version: is not a one-line value: --version cannot replace it")
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	if val.Line < 1 || val.Line > len(lines) {
		return nil, fmt.Errorf("version: not found where the parser put it")
	}
	line := lines[val.Line-1]
	start := val.Column - 1
	if start < 0 || start > len(line) {
		return nil, fmt.Errorf("version: not found where the parser put it")
	}
	// The value ends at its closing quote, or (plain) before a comment or
	// the end of the line; what follows it is kept.
	rest := line[start:]
	end := len(bytes.TrimRight(rest, "\r\n"))
	switch val.Style {
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		q := rest[0]
		if i := bytes.IndexByte(rest[1:], q); i >= 0 {
			end = i + 2
		}
	default:
		if i := bytes.Index(rest, []byte(" #")); i >= 0 && i < end {
			end = i
		}
		end = len(bytes.TrimRight(rest[:end], " \t"))
	}
	nl := append(append(append([]byte(nil), line[:start]...), quoted...), rest[end:]...)
	lines[val.Line-1] = nl
	return bytes.Join(lines, nil), nil
}
