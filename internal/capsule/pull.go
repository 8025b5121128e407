package capsule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/agent/wasmtool"
	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/store"
)

// Names of the runtime tools capabilities.install puts in the inventory.
const (
	pullToolName   = "pull-artifact"
	removeToolName = "remove-artifact"
)

// installs is a session's capabilities.install: the artifacts a pull may
// add to the running session and a removal may take out again. The agent
// pulls through the pull-artifact and remove-artifact tools; a script
// capsule through murmur:artifact-manager/manage. Both make the same
// checks here.
type installs struct {
	l     *launcher
	grant manifest.Install
	// project is the capsule's project (its store and murmur.lock);
	// global the store under ~/.murmur.
	project *store.Project
	global  *store.Layout
	// sources: install.from names sources (a version no store holds is
	// fetched from the scope's GitHub source; scopes opened at first pull).
	sources bool
	scopes  []store.Source
	// declared are the full names of the capsule's artifacts: entries.
	declared map[string]bool

	mu sync.Mutex
	// Bound once the session exists (bind).
	inv    *agent.Inventory
	dirs   session.Dirs
	events event.Sink
	// rewrite writes MURMUR.md again after a change.
	rewrite func() error
	// pulled are the artifacts this session pulled, by full name.
	pulled map[string]*pulledArtifact
}

// pulledArtifact is one artifact a pull installed into the session.
type pulledArtifact struct {
	name, version, role, execution string
	// unstored is the pull from a scope source, which no store keeps: it
	// stages from its unpacked tree.
	unstored *store.Installed
	// tool is its name in the inventory (its bare name).
	tool string
	own  *manifest.Artifact
}

// newInstalls is the capsule's install grant, or nil when it declares
// none (no pull-artifact or remove-artifact is offered then).
func newInstalls(l *launcher, manifestDir, murmurHome string) *installs {
	caps := l.c.Capabilities
	if caps == nil || caps.Install == nil || len(caps.Install.Skill)+len(caps.Install.Tool) == 0 {
		return nil
	}
	in := &installs{l: l, grant: *caps.Install, project: store.ProjectAt(manifestDir), global: store.GlobalStore(murmurHome),
		declared: map[string]bool{}, pulled: map[string]*pulledArtifact{}, sources: slices.Contains(caps.Install.From, "sources")}
	for _, e := range l.c.Artifacts {
		in.declared[e.Name] = true
	}
	return in
}

// bind hands the installs the session they install into.
func (in *installs) bind(inv *agent.Inventory, dirs session.Dirs, events event.Sink, rewrite func() error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.inv, in.dirs, in.events, in.rewrite = inv, dirs, events, rewrite
}

// admits reports whether an install entry admits the full name: an exact
// name, <scope>/* and <scope>/<prefix>* by prefix, * everything.
func admits(entries []string, name string) bool {
	for _, e := range entries {
		if e == "*" || e == name || strings.HasSuffix(e, "*") && strings.HasPrefix(name, strings.TrimSuffix(e, "*")) {
			return true
		}
	}
	return false
}

// refused is a pull or removal the grant or the session refuses.
func refused(format string, args ...any) error {
	return diag.New(diag.RunInstall, diag.Pos{}, "capabilities.install", fmt.Sprintf(format, args...))
}

// codeOf is the diagnostic code a failed pull or removal reports.
func codeOf(err error) diag.Code {
	if c, ok := store.CodeOf(err); ok {
		return c
	}
	return diag.RunInstall
}

// errText is a refusal as the model or a script reads it: its code first.
func errText(err error) string {
	var d diag.Diagnostic
	if errors.As(err, &d) {
		return string(d.Code) + ": " + d.Msg
	}
	return string(codeOf(err)) + ": " + err.Error()
}

