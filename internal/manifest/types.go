// Package manifest reads murmur.yaml: the artifact manifest mur build and
// mur publish read, and the capsule manifest mur run and mur doctor read.
// Decoding is strict and positional: every diagnostic names file, line,
// column and the field path. Defaults are applied in one place, Effective.
package manifest

import (
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/shell/syntax"
)

// Roles an artifact entry may take.
const (
	RoleTool   = "tool"
	RoleDriver = "driver"
	RoleHook   = "hook"
	RoleSkill  = "skill"
	// RoleCapsule is a script capsule's entry point: a component of the
	// murmur:runtime-guest capsule world (docs/script-capsules.md).
	RoleCapsule = "capsule"
)

// Capsule is a decoded capsule manifest. Optional scalars are pointers so
// that "absent" and "written as the default" stay distinct; Effective fills
// them in.
type Capsule struct {
	Name          string         `yaml:"name" json:"name"`
	Version       string         `yaml:"version" json:"version"`
	Artifacts     []ArtifactRef  `yaml:"artifacts,omitempty" json:"artifacts,omitempty"`
	Capabilities  *Capabilities  `yaml:"capabilities,omitempty" json:"capabilities,omitempty"`
	Network       *Door          `yaml:"network,omitempty" json:"network,omitempty"`
	Context       *Context       `yaml:"context,omitempty" json:"context,omitempty"`
	Observability *Observability `yaml:"observability,omitempty" json:"observability,omitempty"`
	Trace         *Trace         `yaml:"trace,omitempty" json:"trace,omitempty"`
	Inference     *Inference     `yaml:"inference,omitempty" json:"inference,omitempty"`
	Lifecycle     *Lifecycle     `yaml:"lifecycle,omitempty" json:"lifecycle,omitempty"`
	Exports       *Exports       `yaml:"exports,omitempty" json:"exports,omitempty"`
	Control       *Control       `yaml:"control,omitempty" json:"control,omitempty"`
	Deploy        *Deploy        `yaml:"deploy,omitempty" json:"deploy,omitempty"`

	// Artifact-manifest fields a capsule that is also published carries.
	// mur run takes no meaning from them.
	Runtime        string   `yaml:"runtime,omitempty" json:"runtime,omitempty"`
	Implementation string   `yaml:"implementation,omitempty" json:"implementation,omitempty"`
	Execution      string   `yaml:"execution,omitempty" json:"execution,omitempty"`
	RequiresFiles  []string `yaml:"requires_files,omitempty" json:"requires_files,omitempty"`
	Description    string   `yaml:"description,omitempty" json:"description,omitempty"`

	// File is the path the manifest was read from; Dir-relative fields
	// (system_prompt_file, source) resolve against its directory.
	File string              `yaml:"-" json:"-"`
	pos  map[string]diag.Pos `yaml:"-"`
	src  []byte
}

// Pos returns where field (a path such as artifacts[2].gateway.endpoint) was
// written; a field not written gives the file alone.
func (c *Capsule) Pos(field string) diag.Pos {
	if p, ok := c.pos[field]; ok {
		return p
	}
	return diag.Pos{File: c.File}
}

// ArtifactRef is one entry of artifacts:.
type ArtifactRef struct {
	Name          string        `yaml:"name" json:"name"`
	Version       string        `yaml:"version,omitempty" json:"version,omitempty"`
	Runtime       string        `yaml:"runtime,omitempty" json:"runtime,omitempty"`
	Source        string        `yaml:"source,omitempty" json:"source,omitempty"`
	LocalSource   *bool         `yaml:"local_source,omitempty" json:"local_source,omitempty"`
	PromptPayload *bool         `yaml:"prompt_payload,omitempty" json:"prompt_payload,omitempty"`
	Capabilities  *Capabilities `yaml:"capabilities,omitempty" json:"capabilities,omitempty"`
	Config        *Raw          `yaml:"config,omitempty" json:"config,omitempty"`
	Gateway       *Gateway      `yaml:"gateway,omitempty" json:"gateway,omitempty"`
	OnOverflow    string        `yaml:"on_overflow,omitempty" json:"on_overflow,omitempty"`
}

// Role is the entry's runtime with its default applied.
func (a ArtifactRef) Role() string {
	if a.Runtime == "" {
		return RoleTool
	}
	return a.Runtime
}

// BareName is the part after the scope: the tool name the model calls.
func (a ArtifactRef) BareName() string { return bareOf(a.Name) }

