package manifest

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/murmur/mur/internal/diag"
)

// LoadCapsule reads and validates the capsule manifest at path.
func LoadCapsule(path string) (*Capsule, diag.List) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, diag.List{diag.New(diag.ManInvalid, diag.Pos{File: path}, "", fmt.Sprintf("cannot read the manifest: %v; pass --manifest PATH to name another", err))}
	}
	return ParseCapsule(path, data)
}

// ParseCapsule decodes and validates a capsule manifest. It returns every
// problem at once, errors and warnings together (see diag.List.Errors and
// Warnings). The capsule is nil only when the file is not a YAML mapping.
func ParseCapsule(file string, data []byte) (*Capsule, diag.List) {
	d := newDecoder(file)
	top := d.document(data)
	if top == nil {
		return nil, d.diags
	}
	// registry: is refused before any other field is checked.
	if top.has("registry") {
		d.report(diag.ManInvalid, top.kn("registry"), "registry", "'registry' is not a manifest key; where artifacts come from is set in ~/.murmur/config.yaml")
		return nil, d.diags
	}
	c := d.capsule(top)
	c.File = file
	c.pos = d.pos
	c.src = data
	validate(d, c)
	d.diags.Sort()
	return c, d.diags
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// document parses data and opens its root mapping.
func (d *decoder) document(data []byte) *obj {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		pos := diag.Pos{File: d.file}
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
			pos.Line, _ = strconv.Atoi(m[1])
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		d.diags = append(d.diags, diag.New(diag.ManType, pos, "", "is not valid YAML: "+msg))
		return nil
	}
	if len(root.Content) == 0 {
		d.diags = append(d.diags, diag.New(diag.ManType, diag.Pos{File: d.file}, "", "is empty; a manifest is a YAML mapping with at least name and version"))
		return nil
	}
	doc := resolve(root.Content[0])
	if doc.Kind != yaml.MappingNode {
		d.report(diag.ManType, doc, "", "must be a YAML mapping, not %s", kindName(doc))
		return nil
	}
	return d.mapping(doc, "")
}

func (d *decoder) capsule(o *obj) *Capsule {
	c := &Capsule{}
	c.Name = d.requiredString(o, "name")
	if c.Name != "" && !ValidBareName(c.Name) {
		// The capsule's identity is a bare name, as for any artifact; it
		// also names its default state and conversation stores.
		d.report(diag.ManInvalid, o.kn("name"), "name", "%q is not a bare name: lowercase letters, digits and inner hyphens, at most 100 characters, no scope", c.Name)
	}
	c.Version = d.requiredString(o, "version")
	if n := o.get("mur_version"); n != nil {
		d.report(diag.ManInvalid, o.kn("mur_version"), "mur_version", "is not a top-level key; write the pin as deploy.mur_version")
	}
	if n := o.get("config"); n != nil {
		d.report(diag.ManInvalid, o.kn("config"), "config", "is not a top-level key: config is per artifact; put it on the artifacts: entry it configures")
	}
	o.list("artifacts", func(i int, path string, n *yaml.Node) {
		if a := d.artifactRef(n, path); a != nil {
			c.Artifacts = append(c.Artifacts, *a)
		} else {
			c.Artifacts = append(c.Artifacts, ArtifactRef{})
		}
	})
	if s := o.sub("capabilities"); s != nil {
		c.Capabilities = d.capabilities(s, "")
	}
	if s := o.sub("network"); s != nil {
		c.Network = d.door(s)
	}
	if s := o.sub("context"); s != nil {
		c.Context = d.context(s)
	}
	if s := o.sub("observability"); s != nil {
		c.Observability = d.observability(s)
	}
	if s := o.sub("trace"); s != nil {
		c.Trace = d.trace(s)
	}
	if s := o.sub("inference"); s != nil {
		c.Inference = d.inference(s)
	}
	if s := o.sub("lifecycle"); s != nil {
		c.Lifecycle = d.lifecycle(s)
	}
	if s := o.sub("exports"); s != nil {
		c.Exports = d.exports(s)
	}
	if s := o.sub("control"); s != nil {
		c.Control = &Control{Settings: s.strings("settings"), Secrets: s.strings("secrets"), AgentSettings: s.strings("agent_settings")}
		s.unknown()
	}
	if s := o.sub("deploy"); s != nil {
		c.Deploy = &Deploy{MurVersion: s.strv("mur_version")}
		s.unknown()
	}
	// A capsule that is also published carries artifact-manifest fields;
	// they are accepted and carry no run-time meaning.
	c.Runtime = o.strv("runtime")
	c.Implementation = o.strv("implementation")
	c.Execution = o.strv("execution")
	c.RequiresFiles = o.strings("requires_files")
	c.Description = o.strv("description")
	o.unknown()
	return c
}

