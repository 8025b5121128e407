package manifest

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/murmur/mur/internal/diag"
)

// posOf finds where field, or its nearest written parent, was written.
func (d *decoder) posOf(field string) diag.Pos {
	for f := field; f != ""; {
		if p, ok := d.pos[f]; ok {
			return p
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return diag.Pos{File: d.file}
}

func (d *decoder) add(code diag.Code, field, format string, args ...any) {
	d.diags = append(d.diags, diag.New(code, d.posOf(field), field, fmt.Sprintf(format, args...)))
}

func (d *decoder) written(field string) bool { _, ok := d.pos[field]; return ok }

// validate applies every rule that spans more than one field.
func validate(d *decoder, c *Capsule) {
	v := &validator{d: d, c: c}
	v.artifacts()
	v.capabilities()
	v.door()
	v.context()
	v.inference()
	v.lifecycle()
	v.exports()
	v.control()
	v.script()
}

type validator struct {
	d *decoder
	c *Capsule
}

func (v *validator) transportProcess() bool { return v.c.Inference.IsProcess() }

// driverChoices returns the artifact names of the primary and alternate
// drivers under transport: http.
func (v *validator) driverChoices() map[string]bool {
	out := map[string]bool{}
	in := v.c.Inference
	if in == nil || in.IsProcess() {
		return out
	}
	if in.Driver != nil && in.Driver.Artifact != "" {
		out[in.Driver.Artifact] = true
	}
	for _, a := range in.Alternates {
		if a.Driver.Artifact != "" {
			out[a.Driver.Artifact] = true
		}
	}
	return out
}

func boolv(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

func (v *validator) artifacts() {
	d, c := v.d, v.c
	choices := v.driverChoices()
	seen := map[string]int{}
	var ceiling []NetEntry
	if c.Capabilities != nil && c.Capabilities.Network != nil {
		for _, e := range c.Capabilities.Network.Allow {
			if ne, err := ParseNetEntry(e); err == nil {
				ceiling = append(ceiling, ne)
			}
		}
	}
	for i, a := range c.Artifacts {
		p := fmt.Sprintf("artifacts[%d]", i)
		role := a.Role()
		if a.Name != "" {
			if a.Source != "" {
				if strings.Contains(a.Name, "/") {
					d.add(diag.ManInvalid, p+".name", "a source: entry is not installed, so it takes no scope: drop the scope: name it '%s'", bareOf(a.Name))
				} else if !ValidBareName(a.Name) {
					d.add(diag.ManInvalid, p+".name", "%q is not a valid name: lowercase letters, digits and inner hyphens, at most 100 characters", a.Name)
				}
			} else if !strings.Contains(a.Name, "/") {
				d.add(diag.ManInvalid, p+".name", "artifact %q has no scope; %s", a.Name, scopedHint(a.Name))
			} else if _, _, ok := SplitName(a.Name); !ok {
				d.add(diag.ManInvalid, p+".name", "%q is not a full artifact name <scope>/<name>: each part lowercase letters, digits and inner hyphens", a.Name)
			}
			bare := a.BareName()
			if j, dup := seen[bare]; dup {
				d.add(diag.CapDuplicateTool, p+".name", "%q has the same bare name %q as artifacts[%d] (%q); the bare name is the tool name the model calls, so it must be unique", a.Name, bare, j, c.Artifacts[j].Name)
			} else {
				seen[bare] = i
			}
		}
		if a.Source != "" && !boolv(a.LocalSource, role == RoleSkill) {
			d.add(diag.ManInvalid, p+".source", "artifact '%s' declares 'source:' but does not declare 'local_source: true' (runtime: %s)", a.Name, role)
		}
		if role == RoleSkill && a.Capabilities != nil {
			d.add(diag.ManInvalid, p+".capabilities", "is not recognized on runtime: skill: a skill runs no code to grant anything to; remove the block")
		}
		if a.Config != nil {
			if role == RoleSkill {
				d.add(diag.ManInvalid, p+".config", "is not recognized on runtime: skill; remove the block")
			} else {
				v.configShape(p+".config", a.Config)
			}
		}
		if role != RoleHook && d.written(p+".on_overflow") {
			d.add(diag.ManInvalid, p+".on_overflow", "is recognized only on runtime: hook, not on runtime: %s; remove it", role)
		}
		if a.Gateway != nil {
			v.gateway(i, a, choices)
		}
		if a.Capabilities != nil && role != RoleSkill {
			v.artifactCaps(p+".capabilities", a, ceiling)
		}
	}
}

func (v *validator) configShape(field string, r *Raw) {
	if !r.IsMapping() {
		what := "empty"
		if n := resolve(r.node); n != nil && !isNull(n) {
			what = kindName(n)
		}
		v.d.add(diag.CapConfigShape, field, "must be a mapping, not %s; omit the key to deliver no MURMUR_ARTIFACT_CONFIG", what)
		return
	}
	js, err := r.JSON()
	if err != nil {
		v.d.add(diag.CapConfigShape, field, "cannot travel as MURMUR_ARTIFACT_CONFIG: %v", err)
		return
	}
	if len(js) > 65536 {
		v.d.add(diag.CapConfigShape, field, "serializes to %d bytes of JSON, above the limit of 65536; shrink the block", len(js))
	}
}

func (v *validator) gateway(i int, a ArtifactRef, choices map[string]bool) {
	d, g := v.d, a.Gateway
	p := fmt.Sprintf("artifacts[%d].gateway", i)
	role := a.Role()
	switch {
	case role == RoleSkill:
		d.add(diag.ManInvalid, p, "is not accepted on runtime: skill: a skill sends no requests; remove the block")
	case role == RoleDriver && v.transportProcess():
		d.add(diag.ManInvalid, p, "is not accepted on a driver under transport: process: the harness holds its own credentials; remove the block")
	case role == RoleDriver && !choices[a.Name]:
		d.add(diag.ManInvalid, p, "is accepted on a driver only when inference.driver.artifact or an inference.alternates entry names it under transport: http; remove the block or name the driver there")
	}
	if d.written(p + ".endpoint") {
		if err := CheckEndpoint(g.Endpoint); err != nil {
			d.add(diag.ManInvalid, p+".endpoint", "artifact '%s': endpoint %q is rejected: %v", a.Name, g.Endpoint, err)
		}
	}
	keyless := boolv(g.Keyless, false)
	switch {
	case g.APIKey != nil && keyless:
		d.add(diag.ManInvalid, p+".keyless", "artifact '%s' writes both api_key and keyless: true; a keyless upstream takes no key: remove api_key, or remove keyless", a.Name)
	case !keyless && (g.APIKey == nil || strings.TrimSpace(*g.APIKey) == ""):
		d.add(diag.CapGatewayKey, p+".api_key", "artifact '%s' has a gateway with no api_key: write api_key: ${NAME} naming the credential, or keyless: true for an upstream that takes no key", a.Name)
	case g.APIKey != nil:
		if _, ref := CredentialRef(*g.APIKey); !ref {
			d.add(diag.SecLiteralSecret, p+".api_key", "artifact '%s' writes its key as a literal, so the manifest holds the secret; write api_key: ${NAME} and set credentials.NAME with mur config set -g", a.Name)
		}
	}
	if role == RoleTool || role == RoleHook {
		// Only the inference driver choices' gateways are metered.
		d.add(diag.SecUnmeteredGateway, p, "artifact '%s': only the inference drivers' gateways are metered by inference.max_session_tokens and spend.machine_tokens_per_day; this gateway's spend is not bounded", a.Name)
	}
	if ep, err := gatewayOrigin(g.Endpoint); err == nil {
		// Gateway requests are granted by the endpoint itself; an allow
		// entry naming the upstream only opens it to requests without the key.
		warn := func(prefix string, allow []string) {
			for j, e := range allow {
				if ne, err := ParseNetEntry(e); err == nil && ne.Covers(ep) {
					d.add(diag.SecGatewayAllowed, fmt.Sprintf("%s[%d]", prefix, j), "%q names the upstream of artifact '%s''s gateway; gateway requests need no allow entry, and this one lets requests reach that host without the gateway: remove it unless they must", e, a.Name)
				}
			}
		}
		if v.c.Capabilities != nil && v.c.Capabilities.Network != nil {
			warn("capabilities.network.allow", v.c.Capabilities.Network.Allow)
		}
		if a.Capabilities != nil && a.Capabilities.Network != nil {
			warn(fmt.Sprintf("artifacts[%d].capabilities.network.allow", i), a.Capabilities.Network.Allow)
		}
	}
}

func gatewayOrigin(endpoint string) (NetEntry, error) {
	if CheckEndpoint(endpoint) != nil {
		return NetEntry{}, fmt.Errorf("invalid endpoint")
	}
	i := strings.Index(endpoint, "://")
	rest := endpoint[i+3:]
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		rest = rest[:j]
	}
	return ParseNetEntry(endpoint[:i+3] + rest)
}

// artifactCaps checks a per-artifact capabilities block.
func (v *validator) artifactCaps(p string, a ArtifactRef, ceiling []NetEntry) {
	d, cp, role := v.d, a.Capabilities, a.Role()
	hook := role == RoleHook
	inertCode, inertWhy := diag.SecArtifactInert, "only network, filesystem and state apply to a tool or driver"
	if hook {
		inertCode, inertWhy = diag.SecHookInert, "only network, filesystem, state, task_io, conversation and limits.deadline_seconds govern a hook"
	}
	inert := func(key string) {
		d.add(inertCode, p+"."+key, "is a capsule-wide concern and does nothing on artifact '%s': %s", a.Name, inertWhy)
	}
	if cp.Shell != nil {
		inert("shell")
	}
	if cp.Spawn != nil {
		inert("spawn")
	}
	if cp.Env != nil {
		inert("env")
	}
	if cp.Resources != nil {
		inert("resources")
	}
	if cp.Containment != "" || d.written(p+".containment") {
		inert("containment")
	}
	if cp.Plan != nil {
		d.add(inertCode, p+".plan", "reaches nothing on an artifact entry: a plan is submitted by the agent; put capabilities.plan in the capsule-wide block")
	}
	if cp.PeerFetch != nil {
		inert("peer_fetch")
	}
	if cp.Install != nil {
		d.add(diag.ManInvalid, p+".install", "is capsule-wide only and refused on an artifacts[] entry; move it to the top-level capabilities block")
	}
	if cp.Limits != nil {
		if hook {
			for key, val := range map[string]*int64{"memory_bytes": cp.Limits.MemoryBytes, "table_elements": cp.Limits.TableElements, "instances": cp.Limits.Instances} {
				if val != nil {
					inert("limits." + key)
				}
			}
		} else {
			inert("limits")
		}
	}
	if cp.TaskIO != nil && !hook {
		d.add(diag.ManInvalid, p+".task_io", "is recognized only on a runtime: hook entry, not runtime: %s: nothing there could enforce it", role)
	}
	if cp.Conversation != nil && !hook {
		d.add(diag.ManInvalid, p+".conversation", "is recognized only on a runtime: hook entry, not runtime: %s", role)
	}
	if fs := cp.Filesystem; fs != nil {
		if fs.Records != nil && !hook {
			d.add(diag.ManInvalid, p+".filesystem.records", "is recognized only on a runtime: hook entry, not runtime: %s", role)
		} else if boolv(fs.Records, false) && fs.Scope != nil {
			d.add(diag.ManInvalid, p+".filesystem.records", "records: true mounts hooks/ in place of a scope; remove filesystem.scope or records")
		}
		if fs.Scope != nil {
			if why := relPathProblem(*fs.Scope); why != "" {
				d.add(diag.CapScope, p+".filesystem.scope", "%q %s", *fs.Scope, why)
			}
		}
		if fs.ReadOnly != nil {
			inert("filesystem.read_only")
		}
		if fs.WorkdirExec != nil {
			inert("filesystem.workdir_exec")
		}
	}
	if cp.State != nil && cp.State.Store != nil {
		if why := segmentProblem(*cp.State.Store); why != "" {
			d.add(diag.CapStateStore, p+".state.store", "%q %s: a store name is one directory under ~/.murmur/state/", *cp.State.Store, why)
		}
	}
	if cp.Network != nil {
		for j, e := range cp.Network.Allow {
			f := fmt.Sprintf("%s.network.allow[%d]", p, j)
			ne, err := ParseNetEntry(e)
			if err != nil {
				d.add(diag.CapNetworkEntry, f, "%v", err)
				continue
			}
			if hook {
				continue
			}
			covered := false
			for _, ce := range ceiling {
				if ce.Covers(ne) {
					covered = true
				}
			}
			if !covered {
				d.add(diag.SecNarrowDropped, f, "artifact '%s': %q is not inside the capsule-wide capabilities.network.allow, so it is dropped; narrowing only subtracts (write it at least as specific as the ceiling entry it sits under)", a.Name, e)
			}
		}
		if cp.Network.UnixSockets != nil {
			inert("network.unix_sockets")
		}
	}
}

var interpreters = map[string]bool{
	"bash": true, "sh": true, "zsh": true, "fish": true, "dash": true, "ksh": true,
	"python": true, "python3": true, "perl": true, "ruby": true, "node": true, "php": true, "lua": true, "tclsh": true,
}

func (v *validator) capabilities() {
	d, c := v.d, v.c
	cp := c.Capabilities
	if cp == nil {
		return
	}
	const p = "capabilities"
	if cp.Network != nil {
		for j, e := range cp.Network.Allow {
			if _, err := ParseNetEntry(e); err != nil {
				d.add(diag.CapNetworkEntry, fmt.Sprintf("%s.network.allow[%d]", p, j), "%v", err)
			}
		}
	}
	if cp.PeerFetch != nil {
		if cp.PeerFetch.Allow != nil && len(cp.PeerFetch.Allow) == 0 {
			d.add(diag.ManInvalid, p+".peer_fetch.allow", "is empty; an empty list is refused rather than read as deny: name at least one peer, or omit the peer_fetch block")
		}
		for j, e := range cp.PeerFetch.Allow {
			if _, err := ParseNetEntry(e); err != nil {
				d.add(diag.CapNetworkEntry, fmt.Sprintf("%s.peer_fetch.allow[%d]", p, j), "%v", err)
			}
		}
	}
	if fs := cp.Filesystem; fs != nil {
		if fs.Scope != nil {
			if why := relPathProblem(*fs.Scope); why != "" {
				d.add(diag.CapScope, p+".filesystem.scope", "%q %s", *fs.Scope, why)
			}
		}
		for j, e := range fs.ReadOnly {
			if why := relPathProblem(e); why != "" {
				d.add(diag.CapReadOnly, v.readOnlyField(j), "%q %s", e, why)
			}
		}
		if boolv(fs.WorkdirExec, false) {
			d.add(diag.SecWorkdirExec, p+".filesystem.workdir_exec", "true lets anything the capsule writes into its work, temporary or home folder run, makes shell.allow unenforceable there and caps containment at advisory; set it only for compile-and-run workflows")
		}
		if fs.Records != nil {
			d.add(diag.ManInvalid, p+".filesystem.records", "is recognized only on a runtime: hook entry, not in the capsule-wide block")
		}
	}
	allowed := map[string]bool{}
	if sh := cp.Shell; sh != nil {
		if len(sh.Allow) == 0 {
			d.add(diag.ManInvalid, p+".shell.allow", "is empty: a shell block must allow at least one binary; omit the block to allow none")
		}
		for j, b := range sh.Allow {
			if b == "" || strings.ContainsAny(b, "/\\ \t\n") || b == "." || b == ".." {
				d.add(diag.ManInvalid, fmt.Sprintf("%s.shell.allow[%d]", p, j), "%q is not a bare binary name: name it bare (such as bash) and put its directory on PATH for mur run, e.g. PATH=/opt/uv/bin:$PATH mur run", b)
			}
			allowed[b] = true
		}
		interp := map[string]bool{}
		for j, ir := range sh.InterpreterRuntime {
			f := fmt.Sprintf("%s.shell.interpreter_runtime[%d]", p, j)
			if ir.Binary != "" && !allowed[ir.Binary] {
				d.add(diag.ManInvalid, f+".binary", "%q must already appear in capabilities.shell.allow: interpreter_runtime widens an existing exec grant and never grants exec", ir.Binary)
			}
			interp[ir.Binary] = true
			d.add(diag.SecInterpreterRuntime, f, "grants %q host directories outside the workdir and ties the capsule to this image's layout; where the command has a module form, allowlist the interpreter and invoke the module through it", ir.Binary)
		}
		for j, sr := range sh.StagedRuntime {
			f := fmt.Sprintf("%s.shell.staged_runtime[%d]", p, j)
			if sr.Binary != "" && !allowed[sr.Binary] {
				d.add(diag.ManInvalid, f+".binary", "%q must already appear in capabilities.shell.allow: staged_runtime never grants exec", sr.Binary)
			}
			if interp[sr.Binary] {
				d.add(diag.ManInvalid, f+".binary", "%q also has an interpreter_runtime grant; a binary takes one or the other", sr.Binary)
			}
		}
		if len(sh.StagedRuntime) > 0 && cp.Containment != "sealed" {
			d.add(diag.CapStagedRuntimeFloor, p+".shell.staged_runtime", "requires an effective sealed containment floor; declare capabilities.containment: sealed")
		}
	}
	if fs := cp.Filesystem; fs != nil && len(fs.ReadOnly) > 0 {
		for j, b := range cp.shellAllow() {
			if interpreters[b] {
				d.add(diag.SecReadOnlyInterpreter, fmt.Sprintf("%s.shell.allow[%d]", p, j), "read_only is advisory against %q: an interpreter's own file I/O cannot be identified as a write before it runs", b)
			}
		}
	}
	if cp.Env != nil {
		var shaped []string
		for j, name := range cp.Env.Allow {
			f := fmt.Sprintf("%s.env.allow[%d]", p, j)
			if pat, ok := matchesBackstop(name, stripEnv(cp)); ok {
				d.add(diag.CapEnvCredential, f, "%q matches %q, which is stripped from every environment the runtime builds; remove it and give the artifact its key through a gateway: block", name, pat)
			} else if CredentialShaped(name) {
				shaped = append(shaped, name)
			}
		}
		if len(shaped) > 0 {
			verb := "look"
			if len(shaped) == 1 {
				verb = "looks"
			}
			d.add(diag.SecEnvCredentialShaped, p+".env.allow", "%s %s credential-shaped (a name containing api_key, token, secret or password, or with a segment such as KEY, PASS, CREDENTIALS, DSN or AUTH) and reach every WASM component; pass keys through a gateway: block instead", quoteList(shaped), verb)
		}
	}
	if cp.Conversation != nil {
		d.add(diag.SecCapsuleConversation, p+".conversation", "reaches nothing in the capsule-wide block: no artifact can read the conversation record; put conversation.read on the hook entry that needs it")
	}
	if cp.State != nil {
		d.add(diag.SecCapsuleState, p+".state", "reaches nothing in the capsule-wide block: no store is created; put state on the tool, driver or hook entry that needs it")
	}
	if cp.TaskIO != nil {
		d.add(diag.ManInvalid, p+".task_io", "is recognized only on a runtime: hook entry, not in the capsule-wide block: nothing there could enforce it")
	}
	if in := cp.Install; in != nil {
		v.install(in)
	}
	if sp := cp.Spawn; sp != nil {
		v.spawn(sp)
	}
}

func (c *Capabilities) shellAllow() []string {
	if c == nil || c.Shell == nil {
		return nil
	}
	return c.Shell.Allow
}

// readOnlyField maps an index of the kept read_only entries back to the
// written index (blank entries were dropped at parse).
func (v *validator) readOnlyField(kept int) string {
	idx := kept
	if fs := v.c.Capabilities.Filesystem; kept < len(fs.roIdx) {
		idx = fs.roIdx[kept]
	}
	return fmt.Sprintf("capabilities.filesystem.read_only[%d]", idx)
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "'" + x + "'"
	}
	return strings.Join(q, ", ")
}

var (
	installEntryRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?/(\*|[a-z0-9][a-z0-9-]*\*|[a-z0-9]([a-z0-9-]*[a-z0-9])?)$`)
	installBareRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*\*?$`)
)