// Gateway is an entry's credential gateway block.
type Gateway struct {
	Endpoint string  `yaml:"endpoint" json:"endpoint"`
	APIKey   *string `yaml:"api_key,omitempty" json:"api_key,omitempty"`
	Keyless  *bool   `yaml:"keyless,omitempty" json:"keyless,omitempty"`
}

// CredentialRef returns NAME when api_key is a ${NAME} reference.
func (g *Gateway) CredentialRef() (string, bool) {
	if g == nil || g.APIKey == nil {
		return "", false
	}
	return CredentialRef(*g.APIKey)
}

// Capabilities is both the capsule-wide block and a per-artifact block;
// which keys apply where is decided by validation.
type Capabilities struct {
	Network      *NetworkCap `yaml:"network,omitempty" json:"network,omitempty"`
	PeerFetch    *PeerFetch  `yaml:"peer_fetch,omitempty" json:"peer_fetch,omitempty"`
	Filesystem   *Filesystem `yaml:"filesystem,omitempty" json:"filesystem,omitempty"`
	Shell        *Shell      `yaml:"shell,omitempty" json:"shell,omitempty"`
	Env          *EnvCap     `yaml:"env,omitempty" json:"env,omitempty"`
	Limits       *Limits     `yaml:"limits,omitempty" json:"limits,omitempty"`
	Resources    *Resources  `yaml:"resources,omitempty" json:"resources,omitempty"`
	Containment  string      `yaml:"containment,omitempty" json:"containment,omitempty"`
	Conversation *ReadGrant  `yaml:"conversation,omitempty" json:"conversation,omitempty"`
	TaskIO       *ReadGrant  `yaml:"task_io,omitempty" json:"task_io,omitempty"`
	State        *State      `yaml:"state,omitempty" json:"state,omitempty"`
	Plan         *Plan       `yaml:"plan,omitempty" json:"plan,omitempty"`
	Install      *Install    `yaml:"install,omitempty" json:"install,omitempty"`
	Spawn        *Spawn      `yaml:"spawn,omitempty" json:"spawn,omitempty"`
}

// NetworkCap is capabilities.network. Allow is non-nil when written, so an
// explicit [] (narrowed to nothing) differs from an absent list.
type NetworkCap struct {
	Allow       []string `yaml:"allow" json:"allow"`
	UnixSockets *bool    `yaml:"unix_sockets,omitempty" json:"unix_sockets,omitempty"`
}

// PeerFetch is capabilities.peer_fetch.
type PeerFetch struct {
	Allow []string `yaml:"allow" json:"allow"`
}

// Filesystem is capabilities.filesystem.
type Filesystem struct {
	Scope       *string  `yaml:"scope,omitempty" json:"scope,omitempty"`
	ReadOnly    []string `yaml:"read_only,omitempty" json:"read_only,omitempty"`
	WorkdirExec *bool    `yaml:"workdir_exec,omitempty" json:"workdir_exec,omitempty"`
	Records     *bool    `yaml:"records,omitempty" json:"records,omitempty"`

	roIdx []int // written index of each kept read_only entry
}

// Shell is capabilities.shell.
type Shell struct {
	Allow              []string             `yaml:"allow" json:"allow"`
	StripEnv           []string             `yaml:"strip_env,omitempty" json:"strip_env,omitempty"`
	BaselineEnv        []string             `yaml:"baseline_env,omitempty" json:"baseline_env,omitempty"`
	InterpreterRuntime []InterpreterRuntime `yaml:"interpreter_runtime,omitempty" json:"interpreter_runtime,omitempty"`
	StagedRuntime      []StagedRuntime      `yaml:"staged_runtime,omitempty" json:"staged_runtime,omitempty"`
}

// InterpreterRuntime widens one allowlisted binary to host directories.
type InterpreterRuntime struct {
	Binary string           `yaml:"binary" json:"binary"`
	Dirs   []InterpreterDir `yaml:"dirs" json:"dirs"`
}

// InterpreterDir is one host directory of an interpreter_runtime grant.
type InterpreterDir struct {
	Path    string `yaml:"path" json:"path"`
	ListDir bool   `yaml:"list_dir" json:"list_dir"`
}

// StagedRuntime bind-mounts a pinned runtime tree into a sealed root.
type StagedRuntime struct {
	Binary     string `yaml:"binary" json:"binary"`
	SourcePath string `yaml:"source_path" json:"source_path"`
	Pin        string `yaml:"pin" json:"pin"`
}

// EnvCap is capabilities.env.
type EnvCap struct {
	Allow []string `yaml:"allow" json:"allow"`
}