func (d *decoder) requiredString(o *obj, key string) string {
	if !o.has(key) {
		d.report(diag.ManInvalid, o.n, o.field(key), "is required")
		return ""
	}
	p := o.str(key)
	if p == nil || strings.TrimSpace(*p) == "" {
		if p != nil || isNull(o.vn(key)) {
			d.report(diag.ManInvalid, o.kn(key), o.field(key), "must not be empty")
		}
		return ""
	}
	return *p
}

func (d *decoder) artifactRef(n *yaml.Node, path string) *ArtifactRef {
	o := d.mapping(n, path)
	if o == nil {
		return nil
	}
	a := &ArtifactRef{}
	a.Name = d.requiredString(o, "name")
	a.Source = o.strv("source")
	if a.Source != "" {
		a.Version = o.strv("version")
	} else if !o.has("version") {
		d.report(diag.ManInvalid, o.n, o.field("version"), "is required (per entry) unless source: is set")
	} else {
		a.Version = d.requiredString(o, "version")
	}
	if rn, ok := o.scalar("runtime"); ok && !isNull(rn) {
		switch rn.Value {
		case RoleTool, RoleDriver, RoleHook, RoleSkill, RoleCapsule:
			a.Runtime = rn.Value
		case "wasm", "native":
			d.report(diag.ManInvalid, rn, o.field("runtime"), "must be tool, driver, hook, skill or capsule; %q belongs in the artifact's own manifest as implementation: %s", rn.Value, rn.Value)
		default:
			d.report(diag.ManInvalid, rn, o.field("runtime"), "must be tool, driver, hook, skill or capsule, not %q", rn.Value)
		}
	}
	a.LocalSource = o.boolean("local_source")
	a.PromptPayload = o.boolean("prompt_payload")
	if s := o.sub("capabilities"); s != nil {
		a.Capabilities = d.capabilities(s, a.Role())
	}
	if o.has("config") {
		a.Config = &Raw{node: o.get("config")}
	}
	if o.has("gateway") {
		a.Gateway = d.gateway(o.sub("gateway"), o)
	}
	if o.has("on_overflow") {
		a.OnOverflow = o.enum("on_overflow", "drop", "block")
	}
	o.unknown()
	return a
}

func (d *decoder) gateway(o *obj, parent *obj) *Gateway {
	if o == nil {
		return nil
	}
	g := &Gateway{}
	if !o.present("endpoint") {
		d.report(diag.ManInvalid, parent.kn("gateway"), o.field("endpoint"), "is required when gateway: is set: name the upstream URL the key is sent to")
	} else {
		g.Endpoint = o.strv("endpoint")
	}
	if o.has("api_key") {
		v := ""
		if p := o.str("api_key"); p != nil {
			v = *p
		}
		g.APIKey = &v
	}
	g.Keyless = o.boolean("keyless")
	o.unknown()
	return g
}