// pull installs name at version ("" for the newest that fits) into the
// running session: checked against the grant for its kind, resolved from
// the project store then the global store and verified (store.Pull),
// pinned in murmur.lock with origin runtime, laid out under the runtime
// directory's tools/<name>/, and added to the inventory — callable at
// once, offered to the model as inference.tool_refresh says (at its next
// call when byAgent). by names the puller in the trace.
func (in *installs) pull(ctx context.Context, name, version string, byAgent bool) (*pulledArtifact, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	p, from, err := in.pullLocked(ctx, name, version, byAgent)
	f := map[string]any{"action": "pull", "artifact": name, "by": by(byAgent)}
	if err != nil {
		f["status"], f["code"], f["reason"] = "refused", string(codeOf(err)), err.Error()
		if version != "" {
			f["version"] = version
		}
	} else {
		f["status"], f["version"], f["role"], f["tool"], f["from"] = "installed", p.version, p.role, p.tool, from
	}
	in.emit(f)
	return p, err
}

func by(byAgent bool) string {
	if byAgent {
		return "agent"
	}
	return "script"
}

func (in *installs) emit(f map[string]any) {
	if in.events != nil {
		in.events.Emit(event.Event{Type: "artifact_install", Fields: f})
	}
}

func (in *installs) pullLocked(ctx context.Context, name, version string, byAgent bool) (*pulledArtifact, string, error) {
	if in.inv == nil {
		return nil, "", errors.New("the session is not open")
	}
	if !admits(in.grant.Skill, name) && !admits(in.grant.Tool, name) {
		return nil, "", refused("%s is admitted by no entry of capabilities.install.skill %v or capabilities.install.tool %v; add it there to let this capsule pull it", name, in.grant.Skill, in.grant.Tool)
	}
	if in.declared[name] {
		return nil, "", refused("%s is declared in this capsule's artifacts: and installed at launch; a pull does not replace it", name)
	}
	if p, ok := in.pulled[name]; ok {
		return nil, "", refused("%s@%s is already pulled into this session; remove it first to pull another version", name, p.version)
	}
	if lock, err := artifact.LoadLock(in.project.LockPath()); err != nil {
		return nil, "", err
	} else if pin, ok := lock.Find(name); ok && pin.Origin != artifact.OriginRuntime {
		return nil, "", refused("murmur.lock pins %s@%s with origin %s (mur install's); a pull does not take over an operator pin", name, pin.Version, pin.Origin)
	}
	bare := bareName(name)
	if _, taken := in.inv.Lookup(bare); taken {
		return nil, "", refused("the session already has a tool named %q; a pulled artifact is offered by its bare name, so %s cannot be pulled beside it", bare, name)
	}
	var own *manifest.Artifact
	check := func(f *store.Fetched, pkg *artifact.Package) error {
		a, err := in.admit(f, pkg)
		own = a
		return err
	}
	if in.sources && in.scopes == nil {
		open, err := store.OpenFromConfig(in.project.Dir)
		if err != nil {
			return nil, "", err
		}
		if in.scopes, err = store.ScopeSources(open.Config.Sources); err != nil {
			return nil, "", err
		}
	}
	got, err := store.PullFrom(ctx, in.project, in.global, in.scopes, name, version, check)
	if err != nil {
		if errors.Is(err, artifact.ErrName) {
			return nil, "", refused("%v", err)
		}
		return nil, "", err
	}
	p := &pulledArtifact{name: name, version: got.Ref.Version, role: own.Runtime, execution: own.ExecutionType(), tool: bare, own: own}
	if got.OwnerID != 0 {
		p.unstored = &got
	}
	t, err := in.toolOf(ctx, p)
	if err == nil {
		err = in.inv.Add(t, byAgent)
	}
	if err != nil {
		// Nothing of a pull that cannot be offered stays pinned.
		store.Unpull(in.project, name)
		os.RemoveAll(in.toolDir(bare))
		return nil, "", err
	}
	in.pulled[name] = p
	if in.rewrite != nil {
		in.rewrite()
	}
	return p, got.From, nil
}

