package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/murmur/mur/internal/diag"
)

// Execution types an artifact packages as.
const (
	ExecWasm   = "wasm"
	ExecNative = "native"
	ExecStatic = "static"
)

// Artifact is a decoded artifact manifest: an artifact's own murmur.yaml.
type Artifact struct {
	Name           string   `yaml:"name" json:"name"`
	Version        string   `yaml:"version" json:"version"`
	Description    string   `yaml:"description,omitempty" json:"description,omitempty"`
	Runtime        string   `yaml:"runtime" json:"runtime"`
	Implementation string   `yaml:"implementation,omitempty" json:"implementation,omitempty"`
	Execution      string   `yaml:"execution,omitempty" json:"execution,omitempty"`
	RequiresFiles  []string `yaml:"requires_files" json:"requires_files"`
	// InputSchema is the tool's JSON Schema as written: a string holding
	// JSON or a mapping. input is the older spelling.
	InputSchema  *Raw                   `yaml:"input_schema,omitempty" json:"input_schema,omitempty"`
	UpstreamAuth *UpstreamAuth          `yaml:"upstream_auth,omitempty" json:"upstream_auth,omitempty"`
	Models       map[string]ModelLimits `yaml:"models,omitempty" json:"models,omitempty"`
	ProviderTool *ProviderTool          `yaml:"provider_tool,omitempty" json:"provider_tool,omitempty"`
	// Hook contract fields.
	Binding       string `yaml:"binding,omitempty" json:"binding,omitempty"`
	ExecutionMode string `yaml:"execution_mode,omitempty" json:"execution_mode,omitempty"`
	CommitPolicy  string `yaml:"commit_policy,omitempty" json:"commit_policy,omitempty"`

	// HasInferenceAuth is set when the manifest still writes inference_auth:.
	HasInferenceAuth bool `yaml:"-" json:"-"`
	// UpstreamAuthProblem, ModelsProblem and ProviderToolProblem say why
	// the block is malformed ("" when sound), so staging can refuse a
	// stored artifact with its own code without re-parsing.
	UpstreamAuthProblem string `yaml:"-" json:"-"`
	ModelsProblem       string `yaml:"-" json:"-"`
	ProviderToolProblem string `yaml:"-" json:"-"`
	// RequiresFilesDeclared is false when requires_files took its default.
	RequiresFilesDeclared bool `yaml:"-" json:"-"`

	File string              `yaml:"-" json:"-"`
	pos  map[string]diag.Pos `yaml:"-"`
}

// Pos returns where field was written.
func (a *Artifact) Pos(field string) diag.Pos {
	if p, ok := a.pos[field]; ok {
		return p
	}
	return diag.Pos{File: a.File}
}

// ID is name@version, as refusals name a stored artifact.
func (a *Artifact) ID() string { return a.Name + "@" + a.Version }

// ExecutionType is the registry packaging type: execution when set
// (authoritative), else static for a skill, native for a native tool, and
// wasm for everything else.
func (a *Artifact) ExecutionType() string {
	if a.Execution != "" {
		return a.Execution
	}
	switch {
	case a.Runtime == RoleSkill:
		return ExecStatic
	case a.Runtime == RoleTool && a.Implementation == ExecNative:
		return ExecNative
	}
	return ExecWasm
}

// IsNative reports a tool with a native implementation.
func (a *Artifact) IsNative() bool { return a.ExecutionType() == ExecNative }

// UpstreamAuth says how the artifact's upstream takes its key.
type UpstreamAuth struct {
	Header string `yaml:"header" json:"header"`
	Value  string `yaml:"value" json:"value"`
}

// ModelLimits is one models.<id> entry of a driver.
type ModelLimits struct {
	MaxOutputTokens int64  `yaml:"max_output_tokens" json:"max_output_tokens"`
	ContextWindow   int64  `yaml:"context_window" json:"context_window"`
	MaxInputTokens  *int64 `yaml:"max_input_tokens,omitempty" json:"max_input_tokens,omitempty"`
	Vision          *bool  `yaml:"vision,omitempty" json:"vision,omitempty"`
}

// ProviderTool marks a tool the model's provider defines itself.
type ProviderTool struct {
	Kind          string `yaml:"kind" json:"kind"`
	DisplayWidth  int64  `yaml:"display_width" json:"display_width"`
	DisplayHeight int64  `yaml:"display_height" json:"display_height"`
}

// forbiddenAuthHeaders cannot carry the key: the transport owns them.
var forbiddenAuthHeaders = map[string]bool{
	"host": true, "origin": true, "referer": true, "cookie": true, "connection": true, "content-length": true,
	"content-type": true, "content-encoding": true, "expect": true, "keep-alive": true, "te": true,
	"trailer": true, "transfer-encoding": true, "upgrade": true,
}