// capabilities decodes a capabilities block; role is "" for the
// capsule-wide block and the entry's role otherwise.
func (d *decoder) capabilities(o *obj, role string) *Capabilities {
	c := &Capabilities{}
	if s := o.sub("network"); s != nil {
		c.Network = &NetworkCap{Allow: s.strings("allow"), UnixSockets: s.boolean("unix_sockets")}
		s.unknown()
	}
	if s := o.sub("peer_fetch"); s != nil {
		c.PeerFetch = &PeerFetch{Allow: s.strings("allow")}
		if !s.present("allow") {
			d.report(diag.ManInvalid, o.kn("peer_fetch"), s.field("allow"), "is required and must be non-empty when the peer_fetch: block is present; omit the block to allow no peer")
		}
		s.unknown()
	}
	if s := o.sub("filesystem"); s != nil {
		c.Filesystem = &Filesystem{Scope: s.str("scope"), WorkdirExec: s.boolean("workdir_exec"), Records: s.boolean("records")}
		for i, e := range s.strings("read_only") {
			// An empty or whitespace-only entry is dropped at parse.
			if strings.TrimSpace(e) != "" {
				c.Filesystem.ReadOnly = append(c.Filesystem.ReadOnly, e)
				c.Filesystem.roIdx = append(c.Filesystem.roIdx, i)
			}
		}
		s.unknown()
	}
	if s := o.sub("shell"); s != nil {
		c.Shell = d.shell(s)
	}
	if s := o.sub("env"); s != nil {
		c.Env = &EnvCap{Allow: s.strings("allow")}
		s.unknown()
	}
	if s := o.sub("limits"); s != nil {
		c.Limits = &Limits{MemoryBytes: s.integer("memory_bytes", 1), TableElements: s.integer("table_elements", 1),
			Instances: s.integer("instances", 1), DeadlineSeconds: s.integer("deadline_seconds", 1)}
		s.unknown()
	}
	if s := o.sub("resources"); s != nil {
		c.Resources = &Resources{
			MaxProcesses: s.integer("max_processes", 1), MaxOpenFiles: s.integer("max_open_files", 1),
			MaxFileSizeBytes: s.integer("max_file_size_bytes", 1), CPUSeconds: s.integer("cpu_seconds", 1),
			MemoryBytes: s.integer("memory_bytes", 1), CgroupMemoryBytes: s.integer("cgroup_memory_bytes", 1),
			CgroupPidsMax: s.integer("cgroup_pids_max", 1), CgroupCPUPercent: s.integer("cgroup_cpu_percent", 1),
			CgroupIOBytesPerSec: s.integer("cgroup_io_bytes_per_sec", 1), WorkdirMaxBytes: s.integer("workdir_max_bytes", 1),
		}
		s.unknown()
	}
	if o.has("containment") {
		c.Containment = o.enum("containment", "advisory", "scoped", "sealed")
	}
	if s := o.sub("conversation"); s != nil {
		c.Conversation = &ReadGrant{Read: s.boolean("read")}
		if !s.present("read") && role != "" {
			d.report(diag.ManInvalid, o.kn("conversation"), s.field("read"), "is required in a conversation: block and never inferred; write read: true or remove the block")
		}
		s.unknown()
	}
	if s := o.sub("task_io"); s != nil {
		c.TaskIO = &ReadGrant{Read: s.boolean("read")}
		if !s.present("read") && role == RoleHook {
			d.report(diag.ManInvalid, o.kn("task_io"), s.field("read"), "is required in a task_io: block and never inferred; write read: true or remove the block")
		}
		s.unknown()
	}
	if s := o.sub("state"); s != nil {
		c.State = &State{Store: s.str("store")}
		s.unknown()
	}
	if s := o.sub("plan"); s != nil {
		c.Plan = &Plan{Submit: s.boolean("submit")}
		if !s.present("submit") {
			d.report(diag.ManInvalid, o.kn("plan"), s.field("submit"), "is required in a plan: block and never inferred; write submit: true, or omit the block to grant no plans")
		}
		s.unknown()
	}
	if s := o.sub("install"); s != nil {
		c.Install = &Install{Skill: s.strings("skill"), Tool: s.strings("tool"), From: s.strings("from")}
		// An unknown key such as driver: grants nothing.
		s.unknown()
	}
	if s := o.sub("spawn"); s != nil {
		c.Spawn = &Spawn{Allow: s.strings("allow"), WorkdirSnapshot: s.strings("workdir_snapshot")}
		s.unknown()
	}
	o.unknown()
	return c
}