// Limits is capabilities.limits.
type Limits struct {
	MemoryBytes     *int64 `yaml:"memory_bytes,omitempty" json:"memory_bytes,omitempty"`
	TableElements   *int64 `yaml:"table_elements,omitempty" json:"table_elements,omitempty"`
	Instances       *int64 `yaml:"instances,omitempty" json:"instances,omitempty"`
	DeadlineSeconds *int64 `yaml:"deadline_seconds,omitempty" json:"deadline_seconds,omitempty"`
}

// Resources is capabilities.resources.
type Resources struct {
	MaxProcesses        *int64 `yaml:"max_processes,omitempty" json:"max_processes,omitempty"`
	MaxOpenFiles        *int64 `yaml:"max_open_files,omitempty" json:"max_open_files,omitempty"`
	MaxFileSizeBytes    *int64 `yaml:"max_file_size_bytes,omitempty" json:"max_file_size_bytes,omitempty"`
	CPUSeconds          *int64 `yaml:"cpu_seconds,omitempty" json:"cpu_seconds,omitempty"`
	MemoryBytes         *int64 `yaml:"memory_bytes,omitempty" json:"memory_bytes,omitempty"`
	CgroupMemoryBytes   *int64 `yaml:"cgroup_memory_bytes,omitempty" json:"cgroup_memory_bytes,omitempty"`
	CgroupPidsMax       *int64 `yaml:"cgroup_pids_max,omitempty" json:"cgroup_pids_max,omitempty"`
	CgroupCPUPercent    *int64 `yaml:"cgroup_cpu_percent,omitempty" json:"cgroup_cpu_percent,omitempty"`
	CgroupIOBytesPerSec *int64 `yaml:"cgroup_io_bytes_per_sec,omitempty" json:"cgroup_io_bytes_per_sec,omitempty"`
	WorkdirMaxBytes     *int64 `yaml:"workdir_max_bytes,omitempty" json:"workdir_max_bytes,omitempty"`
}

// ReadGrant is a task_io: or conversation: block.
type ReadGrant struct {
	Read *bool `yaml:"read" json:"read"`
}

// State is a capabilities.state block; Store empty means the capsule name.
type State struct {
	Store *string `yaml:"store,omitempty" json:"store,omitempty"`
}

// Plan is capabilities.plan.
type Plan struct {
	Submit *bool `yaml:"submit" json:"submit"`
}

// Install is capabilities.install.
type Install struct {
	Skill []string `yaml:"skill,omitempty" json:"skill,omitempty"`
	Tool  []string `yaml:"tool,omitempty" json:"tool,omitempty"`
	From  []string `yaml:"from,omitempty" json:"from,omitempty"`
}

// Spawn is capabilities.spawn.
type Spawn struct {
	Allow           []string `yaml:"allow,omitempty" json:"allow,omitempty"`
	WorkdirSnapshot []string `yaml:"workdir_snapshot,omitempty" json:"workdir_snapshot,omitempty"`
}

// Door is the top-level network: block, the capsule's A2A door.
type Door struct {
	InternalPort   *int64          `yaml:"internal_port,omitempty" json:"internal_port,omitempty"`
	Authentication *Authentication `yaml:"authentication,omitempty" json:"authentication,omitempty"`
}

// Authentication is network.authentication.
type Authentication struct {
	Scheme      string                 `yaml:"scheme" json:"scheme"`
	Credentials map[string]*Credential `yaml:"credentials,omitempty" json:"credentials,omitempty"`
}

// Credential is one extra door token and its scopes.
type Credential struct {
	Scopes []string `yaml:"scopes" json:"scopes"`
}