// admit is the pull's check of the fetched package, before anything is
// written: its own murmur.yaml's role must be admitted by the grant's list
// for its kind (skill or tool) and match its payload; drivers and hooks
// are never pulled.
func (in *installs) admit(f *store.Fetched, pkg *artifact.Package) (*manifest.Artifact, error) {
	mf, err := pkg.ReadFile("murmur.yaml")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Ref, err)
	}
	a, ds := manifest.ParseArtifact(f.Ref.String()+"!murmur.yaml", mf)
	if ds.HasErrors() || a == nil {
		return nil, refused("%s: its murmur.yaml does not parse: %v", f.Ref, ds.Errors())
	}
	name := f.Ref.Full()
	switch a.Runtime {
	case manifest.RoleSkill:
		if !admits(in.grant.Skill, name) {
			return a, refused("%s is a skill, and no entry of capabilities.install.skill %v admits it (an entry admits only its own kind)", f.Ref, in.grant.Skill)
		}
		if !slices.ContainsFunc(pkg.Names(), func(n string) bool { return strings.EqualFold(n, "skill.md") }) {
			return a, refused("%s declares runtime: skill but its payload has no skill.md", f.Ref)
		}
	case manifest.RoleTool:
		if !admits(in.grant.Tool, name) {
			return a, refused("%s is a tool, and no entry of capabilities.install.tool %v admits it (an entry admits only its own kind)", f.Ref, in.grant.Tool)
		}
		switch a.ExecutionType() {
		case manifest.ExecWasm:
			if !slices.ContainsFunc(pkg.Names(), func(n string) bool { return strings.HasSuffix(n, ".wasm") }) {
				return a, refused("%s declares runtime: tool but its payload has no component (.wasm)", f.Ref)
			}
		case manifest.ExecNative:
			// A native tool runs in the session's sandbox, whose Landlock
			// rules (what may execute) are fixed when it starts.
			return a, refused("%s is a native tool; this build of mur pulls WASM tools and skills into a running session, not native tools — declare it in artifacts: instead", f.Ref)
		default:
			return a, refused("%s declares runtime: tool with execution %s, which is not a tool payload", f.Ref, a.ExecutionType())
		}
		if a.ProviderTool != nil || a.ProviderToolProblem != "" {
			if err := in.providerTerms(name, a); err != nil {
				return a, err
			}
		}
	default:
		return a, refused("%s is a runtime: %s artifact; only skills and tools are pulled, never drivers or hooks", f.Ref, a.Runtime)
	}
	return a, nil
}