func (d *decoder) shell(s *obj) *Shell {
	sh := &Shell{Allow: s.strings("allow"), StripEnv: s.strings("strip_env"), BaselineEnv: s.strings("baseline_env")}
	s.list("interpreter_runtime", func(i int, path string, n *yaml.Node) {
		o := d.mapping(n, path)
		if o == nil {
			return
		}
		ir := InterpreterRuntime{Binary: d.requiredString(o, "binary")}
		if !o.present("dirs") {
			d.report(diag.ManInvalid, o.n, o.field("dirs"), "is required: name at least one host directory")
		}
		o.list("dirs", func(j int, dpath string, dn *yaml.Node) {
			do := d.mapping(dn, dpath)
			if do == nil {
				return
			}
			dir := InterpreterDir{Path: d.requiredString(do, "path")}
			if dir.Path != "" && !strings.HasPrefix(dir.Path, "/") {
				d.report(diag.ManInvalid, do.kn("path"), do.field("path"), "must be an absolute host path starting with /, not %q", dir.Path)
			}
			if !do.present("list_dir") {
				d.report(diag.ManInvalid, do.n, do.field("list_dir"), "is required and never inferred: write list_dir: true to allow listing the directory, false to allow opening files by exact name only")
			} else if b := do.boolean("list_dir"); b != nil {
				dir.ListDir = *b
			}
			do.unknown()
			ir.Dirs = append(ir.Dirs, dir)
		})
		if o.present("dirs") && len(ir.Dirs) == 0 {
			d.report(diag.ManInvalid, o.kn("dirs"), o.field("dirs"), "must name at least one directory")
		}
		o.unknown()
		sh.InterpreterRuntime = append(sh.InterpreterRuntime, ir)
	})
	s.list("staged_runtime", func(i int, path string, n *yaml.Node) {
		o := d.mapping(n, path)
		if o == nil {
			return
		}
		sr := StagedRuntime{Binary: d.requiredString(o, "binary"), SourcePath: d.requiredString(o, "source_path"), Pin: d.requiredString(o, "pin")}
		if sr.SourcePath != "" && !strings.HasPrefix(sr.SourcePath, "/") {
			d.report(diag.ManInvalid, o.kn("source_path"), o.field("source_path"), "must be an absolute host path starting with /, not %q", sr.SourcePath)
		}
		o.unknown()
		sh.StagedRuntime = append(sh.StagedRuntime, sr)
	})
	s.unknown()
	return sh
}

func (d *decoder) door(o *obj) *Door {
	dr := &Door{InternalPort: o.integer("internal_port", 1)}
	if dr.InternalPort != nil && *dr.InternalPort > 65535 {
		d.report(diag.ManInvalid, o.kn("internal_port"), o.field("internal_port"), "must be a port from 1 to 65535, not %d", *dr.InternalPort)
	}
	if s := o.sub("authentication"); s != nil {
		au := &Authentication{}
		if !s.present("scheme") {
			d.report(diag.ManInvalid, o.kn("authentication"), s.field("scheme"), "is required in the block: write scheme: bearer")
		} else if v := s.strv("scheme"); v != "bearer" {
			d.report(diag.ManInvalid, s.kn("scheme"), s.field("scheme"), "must be bearer, the only scheme, not %q", v)
		} else {
			au.Scheme = v
		}
		if cs := s.sub("credentials"); cs != nil {
			au.Credentials = map[string]*Credential{}
			for _, name := range cs.keys {
				field := cs.field(name)
				if !doorCredRE.MatchString(name) {
					d.report(diag.ManInvalid, cs.kn(name), field, "credential name must match ^[a-z][a-z0-9_-]{0,31}$")
				} else if name == "operator" {
					d.report(diag.ManInvalid, cs.kn(name), field, "'operator' is reserved for the token holding every scope; choose another name")
				}
				co := cs.sub(name)
				if co == nil {
					continue
				}
				cr := &Credential{Scopes: co.strings("scopes")}
				d.checkScopes(co, cr.Scopes)
				co.unknown()
				au.Credentials[name] = cr
			}
		}
		s.unknown()
		dr.Authentication = au
	}
	o.unknown()
	return dr
}