// Context is the context: block.
type Context struct {
	MaxTokens          *int64         `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	SeedBudget         *float64       `yaml:"seed_budget,omitempty" json:"seed_budget,omitempty"`
	SeedOverflowMargin *float64       `yaml:"seed_overflow_margin,omitempty" json:"seed_overflow_margin,omitempty"`
	Record             string         `yaml:"record,omitempty" json:"record,omitempty"`
	RecordStore        *string        `yaml:"record_store,omitempty" json:"record_store,omitempty"`
	Retain             *ContextRetain `yaml:"retain,omitempty" json:"retain,omitempty"`
	Images             *Images        `yaml:"images,omitempty" json:"images,omitempty"`
}

// ContextRetain bounds conversation records.
type ContextRetain struct {
	MaxMessages *int64 `yaml:"max_messages,omitempty" json:"max_messages,omitempty"`
	MaxAge      string `yaml:"max_age,omitempty" json:"max_age,omitempty"`
}

// Images is context.images.
type Images struct {
	Keep       *int64 `yaml:"keep,omitempty" json:"keep,omitempty"`
	MaxBytes   string `yaml:"max_bytes,omitempty" json:"max_bytes,omitempty"`
	MaxPerTurn *int64 `yaml:"max_per_turn,omitempty" json:"max_per_turn,omitempty"`
}

// Observability is the observability: block.
type Observability struct {
	OtelEndpoint string `yaml:"otel_endpoint,omitempty" json:"otel_endpoint,omitempty"`
	Eval         *Eval  `yaml:"eval,omitempty" json:"eval,omitempty"`
}

// Eval configures murmur/hook-eval.
type Eval struct {
	DatasetID string   `yaml:"dataset_id,omitempty" json:"dataset_id,omitempty"`
	Scorers   []Scorer `yaml:"scorers,omitempty" json:"scorers,omitempty"`
}

// Scorer is one eval scorer.
type Scorer struct {
	Type     string   `yaml:"type" json:"type"`
	Name     string   `yaml:"name,omitempty" json:"name,omitempty"`
	Max      *int64   `yaml:"max,omitempty" json:"max,omitempty"`
	Expected []string `yaml:"expected,omitempty" json:"expected,omitempty"`
}

// Trace is the trace: block.
type Trace struct {
	Capture string       `yaml:"capture,omitempty" json:"capture,omitempty"`
	Retain  *TraceRetain `yaml:"retain,omitempty" json:"retain,omitempty"`
}

// TraceRetain bounds kept sessions.
type TraceRetain struct {
	MaxSessions *int64 `yaml:"max_sessions,omitempty" json:"max_sessions,omitempty"`
	MaxAge      string `yaml:"max_age,omitempty" json:"max_age,omitempty"`
}

// Inference is the inference: block.
type Inference struct {
	Transport            string      `yaml:"transport,omitempty" json:"transport,omitempty"`
	Model                string      `yaml:"model,omitempty" json:"model,omitempty"`
	Driver               *DriverRef  `yaml:"driver,omitempty" json:"driver,omitempty"`
	MaxTurns             *int64      `yaml:"max_turns,omitempty" json:"max_turns,omitempty"`
	MaxTokens            *int64      `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	MaxSessionTokens     *int64      `yaml:"max_session_tokens,omitempty" json:"max_session_tokens,omitempty"`
	SystemPrompt         *string     `yaml:"system_prompt,omitempty" json:"system_prompt,omitempty"`
	SystemPromptFile     string      `yaml:"system_prompt_file,omitempty" json:"system_prompt_file,omitempty"`
	SystemPromptArtifact string      `yaml:"system_prompt_artifact,omitempty" json:"system_prompt_artifact,omitempty"`
	InstructionFiles     []string    `yaml:"instruction_files,omitempty" json:"instruction_files,omitempty"`
	ToolRefresh          string      `yaml:"tool_refresh,omitempty" json:"tool_refresh,omitempty"`
	Alternates           []Alternate `yaml:"alternates,omitempty" json:"alternates,omitempty"`
	Retry                *Retry      `yaml:"retry,omitempty" json:"retry,omitempty"`
	Command              string      `yaml:"command,omitempty" json:"command,omitempty"`
	Compaction           *Compaction `yaml:"compaction,omitempty" json:"compaction,omitempty"`
}

// IsProcess reports transport: process.
func (in *Inference) IsProcess() bool { return in != nil && in.Transport == "process" }

// DriverRef names a driver entry and its role-wide config.
type DriverRef struct {
	Artifact string `yaml:"artifact" json:"artifact"`
	Config   *Raw   `yaml:"config,omitempty" json:"config,omitempty"`
}

// Alternate is one inference.alternates entry: another driver choice.
type Alternate struct {
	Name   string    `yaml:"name" json:"name"`
	Model  string    `yaml:"model" json:"model"`
	Driver DriverRef `yaml:"driver" json:"driver"`
}

// Retry is inference.retry.
type Retry struct {
	MaxRetries     *int64 `yaml:"max_retries,omitempty" json:"max_retries,omitempty"`
	InitialDelayMS *int64 `yaml:"initial_delay_ms,omitempty" json:"initial_delay_ms,omitempty"`
	MaxDelayMS     *int64 `yaml:"max_delay_ms,omitempty" json:"max_delay_ms,omitempty"`
}