// providerTerms refuses a provider tool on the terms a launch refuses a
// declared one (manifest.CheckProviderTools): a containment floor below
// sealed (E-CAP-003), a model that is vision: false (E-RUN-057), or a
// malformed provider_tool: block (E-RUN-058).
func (in *installs) providerTerms(name string, a *manifest.Artifact) error {
	c := *in.l.c
	c.Artifacts = append(slices.Clip(c.Artifacts), manifest.ArtifactRef{Name: name, Version: a.Version, Runtime: manifest.RoleTool})
	floor := ""
	if c.Capabilities != nil {
		floor = c.Capabilities.Containment
	}
	over := pulledOver{name: name, a: a}
	if in.l.res != nil {
		over.staged = in.l.res
	}
	ds := manifest.CheckProviderTools(&c, over, floor)
	if errs := ds.Errors(); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// pulledOver answers the launch's staged artifacts and one being pulled.
type pulledOver struct {
	staged manifest.Installed
	name   string
	a      *manifest.Artifact
}

func (p pulledOver) Artifact(name string) (*manifest.Artifact, bool) {
	if name == p.name {
		return p.a, true
	}
	if p.staged == nil {
		return nil, false
	}
	return p.staged.Artifact(name)
}

// toolDir is where a pulled artifact's files are laid out for the agent.
func (in *installs) toolDir(bare string) string {
	return filepath.Join(in.dirs.Runtime(), "tools", bare)
}

// toolOf lays the pulled artifact's files out under the runtime
// directory's tools/<name>/ (a skill's read-only and not executable) and
// builds its inventory tool: a skill returns its skill.md; a WASM tool
// runs on the capsule's own grants, with no gateway and no per-artifact
// capabilities. Either is marked untrusted and its results fenced.
func (in *installs) toolOf(ctx context.Context, p *pulledArtifact) (agent.Tool, error) {
	var r *store.Resolved
	if p.unstored != nil {
		var err error
		if r, err = store.UnpackedResolved(*p.unstored, p.role); err != nil {
			return nil, err
		}
	} else {
		res, err := in.project.Resolve(ctx, []store.Entry{{Name: p.name, Version: p.version, Role: p.role}})
		if err != nil {
			return nil, err
		}
		r, _ = res.Get(p.name)
	}
	if err := layOut(in.toolDir(p.tool), r, p.role == manifest.RoleSkill); err != nil {
		return nil, err
	}
	var t agent.Tool
	switch p.role {
	case manifest.RoleSkill:
		text := ""
		for rel, host := range r.Files {
			if strings.EqualFold(filepath.Base(rel), "skill.md") {
				b, err := os.ReadFile(host)
				if err != nil {
					return nil, err
				}
				text = string(b)
			}
		}
		t = agent.NewSkill(p.tool, firstParagraph(p.own.Description, text), text)
	default:
		def, err := toolDef(p.name, p.own)
		if err != nil {
			return nil, err
		}
		file, err := componentFile(r, p.own)
		if err != nil {
			return nil, err
		}
		l := in.l
		g := grantFor(l.c, l.scope, p.name, nil, false, osGetenv)
		lc := &lazyComponent{rt: l.rt, wasm: file, id: componentID(r, file), g: g, dirs: l.dirs, host: func() *component.Host {
			return &component.Host{Input: &l.input, Messages: l.peerSender(), Shell: l.shellExecutor(), Tools: toolInvoker{}, Inference: l.loops.inferenceFor(origin("tool", p.name))}
		}}
		l.lazies = append(l.lazies, lc)
		t = wasmtool.Tool{D: def, R: lc}
	}
	t = untrusted{Tool: t, name: p.name}
	if len(in.l.hookList) > 0 {
		t = hookedTool{Tool: t, h: &in.l.holder}
	}
	return t, nil
}

// layOut copies a resolved artifact's files into dir; readOnly leaves
// them read-only and not executable (a skill's).
func layOut(dir string, r *store.Resolved, readOnly bool) error {
	prefix := "tools/" + bareName(r.Name) + "/"
	mode := fs.FileMode(0o644)
	if readOnly {
		mode = 0o444
	}
	rels := make([]string, 0, len(r.Files))
	for rel := range r.Files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		dst := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(rel, prefix)))
		if !strings.HasPrefix(dst, dir+string(filepath.Separator)) {
			return fmt.Errorf("%s: file %q lies outside tools/%s/", r.Name, rel, bareName(r.Name))
		}
		b, err := os.ReadFile(r.Files[rel])
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, mode); err != nil {
			return err
		}
		if err := os.Chmod(dst, mode); err != nil {
			return err
		}
	}
	return nil
}

// remove uninstalls an artifact this capsule pulled: out of the
// inventory, its tools/<name>/ and its murmur.lock pin. A declared
// artifact, an operator pin, a driver or hook, and anything the grant's
// entries do not admit are refused.
func (in *installs) remove(name string, byAgent bool) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	err := in.removeLocked(name, byAgent)
	f := map[string]any{"action": "remove", "artifact": name, "by": by(byAgent), "status": "removed"}
	if err != nil {
		f["status"], f["code"], f["reason"] = "refused", string(codeOf(err)), err.Error()
	}
	in.emit(f)
	return err
}

func (in *installs) removeLocked(name string, byAgent bool) error {
	if in.inv == nil {
		return errors.New("the session is not open")
	}
	if in.declared[name] {
		return refused("%s is declared in this capsule's artifacts:; a session removes only what it pulled", name)
	}
	if !admits(in.grant.Skill, name) && !admits(in.grant.Tool, name) {
		return refused("%s is admitted by no entry of capabilities.install.skill %v or capabilities.install.tool %v, which also govern removals", name, in.grant.Skill, in.grant.Tool)
	}
	p, ok := in.pulled[name]
	if !ok {
		return refused("%s was not pulled into this session; a session removes only what it pulled", name)
	}
	if _, err := store.Unpull(in.project, name); err != nil {
		if errors.Is(err, store.ErrNotPulled) {
			return refused("%v", err)
		}
		return err
	}
	in.inv.Remove(p.tool, byAgent)
	os.RemoveAll(in.toolDir(p.tool))
	delete(in.pulled, name)
	if in.rewrite != nil {
		in.rewrite()
	}
	return nil
}