var doorScopes = map[string]bool{
	"SendMessage": true, "SendStreamingMessage": true, "murmur.WatchSession": true, "GetTask": true,
	"ListTasks": true, "CancelTask": true, "SubscribeToTask": true, "murmur.StopSession": true, "resources/files": true,
}

var retiredScopes = map[string]string{
	"message/send":                       "write SendMessage instead",
	"message/stream":                     "write SendStreamingMessage instead",
	"tasks/get":                          "write GetTask instead",
	"tasks/cancel":                       "write CancelTask instead",
	"agent/getAuthenticatedExtendedCard": "remove it: every valid token may call GetExtendedAgentCard",
	"stream/watch":                       "write murmur.WatchSession instead",
	"session/stop":                       "write murmur.StopSession instead",
}

func (d *decoder) checkScopes(co *obj, scopes []string) {
	field := co.field("scopes")
	if !co.present("scopes") || len(scopes) == 0 {
		d.report(diag.ManInvalid, co.n, field, "is required and must name at least one scope")
		return
	}
	seen := map[string]bool{}
	for i, s := range scopes {
		f := fmt.Sprintf("%s[%d]", field, i)
		pos := d.pos[f]
		switch {
		case retiredScopes[s] != "":
			d.diags = append(d.diags, diag.New(diag.ManInvalid, pos, f, fmt.Sprintf("%q is a retired name of a door method; %s", s, retiredScopes[s])))
		case !doorScopes[s]:
			d.diags = append(d.diags, diag.New(diag.ManInvalid, pos, f, fmt.Sprintf("%q is not a scope; use one of SendMessage, SendStreamingMessage, murmur.WatchSession, GetTask, ListTasks, CancelTask, SubscribeToTask, murmur.StopSession, resources/files", s)))
		case seen[s]:
			d.diags = append(d.diags, diag.New(diag.ManInvalid, pos, f, fmt.Sprintf("%q is listed twice; list each scope once", s)))
		}
		seen[s] = true
	}
}

func (d *decoder) context(o *obj) *Context {
	c := &Context{MaxTokens: o.integer("max_tokens", 1)}
	c.SeedBudget = d.fraction(o, "seed_budget", false)
	c.SeedOverflowMargin = d.fraction(o, "seed_overflow_margin", false)
	if n, ok := o.scalar("record"); ok && !isNull(n) {
		// record: on is YAML 1.1 spelling; true/false read the same.
		if b, ok := parseBool(n.Value); ok {
			c.Record = map[bool]string{true: "on", false: "off"}[b]
		} else {
			d.report(diag.ManInvalid, n, o.field("record"), "must be on or off, not %q", n.Value)
		}
	}
	c.RecordStore = o.str("record_store")
	if o.has("retain") {
		s := o.sub("retain")
		if s != nil {
			c.Retain = &ContextRetain{MaxMessages: s.integer("max_messages", 1), MaxAge: d.duration(s, "max_age", "smhd")}
			d.nonEmptyRetain(o, s, "max_messages", "max_age")
			s.unknown()
		}
	}
	if s := o.sub("images"); s != nil {
		c.Images = &Images{Keep: s.integer("keep", 1), MaxPerTurn: s.integer("max_per_turn", 1), MaxBytes: d.byteSize(s, "max_bytes")}
		s.unknown()
	}
	o.unknown()
	return c
}

// nonEmptyRetain refuses a retain block that sets neither of its limits:
// omitting the block is how a capsule declares no policy.
func (d *decoder) nonEmptyRetain(parent, s *obj, limits ...string) {
	for _, k := range limits {
		if s.present(k) {
			return
		}
	}
	d.report(diag.ManInvalid, parent.kn("retain"), s.path, "is present but sets neither %s; omit the block to declare no retention policy", strings.Join(limits, " nor "))
}