// ErrArtifactManifest is the sentinel LoadArtifact wraps for a directory
// without a readable murmur.yaml.
var ErrArtifactManifest = errors.New("no readable artifact manifest")

// LoadArtifact reads dir/murmur.yaml and makes the build checks that need
// the source directory: every requires_files entry exists as a real file
// (E-IO-003), and none is a symlink (E-BLD-002).
func LoadArtifact(dir string) (*Artifact, diag.List) {
	file := filepath.Join(dir, "murmur.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, diag.List{diag.New(diag.ManInvalid, diag.Pos{File: file}, "", fmt.Sprintf("%v: %v", ErrArtifactManifest, err))}
	}
	a, ds := ParseArtifact(file, data)
	if a == nil || ds.HasErrors() {
		return a, ds
	}
	for i, f := range a.RequiresFiles {
		field := fmt.Sprintf("requires_files[%d]", i)
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			ds = append(ds, diag.New(diag.IOMissingFile, a.Pos(field), field, fmt.Sprintf("%q is missing from %s; create it or remove the entry", f, dir)))
			return a, ds // the first missing entry is named
		case err != nil:
			ds = append(ds, diag.New(diag.IOMissingFile, a.Pos(field), field, fmt.Sprintf("%q cannot be read: %v", f, err)))
			return a, ds
		case fi.Mode()&fs.ModeSymlink != 0:
			ds = append(ds, diag.New(diag.BldPath, a.Pos(field), field, fmt.Sprintf("%q is a symlink; list the real file", f)))
		case !fi.Mode().IsRegular():
			ds = append(ds, diag.New(diag.BldPath, a.Pos(field), field, fmt.Sprintf("%q is not a regular file", f)))
		}
	}
	return a, ds
}

// ParseArtifact decodes an artifact manifest and makes every build check
// the manifest alone decides (E-BLD-001…006, E-MAN-003). A file that is also
// a capsule manifest may carry capsule fields; they are not reported here.
func ParseArtifact(file string, data []byte) (*Artifact, diag.List) {
	d := newDecoder(file)
	o := d.document(data)
	if o == nil {
		return nil, d.diags
	}
	if o.has("registry") {
		d.report(diag.ManInvalid, o.kn("registry"), "registry", "'registry' is not a manifest key; where artifacts come from is set in ~/.murmur/config.yaml")
		return nil, d.diags
	}
	a := &Artifact{File: file}
	a.Name = d.requiredString(o, "name")
	if a.Name != "" && !ValidBareName(a.Name) {
		why := "must be lowercase letters, digits and inner hyphens, at most 100 characters"
		if strings.Contains(a.Name, "/") {
			why = "is a bare name without a scope; the artifact installs as <scope>/" + bareOf(a.Name)
		}
		d.add(diag.BldName, "name", "%q %s", a.Name, why)
	}
	a.Version = d.requiredString(o, "version")
	a.Description = o.strv("description")
	if !o.present("runtime") {
		d.report(diag.ManInvalid, o.n, "runtime", "is required: tool, driver, hook, skill or capsule")
	} else {
		a.Runtime = o.enum("runtime", RoleTool, RoleDriver, RoleHook, RoleSkill, "capsule")
	}
	if o.has("implementation") {
		a.Implementation = o.enum("implementation", ExecWasm, ExecNative)
	}
	if n, ok := o.scalar("execution"); ok && !isNull(n) {
		switch v := strings.ToLower(n.Value); v {
		case ExecWasm, ExecNative, ExecStatic:
			a.Execution = v
		default:
			d.report(diag.ManInvalid, n, "execution", "must be wasm, native or static, not %q", n.Value)
		}
	}
	if o.has("requires_files") {
		a.RequiresFilesDeclared = true
		a.RequiresFiles = o.strings("requires_files")
		for i, f := range a.RequiresFiles {
			field := fmt.Sprintf("requires_files[%d]", i)
			if why := plainRelProblem(f); why != "" {
				d.add(diag.BldPath, field, "%q %s", f, why)
			}
		}
	} else if a.Runtime == RoleSkill {
		a.RequiresFiles = []string{"skill.md"}
	} else {
		a.RequiresFiles = []string{}
	}
	if a.ExecutionType() == ExecWasm && a.Runtime != "" && a.Runtime != RoleSkill && !hasWasmPayload(a.RequiresFiles) {
		pos := d.posOf("requires_files")
		if pos.Line == 0 {
			pos = d.posOf("runtime")
		}
		d.diags = append(d.diags, diag.New(diag.BldNoPayload, pos, "requires_files", fmt.Sprintf("a wasm artifact must list its compiled payload (such as %s.wasm) in requires_files, or the built .mur.zip holds nothing but murmur.yaml", a.Name)))
	}
	key := "input_schema"
	if !o.has(key) && o.has("input") {
		key = "input"
	}
	if o.has(key) {
		n := o.get(key)
		if n.Kind != yaml.MappingNode && (n.Kind != yaml.ScalarNode || isNull(n)) {
			d.report(diag.ManType, n, key, "must be a JSON string or a mapping, not %s", kindName(n))
		} else {
			a.InputSchema = &Raw{node: n}
		}
		o.get("input")
	}
	if o.has("inference_auth") {
		o.get("inference_auth")
		a.HasInferenceAuth = true
		d.add(diag.BldInferenceAuth, "inference_auth", "is the former name of upstream_auth:; rename the block to upstream_auth:")
	}
	if o.has("upstream_auth") {
		a.UpstreamAuth, a.UpstreamAuthProblem = d.upstreamAuth(o)
	}
	if o.has("models") {
		a.Models, a.ModelsProblem = d.models(o, a.Runtime)
	}
	if o.has("provider_tool") {
		a.ProviderTool, a.ProviderToolProblem = d.providerTool(o, a.Runtime)
	}
	if o.has("binding") {
		a.Binding = o.enum("binding", "on-stage", "on-session-start", "on-task-start", "on-inference", "on-tool-call", "on-shell", "on-compaction", "on-task-end", "on-session-end")
	}
	if o.has("execution_mode") {
		a.ExecutionMode = o.enum("execution_mode", "blocking", "async")
	}
	if o.has("commit_policy") {
		a.CommitPolicy = o.enum("commit_policy", "none", "write-manifests", "replace-context", "reopen-task", "seed-context", "deny")
	}
	// A published capsule carries capsule fields beside these; they belong
	// to the capsule manifest and are checked there.
	for _, k := range capsuleKeys {
		o.get(k)
	}
	o.unknown()
	a.pos = d.pos
	d.diags.Sort()
	return a, d.diags
}