func (v *validator) install(in *Install) {
	d := v.d
	const p = "capabilities.install"
	if v.transportProcess() {
		d.add(diag.ManInvalid, p, "is refused under transport: process: the harness owns its tool list, so a pulled artifact could never reach it")
	}
	if len(in.Skill) == 0 && len(in.Tool) == 0 {
		d.add(diag.ManInvalid, p, "names no entry in skill or tool; omit the block to grant no install")
	}
	for _, kind := range []struct {
		key     string
		entries []string
	}{{"skill", in.Skill}, {"tool", in.Tool}} {
		for j, e := range kind.entries {
			f := fmt.Sprintf("%s.%s[%d]", p, kind.key, j)
			switch {
			case e == "*" || installEntryRE.MatchString(e) && len(bareOf(e)) <= 101:
			case !strings.Contains(e, "/") && installBareRE.MatchString(e):
				d.add(diag.ManInvalid, f, "%q has no scope; %s", e, scopedHint(strings.TrimSuffix(e, "*")+map[bool]string{true: "*", false: ""}[strings.HasSuffix(e, "*")]))
			default:
				d.add(diag.ManInvalid, f, "%q is not an install entry: write <scope>/<name>, <scope>/<prefix>*, <scope>/* or *", e)
			}
		}
	}
	if in.From != nil {
		seen := map[string]bool{}
		ok := len(in.From) > 0
		for _, f := range in.From {
			if (f != "stores" && f != "sources") || seen[f] {
				ok = false
			}
			seen[f] = true
		}
		if !ok || !seen["stores"] {
			d.add(diag.ManInvalid, p+".from", "must be [stores] or [stores, sources], not %v", in.From)
		}
	}
}