// fraction reads a float in (0, 1), or (0, 1] when closed.
func (d *decoder) fraction(o *obj, key string, closed bool) *float64 {
	v := o.number(key)
	if v == nil {
		return nil
	}
	if *v <= 0 || *v > 1 || (!closed && *v >= 1) {
		rng := "between 0.0 and 1.0, exclusive"
		if closed {
			rng = "greater than 0.0 and at most 1.0"
		}
		d.report(diag.ManInvalid, o.kn(key), o.field(key), "must be %s, not %v", rng, *v)
	}
	return v
}

func (d *decoder) duration(o *obj, key, units string) string {
	n, ok := o.scalar(key)
	if !ok || isNull(n) {
		return ""
	}
	if _, err := ParseDuration(n.Value, units); err != nil {
		d.report(diag.ManInvalid, n, o.field(key), "%v", err)
	}
	return n.Value
}

func (d *decoder) byteSize(o *obj, key string) string {
	n, ok := o.scalar(key)
	if !ok || isNull(n) {
		return ""
	}
	if _, err := ParseByteSize(n.Value); err != nil {
		d.report(diag.ManInvalid, n, o.field(key), "%v", err)
	}
	return n.Value
}

func (d *decoder) observability(o *obj) *Observability {
	ob := &Observability{OtelEndpoint: o.strv("otel_endpoint")}
	if s := o.sub("eval"); s != nil {
		ev := &Eval{DatasetID: s.strv("dataset_id")}
		s.list("scorers", func(i int, path string, n *yaml.Node) {
			so := d.mapping(n, path)
			if so == nil {
				return
			}
			sc := Scorer{Type: d.requiredString(so, "type"), Name: so.strv("name"), Max: so.integer("max", 1), Expected: so.strings("expected")}
			so.unknown()
			ev.Scorers = append(ev.Scorers, sc)
		})
		s.unknown()
		ob.Eval = ev
	}
	o.unknown()
	return ob
}

func (d *decoder) trace(o *obj) *Trace {
	t := &Trace{}
	if o.has("capture") {
		t.Capture = o.enum("capture", "none", "meta", "content")
	}
	if o.has("retain") {
		if s := o.sub("retain"); s != nil {
			t.Retain = &TraceRetain{MaxSessions: s.integer("max_sessions", 1), MaxAge: d.duration(s, "max_age", "smhd")}
			d.nonEmptyRetain(o, s, "max_sessions", "max_age")
			s.unknown()
		}
	}
	o.unknown()
	return t
}

func (d *decoder) driverRef(o *obj, path string) *DriverRef {
	dr := &DriverRef{Artifact: o.strv("artifact")}
	if !o.present("artifact") {
		d.report(diag.ManInvalid, o.n, o.field("artifact"), "is required: name the runtime: driver entry of artifacts:")
	}
	if o.has("config") {
		n := o.get("config")
		dr.Config = &Raw{node: n}
		if !dr.Config.IsMapping() {
			d.report(diag.ManInvalid, o.kn("config"), o.field("config"), "must be a mapping, not %s", kindName(n))
		}
	}
	o.unknown()
	return dr
}

