package manifest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/murmur/mur/internal/diag"
)

// Installed gives staging checks the manifests of installed artifacts, by
// the entry's name as written in artifacts: (such as murmur/driver-anthropic).
// The store implements it; tests use an in-memory map.
type Installed interface {
	Artifact(name string) (*Artifact, bool)
}

// InstalledMap is an in-memory Installed, keyed by full name.
type InstalledMap map[string]*Artifact

// Artifact implements Installed.
func (m InstalledMap) Artifact(name string) (*Artifact, bool) {
	a, ok := m[name]
	return a, ok
}

// CheckStaging runs every staging check that needs installed artifacts'
// own manifests. floor is the effective containment floor ("" for none,
// else advisory, scoped or sealed).
func CheckStaging(c *Capsule, inst Installed, floor string) diag.List {
	var ds diag.List
	ds = append(ds, CheckDrivers(c, inst)...)
	ds = append(ds, CheckGateways(c, inst)...)
	ds = append(ds, CheckNativeTools(c, inst)...)
	_, lim := ResolveLimits(c, inst)
	ds = append(ds, lim...)
	ds = append(ds, CheckProviderTools(c, inst, floor)...)
	ds = append(ds, CheckHooks(c, inst)...)
	ds = append(ds, CheckReadOnlyTools(c, inst)...)
	ds.Sort()
	return ds
}

func (c *Capsule) entry(name string) (int, *ArtifactRef) {
	for i := range c.Artifacts {
		if c.Artifacts[i].Name == name {
			return i, &c.Artifacts[i]
		}
	}
	return -1, nil
}

func (c *Capsule) diagAt(code diag.Code, field, format string, args ...any) diag.Diagnostic {
	return diag.New(code, c.posNear(field), field, fmt.Sprintf(format, args...))
}