func (v *validator) spawn(sp *Spawn) {
	d := v.d
	const p = "capabilities.spawn"
	bare := map[string]int{}
	full := map[string]bool{}
	for j, e := range sp.Allow {
		f := fmt.Sprintf("%s.allow[%d]", p, j)
		if !strings.Contains(e, "/") {
			d.add(diag.ManInvalid, f, "capsule %q has no scope; %s", e, scopedHint(e))
			continue
		}
		if _, _, ok := SplitName(e); !ok {
			d.add(diag.ManInvalid, f, "%q is not a full capsule name <scope>/<name>", e)
			continue
		}
		if k, dup := bare[bareOf(e)]; dup {
			d.add(diag.ManInvalid, f, "%q has the same bare name as %s.allow[%d]; delegate-task offers each capsule by its bare name, so they must differ", e, p, k)
		}
		bare[bareOf(e)] = j
		full[e] = true
	}
	seen := map[string]bool{}
	for j, e := range sp.WorkdirSnapshot {
		f := fmt.Sprintf("%s.workdir_snapshot[%d]", p, j)
		switch {
		case !strings.Contains(e, "/"):
			d.add(diag.ManInvalid, f, "capsule %q has no scope; %s", e, scopedHint(e))
		case seen[e]:
			d.add(diag.ManInvalid, f, "%q is listed twice; list each capsule once", e)
		case !full[e]:
			d.add(diag.ManInvalid, f, "%q is not in capabilities.spawn.allow; a snapshot is given only to a capsule this one may spawn", e)
		}
		seen[e] = true
	}
}