// untrusted marks a pulled artifact's tool in the tool list and fences
// its results: the model is told that what it reads came from an artifact
// the capsule's author did not declare.
type untrusted struct {
	agent.Tool
	name string
}

func (u untrusted) Def() agent.ToolDef {
	d := u.Tool.Def()
	d.Description = strings.TrimSpace(fmt.Sprintf("[untrusted: %s was pulled while the session runs] %s", u.name, d.Description))
	return d
}

func (u untrusted) Call(ctx context.Context, input json.RawMessage) (agent.Result, error) {
	r, err := u.Tool.Call(ctx, input)
	if err == nil && r.Data != "" {
		r.Data = fmt.Sprintf("<untrusted-output artifact=%q>\n%s\n</untrusted-output>", u.name, r.Data)
	}
	return r, err
}

// pullTool is the agent's pull-artifact.
type pullTool struct{ in *installs }

func (t pullTool) Def() agent.ToolDef {
	return agent.ToolDef{Name: pullToolName, Kind: agent.KindRuntime,
		Description: fmt.Sprintf("Install a skill or tool into this session from the artifact stores, as capabilities.install admits (skill: %s; tool: %s). name is the full name <scope>/<name>; version is optional (the newest that fits). The installed artifact is in your tool list from your next call.",
			listOrNone(t.in.grant.Skill), listOrNone(t.in.grant.Tool)),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"<scope>/<name>"},"version":{"type":"string","description":"an exact version; omit for the newest that fits"}},"required":["name"]}`)}
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func (t pullTool) Call(ctx context.Context, input json.RawMessage) (agent.Result, error) {
	var a struct{ Name, Version string }
	if err := json.Unmarshal(input, &a); err != nil {
		return agent.Result{Status: agent.StatusFailed, Summary: errText(refused("pull-artifact's input is not {\"name\": ..., \"version\": ...}: %v", err))}, nil
	}
	p, err := t.in.pull(ctx, a.Name, a.Version, true)
	if err != nil {
		return agent.Result{Status: agent.StatusFailed, Summary: errText(err) + "\nNothing was installed."}, nil
	}
	return agent.Result{Status: agent.StatusPassed, Data: fmt.Sprintf("Installed %s@%s (%s) as the tool %s; it is in your tool list from your next call.", p.name, p.version, p.role, p.tool),
		Metadata: [][2]string{{agent.MetaStateEffect, "mutate"}, {agent.MetaResourceID, "artifact:" + p.name}}}, nil
}

// removeTool is the agent's remove-artifact.
type removeTool struct{ in *installs }

func (t removeTool) Def() agent.ToolDef {
	return agent.ToolDef{Name: removeToolName, Kind: agent.KindRuntime,
		Description: "Uninstall a skill or tool this session pulled with pull-artifact. name is its full name <scope>/<name>. Artifacts the capsule declares cannot be removed.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"<scope>/<name>"}},"required":["name"]}`)}
}

func (t removeTool) Call(_ context.Context, input json.RawMessage) (agent.Result, error) {
	var a struct{ Name string }
	if err := json.Unmarshal(input, &a); err != nil {
		return agent.Result{Status: agent.StatusFailed, Summary: errText(refused("remove-artifact's input is not {\"name\": ...}: %v", err))}, nil
	}
	if err := t.in.remove(a.Name, true); err != nil {
		return agent.Result{Status: agent.StatusFailed, Summary: errText(err) + "\nNothing was removed."}, nil
	}
	return agent.Result{Status: agent.StatusPassed, Data: fmt.Sprintf("Removed %s; it leaves your tool list from your next call.", a.Name),
		Metadata: [][2]string{{agent.MetaStateEffect, "mutate"}, {agent.MetaResourceID, "artifact:" + a.Name}}}, nil
}
