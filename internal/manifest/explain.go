package manifest

import "sort"

// Scope is the effective grant set of a capsule, as mur run
// --explain-scope prints it and session_start records it. It needs no
// installed artifact: everything here is decided by the manifest.
type Scope struct {
	Capsule              string         `json:"capsule"`
	Version              string         `json:"version"`
	Containment          string         `json:"containment"`
	NetworkAllow         []string       `json:"network_allow"`
	UnixSockets          bool           `json:"unix_sockets"`
	PeerFetchAllow       []string       `json:"peer_fetch_allow"`
	FilesystemScope      string         `json:"filesystem_scope"`
	ReadOnly             []string       `json:"read_only"`
	ReadOnlyEnforcement  string         `json:"read_only_enforcement"`
	ReadOnlyAdvisoryFor  []string       `json:"read_only_advisory_against"`
	WorkdirExec          bool           `json:"workdir_exec"`
	ShellAllow           []string       `json:"shell_allow"`
	EnvAllow             []string       `json:"env_allow"`
	PlanSubmit           bool           `json:"plan_submit"`
	InstallSkill         []string       `json:"install_skill"`
	InstallTool          []string       `json:"install_tool"`
	InstallFrom          []string       `json:"install_from"`
	SpawnAllow           []string       `json:"spawn_allow"`
	SpawnWorkdirSnapshot []string       `json:"spawn_workdir_snapshot"`
	ConfiguredArtifacts  []string       `json:"configured_artifacts"`
	Artifacts            []ArtifactView `json:"artifacts"`
	Gateways             []GatewayView  `json:"gateways"`
	DoorAuthentication   bool           `json:"door_authentication"`
	DoorCredentials      []string       `json:"door_credentials"`
	PeerTasksAccept      bool           `json:"peer_tasks_accept"`
	ExportFilesRoot      string         `json:"export_files_root,omitempty"`
	ExportPeerFilesRoot  string         `json:"export_peer_files_root,omitempty"`
	ControlSettings      []string       `json:"control_settings"`
	ControlSecrets       []string       `json:"control_secrets"`
	ControlAgentSettings []string       `json:"control_agent_settings"`
}

// ArtifactView is one artifact's own grant.
type ArtifactView struct {
	Name         string `json:"name"`
	Runtime      string `json:"runtime"`
	ModelVisible bool   `json:"model_visible"`
	// Network is nil when the artifact inherits the capsule-wide ceiling.
	Network    []string `json:"network,omitempty"`
	Inherits   bool     `json:"inherits_ceiling"`
	Scope      string   `json:"filesystem_scope,omitempty"`
	Records    bool     `json:"records,omitempty"`
	StateStore string   `json:"state_store,omitempty"`
	TaskIORead bool     `json:"task_io_read,omitempty"`
	ConvRead   bool     `json:"conversation_read,omitempty"`
}