func (v *validator) door() {
	c := v.c
	if c.Network != nil && c.Network.Authentication != nil && c.Capabilities != nil && c.Capabilities.Spawn != nil && len(c.Capabilities.Spawn.Allow) > 0 {
		v.d.add(diag.ManInvalid, "network.authentication", "cannot be declared with a non-empty capabilities.spawn.allow: a delegated child posts its outcome to its parent's door and cannot be issued a token for it")
	}
}

func (v *validator) context() {
	cx := v.c.Context
	if cx == nil || cx.RecordStore == nil {
		return
	}
	if why := segmentProblem(*cx.RecordStore); why != "" {
		v.d.add(diag.CapRecordStore, "context.record_store", "%q %s: it names one directory under ~/.murmur/conversations/", *cx.RecordStore, why)
	}
}

// findArtifact resolves a reference by name exactly as written. On a
// miss, the message names an entry whose bare part matches.
func (v *validator) findArtifact(field, name string) (int, bool) {
	for i, a := range v.c.Artifacts {
		if a.Name == name {
			return i, true
		}
	}
	var matches []string
	for _, a := range v.c.Artifacts {
		if a.BareName() == bareOf(name) && a.Name != "" {
			matches = append(matches, a.Name)
		}
	}
	if len(matches) == 1 {
		v.d.add(diag.ManInvalid, field, "artifact '%s' is not declared in artifacts: (the declared '%s' has that name; refer to it as '%s')", name, matches[0], matches[0])
	} else {
		v.d.add(diag.ManInvalid, field, "artifact '%s' is not declared in artifacts:; declare it there or name a declared entry exactly as written", name)
	}
	return -1, false
}

