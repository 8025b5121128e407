package cli

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/store"
)

// installSources is where mur install (and search, list --all) resolve
// from: the one registry --registry names, else the resolution order;
// registriesOnly leaves the stores out (mur install -g fills the global
// store from registries).
func installSources(open *store.Open, registry string, registriesOnly bool) ([]store.Source, error) {
	if registry != "" {
		src, err := registrySource(open, registry)
		if err != nil {
			return nil, err
		}
		return []store.Source{src}, nil
	}
	srcs, err := open.Sources()
	if err != nil {
		return nil, err
	}
	if !registriesOnly {
		return srcs, nil
	}
	var out []store.Source
	for _, s := range srcs {
		if n := s.Name(); n != config.SourceProject && n != config.SourceGlobal {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, diag.New(diag.RegSource, diag.Pos{}, "resolution", "the resolution order holds no registry to install from: add one with `mur config set -g registries.NAME.url URL`")
	}
	return out, nil
}

// registrySource opens the registry called name in config.yaml, refusing
// (E-REG-012) a name it does not define with the closest one that it does.
func registrySource(open *store.Open, name string) (store.Source, error) {
	if _, ok := open.Config.Registries[name]; !ok {
		names := slices.Sorted(maps.Keys(open.Config.Registries))
		hint := "add it with `mur config set -g registries." + name + ".url URL`"
		if s := diag.Suggest(name, names); s != "" {
			hint = "did you mean " + s + "?"
		} else if len(names) > 0 {
			hint = "config.yaml defines " + strings.Join(names, ", ") + "; or " + hint
		}
		return nil, diag.New(diag.RegSource, diag.Pos{}, "--registry", fmt.Sprintf("%q is not a registry under registries: in config.yaml; %s", name, hint))
	}
	return open.Source(name)
}

// installArgs parses mur install's NAME[@VERSION] arguments. A name with
// no scope is a wrong command line (exit 64), answered with the full names
// the sources hold that end in it.
func installArgs(env *Env, args []string, srcs []store.Source) ([]artifact.Ref, error) {
	var refs []artifact.Ref
	seen := map[string]bool{}
	for _, a := range args {
		full, ver, hasVer := strings.Cut(a, "@")
		r, err := artifact.ParseFullName(full)
		if err != nil {
			if !strings.Contains(full, "/") && artifact.ValidBareName(full) {
				if held := heldWithName(env.Ctx, srcs, full); len(held) > 0 {
					err = fmt.Errorf("%w; did you mean %s?", err, strings.Join(held, " or "))
				}
			}
			return nil, usageError(err)
		}
		if hasVer && !artifact.ValidVersion(ver) {
			return nil, usageError(fmt.Errorf("version %q of %q must be one segment of letters, digits, '.', '_' and '-'; leave @VERSION out for the newest", ver, a))
		}
		if seen[r.Full()] {
			return nil, usageError(fmt.Errorf("%s is named twice: install one version of it", r.Full()))
		}
		seen[r.Full()] = true
		r.Version = ver
		refs = append(refs, r)
	}
	return refs, nil
}

// heldWithName lists the full names, in any source, whose bare name is name.
func heldWithName(ctx context.Context, srcs []store.Source, name string) []string {
	found := map[string]bool{}
	for _, s := range srcs {
		ms, err := s.List(ctx)
		if err != nil {
			continue
		}
		for _, m := range ms {
			if strings.HasSuffix(m.Name, "/"+name) {
				found[m.Name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(found))
}

// declareInstalled makes murmur.yaml's artifacts: declare every installed
// artifact at its installed version: an entry of that name has its version
// changed, a missing one is appended (with runtime: when it is not a tool).
// The file is edited as a YAML tree, so comments and the other keys stay;
// the result must decode as the capsule did, or nothing is written. It
// returns the name@version of each entry added or changed.
func declareInstalled(path string, done []store.Installed) ([]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: cannot add the installed artifacts to artifacts: (not a YAML mapping): declare them by hand", path)
	}
	root := doc.Content[0]
	var seq *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "artifacts" {
			seq = root.Content[i+1]
		}
	}
	if seq == nil {
		seq = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "artifacts"}, seq)
	}
	if seq.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: artifacts: is not a list: declare the installed artifacts by hand", path)
	}
	var changed []string
	for _, d := range done {
		entry := findEntry(seq, d.Ref.Full())
		switch {
		case entry == nil:
			m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			addScalar(m, "name", d.Ref.Full(), 0)
			addScalar(m, "version", d.Ref.Version, yaml.DoubleQuotedStyle)
			if d.Runtime != "" && d.Runtime != manifest.RoleTool {
				addScalar(m, "runtime", d.Runtime, 0)
			}
			seq.Content = append(seq.Content, m)
		case mapValue(entry, "version") != nil && mapValue(entry, "version").Value == d.Ref.Version:
			continue
		case mapValue(entry, "version") != nil:
			v := mapValue(entry, "version")
			v.Value, v.Tag, v.Style = d.Ref.Version, "!!str", yaml.DoubleQuotedStyle
		default:
			addScalar(entry, "version", d.Ref.Version, yaml.DoubleQuotedStyle)
		}
		changed = append(changed, d.Ref.String())
	}
	if len(changed) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	enc.Close()
	if nc, ds := manifest.ParseCapsule(path, buf.Bytes()); nc == nil || ds.HasErrors() {
		return nil, fmt.Errorf("%s: adding %s to artifacts: would not decode (%v); the artifacts are installed and pinned, declare them by hand", path, strings.Join(changed, ", "), ds.Errors())
	}
	if err := artifact.WriteFileAtomic(path, buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return changed, nil
}

// findEntry is the artifacts: item whose name: is name.
func findEntry(seq *yaml.Node, name string) *yaml.Node {
	for _, it := range seq.Content {
		if it.Kind == yaml.MappingNode {
			if v := mapValue(it, "name"); v != nil && v.Value == name {
				return it
			}
		}
	}
	return nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func addScalar(m *yaml.Node, key, value string, style yaml.Style) {
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Style: style})
}