// GatewayView is one credential gateway, naming never a key's value.
type GatewayView struct {
	Artifact   string `json:"artifact"`
	Endpoint   string `json:"endpoint"`
	Credential string `json:"credential"` // ${NAME}, literal or keyless
	Metered    bool   `json:"metered"`
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// ExplainScope computes the effective grants of a valid capsule.
func ExplainScope(c *Capsule) Scope {
	e := c.Effective()
	cp := e.Capabilities
	s := Scope{
		Capsule: e.Name, Version: e.Version, Containment: floorText(cp.Containment),
		NetworkAllow: nonNil(cp.Network.Allow), UnixSockets: boolv(cp.Network.UnixSockets, false),
		FilesystemScope: *cp.Filesystem.Scope, ReadOnly: nonNil(cp.Filesystem.ReadOnly),
		WorkdirExec: boolv(cp.Filesystem.WorkdirExec, false), ShellAllow: nonNil(cp.shellAllow()),
		EnvAllow: nonNil(cp.Env.Allow), PlanSubmit: boolv(cp.Plan.Submit, false),
		PeerFetchAllow: []string{}, InstallSkill: []string{}, InstallTool: []string{}, InstallFrom: []string{},
		SpawnAllow: []string{}, SpawnWorkdirSnapshot: []string{}, ConfiguredArtifacts: []string{},
		Artifacts: []ArtifactView{}, Gateways: []GatewayView{}, DoorCredentials: []string{},
		ControlSettings: []string{}, ControlSecrets: []string{}, ControlAgentSettings: []string{},
		ReadOnlyAdvisoryFor: []string{},
	}
	if cp.PeerFetch != nil {
		s.PeerFetchAllow = nonNil(cp.PeerFetch.Allow)
	}
	if len(s.ReadOnly) > 0 {
		s.ReadOnlyEnforcement = "enforced"
		for _, b := range s.ShellAllow {
			if interpreters[b] {
				s.ReadOnlyAdvisoryFor = append(s.ReadOnlyAdvisoryFor, b)
			}
		}
		if len(s.ReadOnlyAdvisoryFor) > 0 {
			s.ReadOnlyEnforcement = "advisory"
		}
	}
	if in := cp.Install; in != nil {
		s.InstallSkill, s.InstallTool, s.InstallFrom = nonNil(in.Skill), nonNil(in.Tool), nonNil(in.From)
	}
	if sp := cp.Spawn; sp != nil {
		s.SpawnAllow, s.SpawnWorkdirSnapshot = nonNil(sp.Allow), nonNil(sp.WorkdirSnapshot)
	}
	metered := map[string]bool{}
	if e.Inference != nil && !e.Inference.IsProcess() {
		for k := range (&validator{c: e}).driverChoices() {
			metered[k] = true
		}
	}
	for _, a := range e.Artifacts {
		role := a.Role()
		v := ArtifactView{Name: a.Name, Runtime: role, ModelVisible: role == RoleTool || role == RoleSkill}
		if e.Inference != nil && e.Inference.SystemPromptArtifact == a.Name {
			v.ModelVisible = false
		}
		ac := a.Capabilities
		switch {
		case role == RoleSkill:
		case ac == nil || ac.Network == nil:
			v.Inherits = role != RoleHook
			if !v.Inherits {
				v.Network = []string{}
			}
		default:
			v.Network = narrowed(ac.Network.Allow, cp.Network.Allow, role == RoleHook)
		}
		if ac != nil {
			if ac.Filesystem != nil {
				if ac.Filesystem.Scope != nil {
					v.Scope = *ac.Filesystem.Scope
				}
				v.Records = boolv(ac.Filesystem.Records, false)
			}
			if ac.State != nil {
				v.StateStore = e.Name
				if ac.State.Store != nil {
					v.StateStore = *ac.State.Store
				}
			}
			if ac.TaskIO != nil {
				v.TaskIORead = boolv(ac.TaskIO.Read, false)
			}
			if ac.Conversation != nil {
				v.ConvRead = boolv(ac.Conversation.Read, false)
			}
		}
		s.Artifacts = append(s.Artifacts, v)
		if a.Config != nil {
			s.ConfiguredArtifacts = append(s.ConfiguredArtifacts, a.Name)
		}
		if g := a.Gateway; g != nil {
			cred := "literal"
			if name, ok := g.CredentialRef(); ok {
				cred = "${" + name + "}"
			} else if boolv(g.Keyless, false) {
				cred = "keyless"
			}
			s.Gateways = append(s.Gateways, GatewayView{Artifact: a.Name, Endpoint: g.Endpoint, Credential: cred, Metered: metered[a.Name]})
		}
	}
	if d := e.Network; d != nil && d.Authentication != nil {
		s.DoorAuthentication = true
		for name := range d.Authentication.Credentials {
			s.DoorCredentials = append(s.DoorCredentials, name)
		}
		sort.Strings(s.DoorCredentials)
	}
	if ex := e.Exports; ex != nil {
		if ex.PeerTasks != nil {
			s.PeerTasksAccept = ex.PeerTasks.Accept
		}
		if ex.Files != nil {
			s.ExportFilesRoot = ex.Files.Root
		}
		if ex.PeerFiles != nil {
			s.ExportPeerFilesRoot = ex.PeerFiles.Root
		}
	}
	if ctl := e.Control; ctl != nil {
		s.ControlSettings, s.ControlSecrets, s.ControlAgentSettings = nonNil(ctl.Settings), nonNil(ctl.Secrets), nonNil(ctl.AgentSettings)
	}
	return s
}

// narrowed is declaration ∩ ceiling for a tool or driver; a hook's grant
// is its own.
func narrowed(decl, ceiling []string, hook bool) []string {
	out := []string{}
	for _, d := range decl {
		de, err := ParseNetEntry(d)
		if err != nil {
			continue
		}
		if hook {
			out = append(out, d)
			continue
		}
		for _, c := range ceiling {
			if ce, err := ParseNetEntry(c); err == nil && ce.Covers(de) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}