func (v *validator) inference() {
	d, c := v.d, v.c
	in := c.Inference
	if in == nil {
		return
	}
	driver := "inference.driver.artifact names"
	if in.Driver != nil && in.Driver.Artifact != "" {
		driver = "'" + in.Driver.Artifact + "'"
	}
	if d.written("inference.endpoint") {
		d.add(diag.ManInvalid, "inference.endpoint", "was removed; set gateway.endpoint on the artifacts: entry %s instead", driver)
	}
	if d.written("inference.api_key") {
		d.add(diag.ManInvalid, "inference.api_key", "was removed; set gateway.api_key on the artifacts: entry %s instead", driver)
	}
	process := in.IsProcess()
	if in.Driver == nil {
		d.add(diag.ManInvalid, "inference.driver.artifact", "is required: name the runtime: driver entry of artifacts: that serves inference")
	} else if in.Driver.Artifact != "" {
		if i, ok := v.findArtifact("inference.driver.artifact", in.Driver.Artifact); ok {
			a := c.Artifacts[i]
			if a.Role() != RoleDriver {
				d.add(diag.ManInvalid, "inference.driver.artifact", "'%s' is declared with runtime: %s; the inference driver must be a runtime: driver entry", a.Name, a.Role())
			} else if process {
				for key, set := range map[string]bool{"gateway": a.Gateway != nil, "capabilities": a.Capabilities != nil, "config": a.Config != nil} {
					if set && key != "gateway" {
						d.add(diag.ManInvalid, fmt.Sprintf("artifacts[%d].%s", i, key), "a process driver is granted nothing and may carry no %s:; remove it", key)
					}
				}
			} else if a.Gateway == nil {
				d.add(diag.ManInvalid, fmt.Sprintf("artifacts[%d].gateway", i), "is required on the transport: http driver '%s': add gateway.endpoint and gateway.api_key naming its provider", a.Name)
			}
		}
	}
	if !process && in.Model == "" {
		d.add(diag.ManInvalid, "inference.model", "is required under transport: http: name the model the driver sends")
	}
	if process {
		for field, set := range map[string]bool{
			"inference.max_tokens": in.MaxTokens != nil, "inference.tool_refresh": d.written("inference.tool_refresh"),
			"inference.alternates": d.written("inference.alternates"), "inference.retry": in.Retry != nil,
		} {
			if set {
				why := "is not valid with transport: process"
				switch field {
				case "inference.retry":
					why += "; the harness retries its own provider calls"
				case "inference.tool_refresh":
					why += ": the harness owns its tool list"
				}
				d.add(diag.ManInvalid, field, "%s", why)
			}
		}
		if cp := in.Compaction; cp != nil {
			if cp.MaxTokens != nil {
				d.add(diag.ManInvalid, "inference.compaction.max_tokens", "is not valid with transport: process")
			}
			if cp.DriverConfig != nil {
				d.add(diag.ManInvalid, "inference.compaction.driver_config", "is not valid with transport: process")
			}
		}
	} else if in.Command != "" || d.written("inference.command") {
		d.add(diag.ManInvalid, "inference.command", "is not valid with transport: http; it names a harness binary for transport: process")
	}
	n := 0
	for _, set := range []bool{in.SystemPrompt != nil, in.SystemPromptFile != "", in.SystemPromptArtifact != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		d.add(diag.ManInvalid, "inference.system_prompt", "at most one of system_prompt, system_prompt_file and system_prompt_artifact may be set; keep one")
	}
	if name := in.SystemPromptArtifact; name != "" {
		if i, ok := v.findArtifact("inference.system_prompt_artifact", name); ok {
			a := c.Artifacts[i]
			if !boolv(a.PromptPayload, a.Role() == RoleSkill) {
				d.add(diag.ManInvalid, "inference.system_prompt_artifact", "'%s' does not declare prompt_payload: true; add it to its artifacts: entry to bind it as the system prompt", a.Name)
			}
		}
	}
	for j, f := range in.InstructionFiles {
		field := fmt.Sprintf("inference.instruction_files[%d]", j)
		if why := relPathProblem(f); why != "" || hasDotDot(f) {
			if why == "" {
				why = "has a .. component"
			}
			d.add(diag.ManInvalid, field, "%q %s: each entry must be a path relative to the work folder with no .. component", f, why)
		}
	}
	v.alternates()
}