func (d *decoder) inference(o *obj) *Inference {
	in := &Inference{}
	if o.has("transport") {
		in.Transport = o.enum("transport", "http", "process")
	}
	in.Model = o.strv("model")
	if s := o.sub("driver"); s != nil {
		in.Driver = d.driverRef(s, o.field("driver"))
	}
	in.MaxTurns = o.integer("max_turns", 1)
	in.MaxTokens = o.integer("max_tokens", 1)
	in.MaxSessionTokens = o.integer("max_session_tokens", 1)
	if p := o.str("system_prompt"); p != nil {
		// Inline prompt text is trimmed at parse time.
		t := strings.TrimSpace(*p)
		in.SystemPrompt = &t
	}
	in.SystemPromptFile = o.strv("system_prompt_file")
	in.SystemPromptArtifact = o.strv("system_prompt_artifact")
	in.InstructionFiles = o.strings("instruction_files")
	if o.has("tool_refresh") {
		in.ToolRefresh = o.enum("tool_refresh", "compaction", "immediate")
	}
	o.list("alternates", func(i int, path string, n *yaml.Node) {
		ao := d.mapping(n, path)
		if ao == nil {
			in.Alternates = append(in.Alternates, Alternate{})
			return
		}
		alt := Alternate{Name: ao.strv("name"), Model: ao.strv("model")}
		if ds := ao.sub("driver"); ds != nil {
			alt.Driver.Artifact = ds.strv("artifact")
			if ds.has("config") {
				ds.get("config")
				d.report(diag.ManInvalid, ds.kn("config"), ds.field("config"), "is refused on an alternate: inference.driver.config applies to every declared driver; put per-driver settings in that driver's artifacts[].config")
			}
			ds.unknown()
		}
		ao.unknown()
		in.Alternates = append(in.Alternates, alt)
	})
	if s := o.sub("retry"); s != nil {
		r := &Retry{MaxRetries: s.integer("max_retries", 0), InitialDelayMS: s.integer("initial_delay_ms", 1), MaxDelayMS: s.integer("max_delay_ms", 1)}
		d.bound(s, "max_retries", r.MaxRetries, 20)
		d.bound(s, "initial_delay_ms", r.InitialDelayMS, 60000)
		d.bound(s, "max_delay_ms", r.MaxDelayMS, 3600000)
		if r.InitialDelayMS != nil && r.MaxDelayMS != nil && *r.MaxDelayMS < *r.InitialDelayMS {
			d.report(diag.ManInvalid, s.kn("max_delay_ms"), s.field("max_delay_ms"), "must be at least initial_delay_ms (%d), not %d", *r.InitialDelayMS, *r.MaxDelayMS)
		}
		s.unknown()
		in.Retry = r
	}
	in.Command = o.strv("command")
	if s := o.sub("compaction"); s != nil {
		cp := &Compaction{Threshold: d.fraction(s, "threshold", true), Model: s.strv("model"), SystemPrompt: s.str("system_prompt"),
			SystemPromptFile: s.strv("system_prompt_file"), DumpSummaries: s.boolean("dump_summaries"), MaxTokens: s.integer("max_tokens", 1)}
		if s.has("driver_config") {
			n := s.get("driver_config")
			cp.DriverConfig = &Raw{node: n}
			if !cp.DriverConfig.IsMapping() {
				d.report(diag.ManInvalid, s.kn("driver_config"), s.field("driver_config"), "must be a mapping, not %s", kindName(n))
			}
		}
		if s.has("system_prompt") && s.has("system_prompt_file") {
			d.report(diag.ManInvalid, s.kn("system_prompt_file"), s.field("system_prompt_file"), "cannot be set together with inference.compaction.system_prompt; keep one")
		}
		s.unknown()
		in.Compaction = cp
	}
	// endpoint and api_key were removed; validate refuses them naming the
	// driver entry they belong on.
	o.get("endpoint")
	o.get("api_key")
	o.unknown()
	return in
}

func (d *decoder) bound(o *obj, key string, v *int64, max int64) {
	if v != nil && *v > max {
		d.report(diag.ManInvalid, o.kn(key), o.field(key), "must be at most %d, not %d", max, *v)
	}
}

