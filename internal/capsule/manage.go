package capsule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/manifest"
)

// A script capsule's murmur:artifact-manager/manage@0.1.0 is served by
// the session's installs (pull.go), under the same grant and checks as
// the agent's pull-artifact and remove-artifact.

// artifactManager is what a script capsule's murmur:artifact-manager/manage
// reaches: nil (every call answers not granted) without capabilities.install.
func (l *launcher) artifactManager() component.ArtifactManager {
	if l.installs == nil {
		return nil
	}
	return l.installs
}

// runtimeType is manage's runtime-type of an artifact: native for a
// native tool, wasm for everything else (the enum has no case for a
// skill's static payload).
func runtimeType(own *manifest.Artifact) component.RuntimeType {
	if own != nil && own.ExecutionType() == manifest.ExecNative {
		return component.RuntimeNative
	}
	return component.RuntimeWasm
}

// installed is every skill and tool of the session, declared and pulled,
// by full name.
func (in *installs) installed() map[string]component.ArtifactSummary {
	out := map[string]component.ArtifactSummary{}
	for _, e := range in.l.c.Artifacts {
		role := e.Runtime
		if role == "" {
			role = manifest.RoleTool
		}
		if role != manifest.RoleTool && role != manifest.RoleSkill {
			continue
		}
		own, _ := in.l.res.Artifact(e.Name)
		out[e.Name] = component.ArtifactSummary{Name: e.Name, Version: e.Version, Runtime: runtimeType(own)}
	}
	for name, p := range in.pulled {
		out[name] = component.ArtifactSummary{Name: name, Version: p.version, Runtime: runtimeType(p.own)}
	}
	return out
}

// List is manage.list: the session's skills and tools, sorted by name.
func (in *installs) List(context.Context) []component.ArtifactSummary {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.listLocked()
}

func (in *installs) listLocked() []component.ArtifactSummary {
	all := in.installed()
	out := make([]component.ArtifactSummary, 0, len(all))
	for _, s := range all {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Describe is manage.describe of one installed skill or tool.
func (in *installs) Describe(_ context.Context, name string) (component.ArtifactInfo, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	s, ok := in.installed()[name]
	if !ok {
		return component.ArtifactInfo{}, fmt.Errorf("%s is not installed in this session; manage.list names what is", name)
	}
	var own *manifest.Artifact
	if p, ok := in.pulled[name]; ok {
		own = p.own
	} else {
		own, _ = in.l.res.Artifact(name)
	}
	info := component.ArtifactInfo{Name: s.Name, Version: s.Version, Runtime: s.Runtime, Tags: []string{}}
	if own != nil {
		info.Description = strings.TrimSpace(own.Description)
		if own.InputSchema != nil {
			if b, err := schemaJSON(own.InputSchema); err == nil {
				schema := string(b)
				info.InputSchema = &schema
			}
		}
	}
	return info, nil
}

// Search is manage.search, which this host does not serve, by choice:
// spec 000 leaves search unserved, and a pull names an exact artifact, so
// a script is told what to do instead.
func (in *installs) Search(context.Context, string) ([]component.ArtifactSummary, error) {
	return nil, errors.New("manage.search is not served by this host: pull an exact <scope>/<name> that capabilities.install admits (mur search lists the stores' artifacts on the host)")
}

// Pull is manage.pull: the same checks as pull-artifact; the pulled
// artifact is callable through invoke at once and reaches a model's tool
// list at inference.tool_refresh's boundary.
func (in *installs) Pull(ctx context.Context, name, version string) (component.ArtifactSummary, error) {
	p, err := in.pull(ctx, name, version, false)
	if err != nil {
		return component.ArtifactSummary{}, errors.New(errText(err))
	}
	return component.ArtifactSummary{Name: p.name, Version: p.version, Runtime: runtimeType(p.own)}, nil
}

// Remove is manage.remove: the same checks as remove-artifact.
func (in *installs) Remove(_ context.Context, name string) (bool, error) {
	if err := in.remove(name, false); err != nil {
		return false, errors.New(errText(err))
	}
	return true, nil
}

// Diagnostics is manage.diagnostics: the session, what it has installed,
// and the install grant as JSON.
func (in *installs) Diagnostics(context.Context) (component.RuntimeState, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	grant, err := json.Marshal(map[string]any{"install_skill": nonNilList(in.grant.Skill), "install_tool": nonNilList(in.grant.Tool), "install_from": nonNilList(in.grant.From)})
	if err != nil {
		return component.RuntimeState{}, err
	}
	return component.RuntimeState{CapsuleID: in.dirs.ID, Installed: in.listLocked(), Capabilities: string(grant)}, nil
}

func nonNilList(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

var _ component.ArtifactManager = (*installs)(nil)