func (v *validator) alternates() {
	d, c := v.d, v.c
	in := c.Inference
	if len(in.Alternates) == 0 || in.IsProcess() {
		return
	}
	ctl := c.Control
	if ctl == nil || !contains(ctl.Settings, "inference.driver") && !contains(ctl.AgentSettings, "inference.driver") {
		d.add(diag.ManInvalid, "inference.alternates", "requires inference.driver in control.settings or control.agent_settings: nothing could switch to an alternate otherwise")
	}
	primary := ""
	if in.Driver != nil {
		primary = in.Driver.Artifact
	}
	names := map[string]bool{}
	pairs := map[string]bool{primary + "\x00" + in.Model: true}
	for i, a := range in.Alternates {
		p := fmt.Sprintf("inference.alternates[%d]", i)
		switch {
		case a.Name == "primary":
			d.add(diag.ManInvalid, p+".name", "'primary' is reserved for inference.driver with inference.model; choose another name")
		case !altNameRE.MatchString(a.Name):
			d.add(diag.ManInvalid, p+".name", "%q must match ^[a-z][a-z0-9-]{0,62}$", a.Name)
		case names[a.Name]:
			d.add(diag.ManInvalid, p+".name", "%q is repeated; each alternate needs its own name", a.Name)
		}
		names[a.Name] = true
		if strings.TrimSpace(a.Model) == "" {
			d.add(diag.ManInvalid, p+".model", "is required and must not be empty")
		}
		if a.Driver.Artifact == "" {
			d.add(diag.ManInvalid, p+".driver.artifact", "is required: name a runtime: driver entry of artifacts:")
		} else if j, ok := v.findArtifact(p+".driver.artifact", a.Driver.Artifact); ok {
			e := c.Artifacts[j]
			if e.Role() != RoleDriver {
				d.add(diag.ManInvalid, p+".driver.artifact", "'%s' is declared with runtime: %s, not runtime: driver", e.Name, e.Role())
			} else if e.Gateway == nil && e.Name != primary {
				d.add(diag.ManInvalid, p+".driver.artifact", "'%s' has no gateway: on its artifacts: entry; an alternate's driver carries its own unless it is the primary's", e.Name)
			}
		}
		key := a.Driver.Artifact + "\x00" + a.Model
		if pairs[key] && a.Model != "" {
			d.add(diag.ManInvalid, p, "has the same driver and model as the primary or another alternate")
		}
		pairs[key] = true
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func (v *validator) lifecycle() {
	d, l := v.d, v.c.Lifecycle
	if l == nil {
		return
	}
	if l.TaskAcceptance == "queue" && l.QueueDepth != nil && *l.QueueDepth == 0 {
		d.add(diag.ManInvalid, "lifecycle.queue_depth", "must be at least 1 under task_acceptance: queue")
	}
	if dc := l.DoneCheck; dc != nil && dc.Command != "" {
		words, err := dc.Argv()
		switch {
		case err != nil:
			d.add(diag.ManInvalid, "lifecycle.done_check.command", "%v: close the quote", err)
		case len(words) == 0:
			d.add(diag.ManInvalid, "lifecycle.done_check.command", "must name a program")
		case !contains(v.c.Capabilities.shellAllow(), words[0]):
			d.add(diag.ManInvalid, "lifecycle.done_check.command", "runs '%s', which is not in capabilities.shell.allow; add it there or run an allowed program", words[0])
		}
	}
}

func (v *validator) exports() {
	d, e := v.d, v.c.Exports
	if e == nil || e.PeerFiles == nil {
		return
	}
	if l := v.c.Lifecycle; l != nil && l.AfterTask == "sleep" {
		if e.PeerFiles.MaxTTL == "" {
			d.add(diag.CapPeerTTL, "exports.peer_files.max_ttl", "is required under lifecycle.after_task: sleep, at most 15m")
		} else if ttl, err := ParseDuration(e.PeerFiles.MaxTTL, "smh"); err == nil && ttl.Minutes() > 15 {
			d.add(diag.CapPeerTTL, "exports.peer_files.max_ttl", "%s is above 15m, the most allowed under lifecycle.after_task: sleep", e.PeerFiles.MaxTTL)
		}
	}
}

func (v *validator) control() {
	d, c := v.d, v.c
	ctl := c.Control
	if ctl == nil {
		return
	}
	if c.Inference == nil && (len(ctl.Settings) > 0 || len(ctl.Secrets) > 0 || len(ctl.AgentSettings) > 0) {
		d.add(diag.ManInvalid, "control", "requires an inference: block: only an agent capsule serves the control surface")
	}
	http := c.Inference != nil && !c.Inference.IsProcess()
	hasAlt := c.Inference != nil && len(c.Inference.Alternates) > 0
	settings := func(key string, list []string, accepted map[string]bool) {
		seen := map[string]bool{}
		for j, s := range list {
			f := fmt.Sprintf("control.%s[%d]", key, j)
			switch {
			case !accepted[s]:
				d.add(diag.ManInvalid, f, "'%s' is not a setting this list accepts", s)
			case seen[s]:
				d.add(diag.ManInvalid, f, "'%s' is listed twice", s)
			case !http:
				d.add(diag.ManInvalid, f, "'%s' is valid only under inference.transport: http", s)
			case s == "inference.driver" && !hasAlt:
				d.add(diag.ManInvalid, f, "'inference.driver' requires at least one inference.alternates entry to switch to")
			}
			seen[s] = true
		}
	}
	settings("settings", ctl.Settings, map[string]bool{"inference.max_tokens": true, "inference.driver": true})
	settings("agent_settings", ctl.AgentSettings, map[string]bool{"inference.driver": true})
	refs := map[string]bool{}
	primaryRef := ""
	for _, a := range c.Artifacts {
		if name, ok := a.Gateway.CredentialRef(); ok {
			refs[name] = true
			if http && c.Inference.Driver != nil && a.Name == c.Inference.Driver.Artifact {
				primaryRef = name
			}
		}
	}
	seen := map[string]bool{}
	for j, s := range ctl.Secrets {
		f := fmt.Sprintf("control.secrets[%d]", j)
		switch {
		case !credNameRE.MatchString(s):
			d.add(diag.ManInvalid, f, "'%s' is not a credential name: uppercase letters, digits and _, not starting with a digit", s)
		case seen[s]:
			d.add(diag.ManInvalid, f, "'%s' is listed twice", s)
		case s == primaryRef:
			d.add(diag.ManInvalid, f, "'%s' keys the configured inference driver's gateway, which a controller cannot supply; it is resolved at launch", s)
		case !refs[s]:
			d.add(diag.ManInvalid, f, "'%s' is not referenced by any artifact's gateway.api_key as ${%s}", s, s)
		}
		seen[s] = true
	}
}