var capsuleKeys = []string{"artifacts", "capabilities", "network", "context", "observability", "trace", "inference", "lifecycle", "exports", "control", "deploy"}

func hasWasmPayload(files []string) bool {
	for _, f := range files {
		if strings.HasSuffix(strings.ToLower(f), ".wasm") {
			return true
		}
	}
	return false
}

// plainRelProblem says why f is not a plain relative path.
func plainRelProblem(f string) string {
	switch {
	case strings.TrimSpace(f) == "":
		return "is empty"
	case strings.HasPrefix(f, "/") || strings.HasPrefix(f, `\`) || len(f) > 1 && f[1] == ':':
		return "is absolute; list a path relative to the source directory"
	case hasDotDot(f):
		return "has a .. component; list a path inside the source directory"
	case path.Clean(f) == ".":
		return "names the source directory itself, not a file"
	}
	return ""
}

func (d *decoder) upstreamAuth(o *obj) (*UpstreamAuth, string) {
	s := o.sub("upstream_auth")
	if s == nil {
		return nil, "upstream_auth must be a mapping with header and value"
	}
	ua := &UpstreamAuth{Header: s.strv("header"), Value: s.strv("value")}
	var problem string
	switch {
	case ua.Header == "":
		problem = "upstream_auth.header is required"
	case !headerNameRE.MatchString(ua.Header):
		problem = fmt.Sprintf("upstream_auth.header %q is not a valid HTTP header name", ua.Header)
	case forbiddenAuthHeaders[strings.ToLower(ua.Header)]:
		problem = fmt.Sprintf("upstream_auth.header cannot be %s", ua.Header)
	case !s.has("value"):
		problem = "upstream_auth.value is required"
	case strings.Count(ua.Value, "{key}") != 1:
		problem = fmt.Sprintf("upstream_auth.value must contain {key} exactly once, not %d times", strings.Count(ua.Value, "{key}"))
	}
	s.rest(func(key string, _ *yaml.Node) {
		if problem == "" {
			problem = fmt.Sprintf("upstream_auth.%s is not a key of the block", key)
		}
	})
	return ua, problem
}

const maxU32 = 4294967295

func (d *decoder) models(o *obj, runtime string) (map[string]ModelLimits, string) {
	if runtime != RoleDriver {
		o.get("models")
		d.add(diag.BldModels, "models", "is declared only by a runtime: driver artifact, not runtime: %s; remove the block", runtime)
		return nil, "models is declared on a non-driver artifact"
	}
	n := o.get("models")
	problem := func(field, format string, args ...any) string {
		msg := fmt.Sprintf(format, args...)
		d.add(diag.BldModels, field, "%s", msg)
		return field + " " + msg
	}
	if n.Kind != yaml.MappingNode {
		return nil, problem("models", "must be a mapping of model id to limits, not %s", kindName(n))
	}
	// Decode quietly: every problem here is E-BLD-005, not E-MAN-002.
	q := newDecoder(d.file)
	m := q.mapping(n, "models")
	out := map[string]ModelLimits{}
	first := ""
	note := func(s string) {
		if first == "" {
			first = s
		}
	}
	for _, id := range m.keys {
		field := "models." + id
		if strings.TrimSpace(id) == "" {
			note(problem(field, "model id must not be empty"))
			continue
		}
		e := q.mapping(m.get(id), field)
		if e == nil {
			note(problem(field, "must be a mapping with max_output_tokens and context_window"))
			continue
		}
		var ml ModelLimits
		num := func(key string, required bool) *int64 {
			f := field + "." + key
			if !e.has(key) {
				if required {
					note(problem(f, "is required"))
				}
				return nil
			}
			v := e.integer(key, 1)
			if v == nil || *v < 1 || *v > maxU32 {
				note(problem(f, "must be an integer from 1 to 4294967295"))
				return nil
			}
			return v
		}
		if v := num("max_output_tokens", true); v != nil {
			ml.MaxOutputTokens = *v
		}
		if v := num("context_window", true); v != nil {
			ml.ContextWindow = *v
		}
		ml.MaxInputTokens = num("max_input_tokens", false)
		if ml.MaxInputTokens != nil && ml.ContextWindow > 0 && *ml.MaxInputTokens > ml.ContextWindow {
			note(problem(field+".max_input_tokens", "%d is above context_window %d", *ml.MaxInputTokens, ml.ContextWindow))
		}
		if e.has("vision") {
			ml.Vision = e.boolean("vision")
			if ml.Vision == nil {
				note(problem(field+".vision", "must be true or false"))
			}
		}
		e.rest(func(key string, _ *yaml.Node) {
			note(problem(field+"."+key, "is not a key of a models entry: only max_output_tokens, context_window, max_input_tokens and vision"))
		})
		out[id] = ml
	}
	if len(m.keys) == 0 {
		note(problem("models", "must list at least one model"))
	}
	for k, p := range q.pos {
		d.pos[k] = p
	}
	return out, first
}

func (d *decoder) providerTool(o *obj, runtime string) (*ProviderTool, string) {
	if runtime != RoleTool {
		o.get("provider_tool")
		d.add(diag.BldProviderTool, "provider_tool", "is declared only by a runtime: tool artifact, not runtime: %s", runtime)
		return nil, "provider_tool is declared on a runtime: " + runtime + " artifact"
	}
	n := o.get("provider_tool")
	first := ""
	problem := func(field, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		d.add(diag.BldProviderTool, field, "%s", msg)
		if first == "" {
			first = field + " " + msg
		}
	}
	q := newDecoder(d.file)
	s := q.mapping(n, "provider_tool")
	if s == nil {
		problem("provider_tool", "must be a mapping with kind, display_width and display_height")
		return nil, first
	}
	pt := &ProviderTool{Kind: s.strv("kind")}
	if pt.Kind != "computer" {
		problem("provider_tool.kind", "must be computer, the only kind, not %q", pt.Kind)
	}
	for _, key := range []string{"display_width", "display_height"} {
		f := "provider_tool." + key
		if !s.has(key) {
			problem(f, "is required")
			continue
		}
		v := s.integer(key, 1)
		if v == nil || *v < 1 || *v > 65535 {
			problem(f, "must be an integer from 1 to 65535")
			continue
		}
		if key == "display_width" {
			pt.DisplayWidth = *v
		} else {
			pt.DisplayHeight = *v
		}
	}
	s.rest(func(key string, _ *yaml.Node) {
		problem("provider_tool."+key, "is not accepted: only kind, display_width and display_height")
	})
	for k, p := range q.pos {
		d.pos[k] = p
	}
	return pt, first
}

// CheckPublishable refuses a reserved version (E-REG-004).
func (a *Artifact) CheckPublishable() diag.List {
	switch a.Version {
	case "latest", "stable", "edge":
		return diag.List{diag.New(diag.RegReservedVersion, a.Pos("version"), "version", fmt.Sprintf("%q is reserved and cannot be published; publish a concrete version such as 0.1.0", a.Version))}
	}
	return nil
}