// Compaction is inference.compaction.
type Compaction struct {
	Threshold        *float64 `yaml:"threshold,omitempty" json:"threshold,omitempty"`
	Model            string   `yaml:"model,omitempty" json:"model,omitempty"`
	SystemPrompt     *string  `yaml:"system_prompt,omitempty" json:"system_prompt,omitempty"`
	SystemPromptFile string   `yaml:"system_prompt_file,omitempty" json:"system_prompt_file,omitempty"`
	DumpSummaries    *bool    `yaml:"dump_summaries,omitempty" json:"dump_summaries,omitempty"`
	MaxTokens        *int64   `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	DriverConfig     *Raw     `yaml:"driver_config,omitempty" json:"driver_config,omitempty"`
}

// Lifecycle is the lifecycle: block.
type Lifecycle struct {
	TaskAcceptance         string       `yaml:"task_acceptance,omitempty" json:"task_acceptance,omitempty"`
	AfterTask              string       `yaml:"after_task,omitempty" json:"after_task,omitempty"`
	QueueDepth             *int64       `yaml:"queue_depth,omitempty" json:"queue_depth,omitempty"`
	InputTimeoutSecs       *int64       `yaml:"input_timeout_secs,omitempty" json:"input_timeout_secs,omitempty"`
	Conversation           string       `yaml:"conversation,omitempty" json:"conversation,omitempty"`
	MaxTaskReopens         *int64       `yaml:"max_task_reopens,omitempty" json:"max_task_reopens,omitempty"`
	ShellGraceSecs         *int64       `yaml:"shell_grace_secs,omitempty" json:"shell_grace_secs,omitempty"`
	DelegationDeadlineSecs *int64       `yaml:"delegation_deadline_secs,omitempty" json:"delegation_deadline_secs,omitempty"`
	DeadlineNoticeSecs     *int64       `yaml:"deadline_notice_secs,omitempty" json:"deadline_notice_secs,omitempty"`
	KeepWorking            *KeepWorking `yaml:"keep_working,omitempty" json:"keep_working,omitempty"`
	DoneCheck              *DoneCheck   `yaml:"done_check,omitempty" json:"done_check,omitempty"`
}

// KeepWorking is lifecycle.keep_working.
type KeepWorking struct {
	Message string `yaml:"message" json:"message"`
	Limit   int64  `yaml:"limit" json:"limit"`
}

// DoneCheck is lifecycle.done_check.
type DoneCheck struct {
	Command     string `yaml:"command" json:"command"`
	Limit       int64  `yaml:"limit" json:"limit"`
	TimeoutSecs *int64 `yaml:"timeout_secs,omitempty" json:"timeout_secs,omitempty"`
}

// Argv is the check's command split into words as the shell tool splits a
// command (syntax.SplitArgs: quotes group, a backslash escapes, nothing
// expands), so validation and the runtime read the same words.
func (d *DoneCheck) Argv() ([]string, error) { return syntax.SplitArgs(d.Command) }

// Exports is the exports: block.
type Exports struct {
	Files     *FilesExport     `yaml:"files,omitempty" json:"files,omitempty"`
	PeerFiles *PeerFilesExport `yaml:"peer_files,omitempty" json:"peer_files,omitempty"`
	PeerTasks *PeerTasks       `yaml:"peer_tasks,omitempty" json:"peer_tasks,omitempty"`
}

// FilesExport is exports.files.
type FilesExport struct {
	Root     string `yaml:"root" json:"root"`
	Mode     string `yaml:"mode" json:"mode"`
	MaxBytes string `yaml:"max_bytes,omitempty" json:"max_bytes,omitempty"`
}

// PeerFilesExport is exports.peer_files.
type PeerFilesExport struct {
	Root     string `yaml:"root" json:"root"`
	MaxTTL   string `yaml:"max_ttl,omitempty" json:"max_ttl,omitempty"`
	MaxBytes string `yaml:"max_bytes,omitempty" json:"max_bytes,omitempty"`
}

// PeerTasks is exports.peer_tasks.
type PeerTasks struct {
	Accept bool `yaml:"accept" json:"accept"`
}

// Control is the control: block.
type Control struct {
	Settings      []string `yaml:"settings,omitempty" json:"settings,omitempty"`
	Secrets       []string `yaml:"secrets,omitempty" json:"secrets,omitempty"`
	AgentSettings []string `yaml:"agent_settings,omitempty" json:"agent_settings,omitempty"`
}

// Deploy is the deploy: block, read by mur deploy alone.
type Deploy struct {
	MurVersion string `yaml:"mur_version,omitempty" json:"mur_version,omitempty"`
}