func (c *Capsule) posNear(field string) diag.Pos {
	for f := field; f != ""; {
		if p, ok := c.pos[f]; ok {
			return p
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return diag.Pos{File: c.File}
}

// CheckDrivers refuses a named driver that is not installed (E-RUN-006).
func CheckDrivers(c *Capsule, inst Installed) diag.List {
	var ds diag.List
	in := c.Inference
	if in == nil {
		return nil
	}
	check := func(field, name string) {
		if name == "" {
			return
		}
		if _, e := c.entry(name); e == nil || e.Source != "" {
			return
		}
		if _, ok := inst.Artifact(name); !ok {
			ds = append(ds, c.diagAt(diag.RunNotInstalled, field, "driver '%s' is named but not installed; run mur install", name))
		}
	}
	if in.Driver != nil {
		check("inference.driver.artifact", in.Driver.Artifact)
	}
	for i, a := range in.Alternates {
		check(fmt.Sprintf("inference.alternates[%d].driver.artifact", i), a.Driver.Artifact)
	}
	return ds
}

// CheckGateways refuses a gateway: entry whose artifact has no usable
// upstream_auth: (E-RUN-025) or is a native tool (E-CAP-017).
func CheckGateways(c *Capsule, inst Installed) diag.List {
	var ds diag.List
	for i, e := range c.Artifacts {
		if e.Gateway == nil {
			continue
		}
		a, ok := inst.Artifact(e.Name)
		if !ok {
			continue
		}
		field := fmt.Sprintf("artifacts[%d].gateway", i)
		if e.Role() == RoleTool && a.IsNative() {
			ds = append(ds, c.diagAt(diag.CapGatewayNative, field, "'%s' is a native tool; a gateway: is accepted only on a WASM tool, hook or driver: remove the block", e.Name))
		}
		switch {
		case a.HasInferenceAuth:
			ds = append(ds, c.diagAt(diag.RunUpstreamAuth, field, "%s declares inference_auth:, the former name of upstream_auth:; rebuild it with the block renamed", a.ID()))
		case a.UpstreamAuth == nil:
			ds = append(ds, c.diagAt(diag.RunUpstreamAuth, field, "%s has no upstream_auth: block, so the runtime cannot tell how its upstream takes the key; the artifact must declare one", a.ID()))
		case a.UpstreamAuthProblem != "":
			ds = append(ds, c.diagAt(diag.RunUpstreamAuth, field, "%s: %s", a.ID(), a.UpstreamAuthProblem))
		}
	}
	return ds
}

// CheckNativeTools warns W-SEC-008 for each per-artifact capability a
// native tool cannot honour: only state applies to it, because a native
// tool runs under the capsule-wide filesystem, network and shell grants.
func CheckNativeTools(c *Capsule, inst Installed) diag.List {
	var ds diag.List
	for i, e := range c.Artifacts {
		if e.Role() != RoleTool || e.Capabilities == nil {
			continue
		}
		a, ok := inst.Artifact(e.Name)
		if !ok || !a.IsNative() {
			continue
		}
		cp := e.Capabilities
		for key, set := range map[string]bool{"network": cp.Network != nil, "filesystem": cp.Filesystem != nil} {
			if set {
				ds = append(ds, c.diagAt(diag.SecArtifactInert, fmt.Sprintf("artifacts[%d].capabilities.%s", i, key), "'%s' is a native tool: only state applies to it, and it runs under the capsule-wide capabilities.filesystem, capabilities.network and capabilities.shell.allow; this block does not narrow them", e.Name))
			}
		}
	}
	ds.Sort()
	return ds
}

// ChoiceLimits are one driver choice's resolved limits, as session_start
// records them in model_limits and mur doctor --json prints them; the
// names are the spec's (Output cap, Context window, Input ceiling, Input
// budget). Zero means "none".
type ChoiceLimits struct {
	Choice string `json:"choice"` // primary or an alternate's name
	Driver string `json:"driver"`
	Model  string `json:"model"`
	// OutputCap is 0 when unresolved (E-RUN-052).
	OutputCap       int64  `json:"output_cap"`
	OutputCapSource string `json:"output_cap_source"`
	Window          int64  `json:"context_window,omitempty"`
	WindowSource    string `json:"context_window_source,omitempty"`
	Ceiling         int64  `json:"input_ceiling,omitempty"`
	CeilingSource   string `json:"input_ceiling_source,omitempty"`
	// Budget is min(ceiling, window − cap), a tie going to the ceiling;
	// 0 when there is no window.
	Budget int64  `json:"input_budget,omitempty"`
	Basis  string `json:"input_budget_basis,omitempty"`
}

// Where a limit came from, and the basis of an input budget.
const (
	SourceMaxTokens    = "inference.max_tokens"
	SourceContext      = "context.max_tokens"
	SourceTableOutput  = "models.max_output_tokens"
	SourceTableWindow  = "models.context_window"
	SourceTableInput   = "models.max_input_tokens"
	BasisInputCeiling  = "max_input_tokens"
	BasisWindowLessCap = "context_window_less_output_cap"
	PrimaryChoice      = "primary"
)

// ResolveLimits resolves each driver choice's output cap, window and input
// budget under transport: http, with E-RUN-052, E-RUN-054, E-RUN-055 and
// W-RUN-009 as the spec states them.
func ResolveLimits(c *Capsule, inst Installed) ([]ChoiceLimits, diag.List) {
	in := c.Inference
	if in == nil || in.IsProcess() || in.Driver == nil {
		return nil, nil
	}
	var ds diag.List
	var out []ChoiceLimits
	var ctxMax *int64
	if c.Context != nil {
		ctxMax = c.Context.MaxTokens
	}
	type choice struct{ name, driver, model, field string }
	choices := []choice{{PrimaryChoice, in.Driver.Artifact, in.Model, "inference.driver.artifact"}}
	for i, a := range in.Alternates {
		choices = append(choices, choice{a.Name, a.Driver.Artifact, a.Model, fmt.Sprintf("inference.alternates[%d]", i)})
	}
	tables := map[string]map[string]ModelLimits{}
	for _, ch := range choices {
		a, ok := inst.Artifact(ch.driver)
		if !ok {
			continue
		}
		if a.ModelsProblem != "" {
			ds = append(ds, c.diagAt(diag.RunModels, ch.field, "driver %s has a malformed models: block: %s", a.ID(), a.ModelsProblem))
			continue
		}
		tables[ch.driver] = a.Models
		ml, listed := a.Models[ch.model]
		cl := ChoiceLimits{Choice: ch.name, Driver: ch.driver, Model: ch.model}
		switch {
		case in.MaxTokens != nil:
			cl.OutputCap, cl.OutputCapSource = *in.MaxTokens, SourceMaxTokens
		case listed:
			cl.OutputCap, cl.OutputCapSource = ml.MaxOutputTokens, SourceTableOutput
		default:
			ds = append(ds, c.diagAt(diag.RunModels, ch.field, "driver choice '%s' (model '%s' on driver '%s') has no output cap: the driver's models: table does not list the model; set inference.max_tokens", ch.name, ch.model, ch.driver))
		}
		switch {
		case ctxMax != nil:
			cl.Window, cl.WindowSource = *ctxMax, SourceContext
		case listed:
			cl.Window, cl.WindowSource = ml.ContextWindow, SourceTableWindow
		}
		if listed && ml.MaxInputTokens != nil {
			cl.Ceiling, cl.CeilingSource = *ml.MaxInputTokens, SourceTableInput
		}
		if !listed && !(in.MaxTokens != nil && ctxMax != nil) {
			ds = append(ds, c.diagAt(diag.RunModelUnlisted, ch.field, "model '%s' is not in driver '%s''s models: table; its limits come from the manifest alone (set inference.max_tokens and context.max_tokens to silence this)", ch.model, ch.driver))
		}
		if cl.Window > 0 && cl.OutputCap > 0 && cl.OutputCap >= cl.Window {
			ds = append(ds, c.diagAt(diag.RunNoInputBudget, ch.field, "driver choice '%s': output cap %d is at or above the context window %d (ceiling %s), leaving no input budget; lower inference.max_tokens or raise context.max_tokens", ch.name, cl.OutputCap, cl.Window, ceilingText(cl.Ceiling)))
		} else {
			cl.Budget, cl.Basis = budget(cl)
		}
		out = append(out, cl)
	}
	if cm := in.Compaction; cm != nil && cm.MaxTokens != nil {
		model := cm.Model
		if model == "" {
			model = in.Model
		}
		if t, ok := tables[in.Driver.Artifact]; ok {
			ml, listed := t[model]
			if listed && *cm.MaxTokens > ml.MaxOutputTokens {
				ds = append(ds, c.diagAt(diag.RunCompactionCap, "inference.compaction.max_tokens", "%d is above the %d max_output_tokens driver '%s' declares for compaction model '%s'", *cm.MaxTokens, ml.MaxOutputTokens, in.Driver.Artifact, model))
			}
			var window int64
			if ctxMax != nil {
				window = *ctxMax
			} else if listed {
				window = ml.ContextWindow
			}
			if window > 0 && *cm.MaxTokens >= window {
				ds = append(ds, c.diagAt(diag.RunNoInputBudget, "inference.compaction.max_tokens", "%d is at or above compaction model '%s''s window %d, leaving compaction calls no input budget", *cm.MaxTokens, model, window))
			}
		}
	}
	return out, ds
}

func ceilingText(c int64) string {
	if c == 0 {
		return "none"
	}
	return fmt.Sprint(c)
}

// budget is a choice's input budget and its basis; with no window there
// is none (spec 004: compaction does not run and no seed budget applies).
func budget(cl ChoiceLimits) (int64, string) {
	if cl.Window == 0 {
		return 0, ""
	}
	w := cl.Window - cl.OutputCap
	if cl.Ceiling > 0 && cl.Ceiling <= w {
		return cl.Ceiling, BasisInputCeiling
	}
	return w, BasisWindowLessCap
}

var containmentRank = map[string]int{"": 0, "advisory": 1, "scoped": 2, "sealed": 3}

// CheckProviderTools makes the provider-tool checks: a stored block that
// is malformed (E-RUN-058), a floor below sealed (E-CAP-003), and a
// transport: http choice whose model is vision: false (E-RUN-057).
func CheckProviderTools(c *Capsule, inst Installed, floor string) diag.List {
	var ds diag.List
	var computer []string
	for i, e := range c.Artifacts {
		if e.Role() != RoleTool {
			continue
		}
		a, ok := inst.Artifact(e.Name)
		if !ok {
			continue
		}
		field := fmt.Sprintf("artifacts[%d]", i)
		if a.ProviderToolProblem != "" {
			ds = append(ds, c.diagAt(diag.RunProviderTool, field, "%s has a malformed provider_tool: block: %s", a.ID(), a.ProviderToolProblem))
			continue
		}
		if a.ProviderTool != nil {
			computer = append(computer, e.Name)
		}
	}
	if len(computer) == 0 {
		return ds
	}
	if containmentRank[floor] < containmentRank["sealed"] {
		ds = append(ds, c.diagAt(diag.CapProviderToolFloor, "capabilities.containment", "provider tools %s operate a display and must run sealed; the effective containment floor is %q: declare capabilities.containment: sealed", quoteList(computer), floorText(floor)))
	}
	in := c.Inference
	if in == nil || in.IsProcess() || in.Driver == nil {
		return ds
	}
	type ch struct{ driver, model string }
	chs := []ch{{in.Driver.Artifact, in.Model}}
	for _, a := range in.Alternates {
		chs = append(chs, ch{a.Driver.Artifact, a.Model})
	}
	for _, x := range chs {
		a, ok := inst.Artifact(x.driver)
		if !ok {
			continue
		}
		if ml, ok := a.Models[x.model]; ok && ml.Vision != nil && !*ml.Vision {
			ds = append(ds, c.diagAt(diag.RunVision, "inference.model", "model '%s' on driver '%s' is vision: false, but the capsule declares computer tool %s, which returns screenshots", x.model, x.driver, quoteList(computer)))
		}
	}
	return ds
}

func floorText(f string) string {
	if f == "" {
		return "none"
	}
	return f
}

// hookPolicies is the binding → valid commit_policy table ("none" is
// always valid).
var hookPolicies = map[string]string{
	"on-stage": "write-manifests", "on-compaction": "replace-context", "on-task-end": "reopen-task",
	"on-task-start": "seed-context", "on-shell": "deny", "on-tool-call": "deny",
	"on-inference": "", "on-session-start": "", "on-session-end": "",
}

// CheckHooks checks each hook artifact's own contract fields against the
// binding table at staging, before any hook is compiled. The spec gives
// these refusals no code of their own; they are E-MAN-003.
func CheckHooks(c *Capsule, inst Installed) diag.List {
	var ds diag.List
	for i, e := range c.Artifacts {
		if e.Role() != RoleHook {
			continue
		}
		a, ok := inst.Artifact(e.Name)
		if !ok {
			continue
		}
		field := fmt.Sprintf("artifacts[%d]", i)
		bad := func(format string, args ...any) {
			ds = append(ds, c.diagAt(diag.ManInvalid, field, "hook %s invalid config: %s", a.ID(), fmt.Sprintf(format, args...)))
		}
		policy := a.CommitPolicy
		if policy == "" {
			policy = "none"
		}
		mode := a.ExecutionMode
		if mode == "" {
			mode = "blocking"
		}
		switch {
		case a.Binding == "" && policy == "deny":
			bad("commit_policy 'deny' requires an explicit binding: 'on-shell' or 'on-tool-call'; a hook with no binding: is dispatched at every event, including decision points it was not written to decide")
		case a.Binding != "" && policy != "none" && hookPolicies[a.Binding] != policy:
			if honors := hookPolicies[a.Binding]; honors != "" {
				bad("commit_policy '%s' is not valid for binding '%s'; binding '%s' honors commit_policy '%s'", policy, a.Binding, a.Binding, honors)
			} else {
				bad("commit_policy '%s' is not valid for binding '%s'; binding '%s' honors commit_policy 'none' only", policy, a.Binding, a.Binding)
			}
		}
		if mode == "async" && policy != "none" {
			bad("execution_mode 'async' requires commit_policy 'none': an async hook's output is always discarded")
		}
		if mode == "async" && a.Binding == "on-stage" {
			bad("binding 'on-stage' must be execution_mode 'blocking'")
		}
	}
	return ds
}

var (
	destKeys = map[string]bool{"dest": true, "destpath": true, "destination": true, "destinationpath": true, "targetpath": true, "outputpath": true, "outpath": true, "newpath": true, "to": true}
	pathKeys = map[string]bool{"path": true, "filepath": true, "filename": true, "file": true}
)

func foldKey(k string) string {
	return strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(k))
}

// CheckReadOnlyTools fires W-SEC-018 for each installed tool whose
// input_schema leaves path- or destination-shaped properties to the
// key-name rules while the capsule declares read_only.
func CheckReadOnlyTools(c *Capsule, inst Installed) diag.List {
	if c.Capabilities == nil || c.Capabilities.Filesystem == nil || len(c.Capabilities.Filesystem.ReadOnly) == 0 {
		return nil
	}
	var ds diag.List
	for i, e := range c.Artifacts {
		if e.Role() != RoleTool {
			continue
		}
		a, ok := inst.Artifact(e.Name)
		if !ok || a.InputSchema == nil {
			continue
		}
		schema, ok := schemaObject(a.InputSchema)
		if !ok {
			continue
		}
		if _, declared := schema["murmur-destinations"]; declared {
			continue
		}
		var props []string
		undeclaredProps(schema, "", &props)
		if len(props) > 0 {
			sort.Strings(props)
			ds = append(ds, c.diagAt(diag.SecReadOnlyUndeclared, fmt.Sprintf("artifacts[%d]", i), "tool '%s' leaves %s to the key-name rules under read_only; declare \"format\": \"murmur-destination\" or \"murmur-opaque\" on them, or \"murmur-destinations\" at the schema root", e.Name, quoteList(props)))
		}
	}
	return ds
}

func schemaObject(r *Raw) (map[string]any, bool) {
	var raw []byte
	if n := resolve(r.node); n != nil && n.Kind == yaml.ScalarNode {
		raw = []byte(n.Value)
	} else {
		js, err := r.JSON()
		if err != nil {
			return nil, false
		}
		raw = js
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

func undeclaredProps(schema map[string]any, prefix string, out *[]string) {
	props, _ := schema["properties"].(map[string]any)
	for name, v := range props {
		p, _ := v.(map[string]any)
		loc := name
		if prefix != "" {
			loc = prefix + "." + name
		}
		format, _ := p["format"].(string)
		typ, _ := p["type"].(string)
		if format == "murmur-destination" {
			continue
		}
		if format == "murmur-opaque" && (typ == "object" || typ == "array") {
			continue
		}
		k := foldKey(name)
		if destKeys[k] || pathKeys[k] {
			*out = append(*out, loc)
		}
		if typ == "object" {
			undeclaredProps(p, loc, out)
		}
		if items, ok := p["items"].(map[string]any); ok {
			undeclaredProps(items, loc+"[]", out)
		}
	}
}