func (d *decoder) lifecycle(o *obj) *Lifecycle {
	l := &Lifecycle{}
	if o.has("task_acceptance") {
		l.TaskAcceptance = o.enum("task_acceptance", "none", "single", "queue")
	}
	if o.has("after_task") {
		l.AfterTask = o.enum("after_task", "exit", "sleep")
	}
	l.QueueDepth = o.integer("queue_depth", 0)
	l.InputTimeoutSecs = o.integer("input_timeout_secs", 1)
	if o.has("conversation") {
		l.Conversation = o.enum("conversation", "stateless", "threaded")
	}
	l.MaxTaskReopens = o.integer("max_task_reopens", 0)
	l.ShellGraceSecs = o.integer("shell_grace_secs", 0)
	l.DelegationDeadlineSecs = o.integer("delegation_deadline_secs", 0)
	l.DeadlineNoticeSecs = o.integer("deadline_notice_secs", 0)
	if s := o.sub("keep_working"); s != nil {
		kw := &KeepWorking{}
		msgField := s.field("message")
		if p := s.str("message"); p == nil || strings.TrimSpace(*p) == "" {
			at := o.kn("keep_working")
			if s.has("message") {
				at = s.kn("message")
			}
			d.report(diag.ManInvalid, at, msgField, "invalid lifecycle config for '%s': is required and must not be blank; omit lifecycle.keep_working to turn the option off", msgField)
		} else {
			kw.Message = *p
		}
		limField := s.field("limit")
		if !s.present("limit") {
			d.report(diag.ManInvalid, o.kn("keep_working"), limField, "invalid lifecycle config for '%s': is required; omit lifecycle.keep_working to turn the option off", limField)
		} else if v := s.integer("limit", 0); v != nil {
			if *v < 1 {
				d.report(diag.ManInvalid, s.kn("limit"), limField, "invalid lifecycle config for '%s': must be at least 1; omit lifecycle.keep_working to turn the option off", limField)
			}
			kw.Limit = *v
		}
		s.unknown()
		l.KeepWorking = kw
	}
	if s := o.sub("done_check"); s != nil {
		dc := &DoneCheck{}
		if p := s.str("command"); p == nil || strings.TrimSpace(*p) == "" {
			d.report(diag.ManInvalid, o.kn("done_check"), s.field("command"), "is required and must not be blank")
		} else {
			dc.Command = *p
		}
		if !s.present("limit") {
			d.report(diag.ManInvalid, o.kn("done_check"), s.field("limit"), "is required")
		} else if v := s.integer("limit", 0); v != nil {
			dc.Limit = *v
		}
		dc.TimeoutSecs = s.integer("timeout_secs", 1)
		s.unknown()
		l.DoneCheck = dc
	}
	o.unknown()
	return l
}

func (d *decoder) exports(o *obj) *Exports {
	e := &Exports{}
	root := func(s *obj) string {
		if !s.present("root") {
			d.report(diag.ManInvalid, s.n, s.field("root"), "is required: name a subtree of the work folder")
			return ""
		}
		r := s.strv("root")
		if p := relPathProblem(r); p != "" || hasDotDot(r) {
			if p == "" {
				p = "must be free of .."
			}
			d.report(diag.ManInvalid, s.kn("root"), s.field("root"), "%s: it must be relative, non-empty and free of ..", p)
		}
		return r
	}
	if s := o.sub("files"); s != nil {
		f := &FilesExport{Root: root(s)}
		if !s.present("mode") {
			d.report(diag.ManInvalid, s.n, s.field("mode"), "is required: write mode: read-only")
		} else {
			f.Mode = s.enum("mode", "read-only")
		}
		f.MaxBytes = d.byteSize(s, "max_bytes")
		s.unknown()
		e.Files = f
	}
	if s := o.sub("peer_files"); s != nil {
		pf := &PeerFilesExport{Root: root(s), MaxTTL: d.duration(s, "max_ttl", "smh"), MaxBytes: d.byteSize(s, "max_bytes")}
		s.unknown()
		e.PeerFiles = pf
	}
	if n := o.get("peer_tasks"); n != nil {
		if isNull(n) || n.Kind == yaml.MappingNode {
			s := d.mapping(n, o.field("peer_tasks"))
			pt := &PeerTasks{}
			if !s.present("accept") {
				d.report(diag.ManInvalid, o.kn("peer_tasks"), s.field("accept"), "is required: write accept: true to serve peer tasks or accept: false to refuse them")
			} else if b := s.boolean("accept"); b != nil {
				pt.Accept = *b
			}
			s.unknown()
			e.PeerTasks = pt
		} else {
			d.report(diag.ManType, n, o.field("peer_tasks"), "must be a block with accept: true or false, not %s", kindName(n))
		}
	}
	o.unknown()
	return e
}
