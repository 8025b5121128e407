package diag

// The code catalogue. Every E-/W- code the specification names is a constant
// here, with what it means. Codes are stable: never renumber one, never reuse
// a retired number. Catalogue (below) gives each a title and, when the
// manifest alone decides it, a minimal example that yields it; a test in
// internal/manifest runs every example. docs/diagnostics.md is generated from
// this table by `go run ./internal/diag/gendocs`.

// Build refusals (mur build, reading an artifact manifest).
const (
	// BldName: the artifact manifest's name is not a valid bare name
	// (lowercase letters, digits, inner hyphens, 1–100 characters, no scope).
	BldName Code = "E-BLD-001"
	// BldPath: a requires_files entry (or a local skill source) is absolute,
	// climbs with .., is a symlink, or the source folder is otherwise unsafe.
	BldPath Code = "E-BLD-002"
	// BldNoPayload: a wasm artifact declares no compiled payload in
	// requires_files, so the package would hold only murmur.yaml.
	BldNoPayload Code = "E-BLD-003"
	// BldInferenceAuth: the artifact manifest still uses inference_auth:, the
	// former name of upstream_auth:.
	BldInferenceAuth Code = "E-BLD-004"
	// BldModels: models: is malformed or declared on a non-driver artifact.
	BldModels Code = "E-BLD-005"
	// BldProviderTool: provider_tool: is malformed or declared on a driver,
	// hook or skill artifact.
	BldProviderTool Code = "E-BLD-006"
	// BldComponent: a wasm artifact's component (the first .wasm its
	// requires_files lists) is not a WebAssembly component wasmtime
	// compiles: a core module, another format, or a broken binary. The
	// payload checks are mur's own codes, numbered from 101 so the spec's
	// build codes can grow.
	BldComponent Code = "E-BLD-101"
	// BldWorld: the component does not export what its runtime: role
	// needs (murmur:tool/run for a tool or an HTTP driver,
	// murmur:driver/process for a process driver, murmur:hook/lifecycle
	// for a hook, murmur:capsule/run for a capsule) at the version this mur
	// serves, or imports a murmur: package at a version it does not serve.
	BldWorld Code = "E-BLD-102"
	// BldNative: a native artifact ships no executable for this platform
	// (no requires_files entry with its executable bit set, or one built
	// for another operating system or processor).
	BldNative Code = "E-BLD-103"
	// BldSkill: a skill artifact ships no skill.md, or one that is empty
	// or not UTF-8 text.
	BldSkill Code = "E-BLD-104"
)

// Capability refusals.
const (
	// CapNetworkEntry: a network allow entry is not a host, host:port or
	// scheme://host[:port] with scheme http or https.
	CapNetworkEntry Code = "E-CAP-001"
	// CapScope: a filesystem scope is absolute or escapes the workdir.
	CapScope Code = "E-CAP-002"
	// CapProviderToolFloor: a provider tool is declared but the effective
	// containment floor is below sealed.
	CapProviderToolFloor Code = "E-CAP-003"
	// CapStagedRuntimeFloor: shell.staged_runtime needs an effective sealed
	// containment floor.
	CapStagedRuntimeFloor Code = "E-CAP-004"
	// CapNetns: a subprocess tree (spawn.allow) needs a network namespace the
	// host cannot provide.
	CapNetns Code = "E-CAP-005"
	// CapInterpreterRuntime: an allowlisted interpreter's runtime cannot be
	// granted as declared on this host; invoke the module through the
	// interpreter instead.
	CapInterpreterRuntime Code = "E-CAP-006"
	// CapExportRoot: an export root resolves outside the workdir.
	CapExportRoot Code = "E-CAP-007"
	// CapPeerTTL: exports.peer_files.max_ttl is missing or above 15m under
	// lifecycle.after_task: sleep.
	CapPeerTTL Code = "E-CAP-008"
	// CapStateStore: a capabilities.state.store name is not a single safe
	// path segment.
	CapStateStore Code = "E-CAP-009"
	// CapConfigShape: an artifacts[].config block cannot travel as one JSON
	// environment variable (not a mapping, non-string key, too large).
	CapConfigShape Code = "E-CAP-010"
	// CapRecordStore: context.record_store is not a single safe path segment.
	CapRecordStore Code = "E-CAP-011"
	// CapReadOnly: a filesystem.read_only entry is absolute or escapes the
	// workdir.
	CapReadOnly Code = "E-CAP-012"
	// CapEnvCredential: capabilities.env.allow names a variable the
	// credential backstop or shell.strip_env removes.
	CapEnvCredential Code = "E-CAP-016"
	// CapGatewayNative: gateway: on a tool whose artifact is native.
	CapGatewayNative Code = "E-CAP-017"
	// CapGatewayKey: a gateway: has neither a non-blank api_key nor
	// keyless: true.
	CapGatewayKey Code = "E-CAP-018"
	// CapProcessEnv: a process driver requires a variable that
	// capabilities.env.allow does not declare.
	CapProcessEnv Code = "E-CAP-019"
	// CapDuplicateTool: two artifacts share a bare name, the tool name the
	// model calls.
	CapDuplicateTool Code = "E-CAP-020"
)

// Manifest, I/O, registry, deploy and WIT refusals.
const (
	// ManType: a field's value has the wrong YAML type, or the file is not a
	// YAML mapping at all.
	ManType Code = "E-MAN-002"
	// ManInvalid: a field is invalid, missing, misplaced or refused by a rule
	// the manifest alone decides.
	ManInvalid Code = "E-MAN-003"
	// MCPToken: a request to an MCP tool server (the loopback server of a
	// process-transport session, mur mcp --http) carries no bearer token or
	// not the session's. mur's own, as are the E-MCP codes below.
	MCPToken Code = "E-MCP-001"
	// MCPMalformed: a message to an MCP tool server is not JSON, or not a
	// JSON-RPC 2.0 message.
	MCPMalformed Code = "E-MCP-002"
	// MCPTooLarge: a message to an MCP tool server is larger than the
	// server's message limit (tool arguments included).
	MCPTooLarge Code = "E-MCP-003"
	// MCPUnknownTool: tools/call names a tool the capsule does not serve.
	MCPUnknownTool Code = "E-MCP-004"
	// MCPArguments: tools/call's arguments are not a JSON object, or miss a
	// field the tool's input_schema requires; the tool does not run.
	MCPArguments Code = "E-MCP-005"
	// IONotFound: a local source path or its skill.md does not exist.
	IONotFound Code = "E-IO-001"
	// IOMissingFile: a requires_files entry is missing from the source dir.
	IOMissingFile Code = "E-IO-003"
	// RegNotFound: no source in the resolution order holds the artifact
	// version. mur's own code (the spec names none).
	RegNotFound Code = "E-REG-001"
	// RegUnreachable: a registry did not answer, or answered 5xx. mur's own.
	RegUnreachable Code = "E-REG-002"
	// RegAuth: a registry refused the credentials. mur's own.
	RegAuth Code = "E-REG-003"
	// RegReservedVersion: latest, stable and edge cannot be published.
	RegReservedVersion Code = "E-REG-004"
	// RegDigest: fetched bytes differ from the digest their source reports,
	// or a store's blob no longer matches its name. mur's own.
	RegDigest Code = "E-REG-005"
	// RegPin: the bytes differ from the murmur.lock pin. mur's own.
	RegPin Code = "E-REG-006"
	// RegPackage: the package was refused as hostile or malformed (zip-slip,
	// symlinks, bombs, duplicates). mur's own.
	RegPackage Code = "E-REG-007"
	// RegMismatch: a package's own murmur.yaml names another artifact or
	// version. mur's own.
	RegMismatch Code = "E-REG-008"
	// RegPublished: the version is already published with other bytes;
	// versions are immutable. mur's own.
	RegPublished Code = "E-REG-009"
	// RegLock: murmur.lock is malformed. mur's own.
	RegLock Code = "E-REG-010"
	// RegModels: a packed driver's models: block is malformed at install or
	// publish.
	RegModels Code = "E-REG-011"
	// RegSource: a command names a registry config.yaml does not define,
	// or needs a registry and the resolution order has none. mur's own.
	RegSource Code = "E-REG-012"
	// RegUnsigned: config.yaml's trusted_keys demands a signature for the
	// artifact's scope and its source holds none. mur's own.
	RegUnsigned Code = "E-REG-013"
	// RegUntrusted: the artifact is signed, but by no key trusted for its
	// scope. mur's own.
	RegUntrusted Code = "E-REG-014"
	// RegSignature: a signature by a trusted key does not verify against
	// the artifact's bytes (tampered payload or signature), or is
	// malformed. mur's own.
	RegSignature Code = "E-REG-015"
	// RegScopeSource: the artifact's scope has no source in config.yaml
	// where one is needed, or the GitHub repository its source names does
	// not exist. mur's own.
	RegScopeSource Code = "E-REG-016"
	// RegOwner: the GitHub account owning a scope's source is not the one
	// murmur.lock recorded for that scope (renamed, deleted and
	// re-registered, or transferred). mur's own.
	RegOwner Code = "E-REG-017"
	// RegAsset: a scope source's release for the version holds no
	// .mur.zip asset for the artifact. mur's own.
	RegAsset Code = "E-REG-018"
	// RegKeyless: the artifact's only signatures are keyless (a Fulcio
	// certificate and Rekor entries), which mur does not verify, where
	// trusted_keys demands a signature. mur's own.
	RegKeyless Code = "E-REG-019"
	// DeployVersion: a dev build of mur has no release to deploy and no
	// deploy.mur_version or --mur-binary was given.
	DeployVersion Code = "E-DEPLOY-006"
	// WITLevel: an artifact exports only another version of an interface
	// than the served WIT level lists.
	WITLevel Code = "E-WIT-LEVEL-001"
)

// Run-time refusals (mur run, staging and the session).
const (
	// RunNotInstalled: a named driver or process binary cannot be resolved.
	RunNotInstalled Code = "E-RUN-006"
	// RunPromptFile: inference.system_prompt_file is missing or unreadable.
	RunPromptFile Code = "E-RUN-009"
	// RunPortInUse: network.internal_port is already bound.
	RunPortInUse Code = "E-RUN-010"
	// RunWorkdirSize: the work folder passed resources.workdir_max_bytes.
	RunWorkdirSize Code = "E-RUN-013"
	// RunRoost: spawn.allow is set but no mur-roost daemon is reachable.
	RunRoost Code = "E-RUN-019"
	// RunUpstreamAuth: an entry with gateway: names an artifact whose own
	// upstream_auth: is absent or malformed (or still inference_auth:).
	RunUpstreamAuth Code = "E-RUN-025"
	// RunCredentialRejected: the inference upstream answered 401.
	RunCredentialRejected Code = "E-RUN-027"
	// RunNoProcessInterface: a process driver exports no
	// murmur:driver/process.
	RunNoProcessInterface Code = "E-RUN-029"
	// RunProcessOnHTTP: a transport: http driver exports the process
	// interface.
	RunProcessOnHTTP Code = "E-RUN-030"
	// RunDescribe: a process driver did not instantiate or describe() gave
	// unusable variable names.
	RunDescribe Code = "E-RUN-032"
	// RunHarnessTurn: a harness passed the turn limit or reported a failed
	// turn.
	RunHarnessTurn Code = "E-RUN-033"
	// RunHarnessIdle: a harness was silent for 600 seconds.
	RunHarnessIdle Code = "E-RUN-035"
	// RunHarnessSession: the harness cannot find the session it is resumed
	// on.
	RunHarnessSession Code = "E-RUN-036"
	// RunNoUsage: a spend ceiling is set but the process driver reports no
	// usage.
	RunNoUsage Code = "E-RUN-038"
	// RunTaskFailed: the task failed (spend ceiling, provider error …).
	RunTaskFailed Code = "E-RUN-040"
	// RunModels: a stored driver's models: is malformed, or a driver choice
	// has no output cap from either the manifest or the driver's table.
	RunModels Code = "E-RUN-052"
	// RunCompactionCap: inference.compaction.max_tokens exceeds the
	// compaction model's max_output_tokens.
	RunCompactionCap Code = "E-RUN-054"
	// RunNoInputBudget: an output cap is at or above its context window.
	RunNoInputBudget Code = "E-RUN-055"
	// RunVision: a computer tool is declared and a driver choice's model is
	// vision: false.
	RunVision Code = "E-RUN-057"
	// RunProviderTool: a stored artifact's provider_tool: is malformed.
	RunProviderTool Code = "E-RUN-058"
	// RunNotHonoured: the capsule declares a manifest field this build of
	// mur does not carry out (manifest.Fields lists it as refused); it is
	// refused at launch rather than run without it. mur's own.
	RunNotHonoured Code = "E-RUN-900"
	// RunResume: mur run --resume names a session this capsule cannot
	// continue — none by that id among its sessions, one that ran no task,
	// or context.record: off. mur's own.
	RunResume Code = "E-RUN-901"
	// RunConversationRecord: the conversation record a launch or task
	// opens cannot be read (a damaged line) or written. mur's own.
	RunConversationRecord Code = "E-RUN-902"
	// RunReplayCapture: mur replay names a session recorded under
	// trace.capture none or meta: its trace keeps no model answers
	// (blobs/) to serve, so it cannot be replayed. mur's own.
	RunReplayCapture Code = "E-RUN-903"
	// RunReplayRecords: mur replay cannot replay the session as recorded:
	// a blob its trace names is missing or not the bytes its hash says, a
	// task continued an earlier conversation, the recording belongs to
	// another capsule, or its driver speaks a wire replay does not serve.
	// mur's own.
	RunReplayRecords Code = "E-RUN-904"
	// RunInstall: a running session's pull or removal (the pull-artifact
	// and remove-artifact tools, manage.pull and manage.remove) is
	// refused: a name or version not of the form a pull takes, an
	// artifact capabilities.install does not admit for its kind, a driver
	// or hook, a role its payload does not match, one the capsule
	// declares or did not pull, or a tool name already in the session.
	// Nothing is installed, removed or pinned. mur's own.
	RunInstall Code = "E-RUN-905"
	// SpendMeter: the machine spend meter's file (spend.machine_tokens_per_day)
	// is damaged; it is refused rather than read as 0 used. mur's own.
	SpendMeter Code = "E-SPEND-001"
)

// Warnings.
const (
	// RosterQueue: more roster members may call a member than its queue
	// holds.
	RosterQueue Code = "W-ROS-001"
	// RunFragment: a turn was cut at the output cap.
	RunFragment Code = "W-RUN-001"
	// RunHarnessVersion: the harness version is untested or unreadable.
	RunHarnessVersion Code = "W-RUN-002"
	// RunAlternateUnavailable: an alternate's credential is found nowhere;
	// it is staged unavailable.
	RunAlternateUnavailable Code = "W-RUN-003"
	// RunSchemaUnchecked: a tool's input_schema cannot be checked (root not
	// an object, or required not a list of strings).
	RunSchemaUnchecked Code = "W-RUN-004"
	// RunModelUnlisted: a driver choice's model is not in its driver's
	// models: table and the manifest does not set both limits.
	RunModelUnlisted Code = "W-RUN-009"
	// SecNoKernelEnforcement: the host has no kernel enforcement for a
	// declared control (e.g. unix_sockets off a Linux host).
	SecNoKernelEnforcement Code = "W-SEC-001"
	// SecLiteralSecret: a credential is written as a literal in the manifest.
	SecLiteralSecret Code = "W-SEC-004"
	// SecHookInert: a hook entry declares a capability that does not govern
	// hooks.
	SecHookInert Code = "W-SEC-006"
	// SecNarrowDropped: a per-artifact network entry is not covered by the
	// capsule-wide ceiling and is dropped.
	SecNarrowDropped Code = "W-SEC-007"
	// SecArtifactInert: a tool or driver entry declares a capability that
	// does not apply to it.
	SecArtifactInert Code = "W-SEC-008"
	// SecInterpreterRuntime: shell.interpreter_runtime widens filesystem
	// access outside the workdir.
	SecInterpreterRuntime Code = "W-SEC-009"
	// SecWorkdirExec: filesystem.workdir_exec makes the workdir executable.
	SecWorkdirExec Code = "W-SEC-011"
	// SecCapsuleState: capabilities.state in the capsule-wide block reaches
	// nothing.
	SecCapsuleState Code = "W-SEC-014"
	// SecCapsuleConversation: capabilities.conversation in the capsule-wide
	// block reaches nothing.
	SecCapsuleConversation Code = "W-SEC-016"
	// SecReadOnlyInterpreter: read_only cannot be enforced against an
	// allowlisted interpreter's own file I/O.
	SecReadOnlyInterpreter Code = "W-SEC-017"
	// SecReadOnlyUndeclared: a tool leaves path-shaped input properties to
	// the key-name rules under read_only.
	SecReadOnlyUndeclared Code = "W-SEC-018"
	// SecUnknownKey: an unrecognized key grants nothing.
	SecUnknownKey Code = "W-SEC-019"
	// SecIOMaxUnavailable: cgroup io.max cannot be applied to the workdir's
	// device.
	SecIOMaxUnavailable Code = "W-SEC-021"
	// SecEnvCredentialShaped: an env.allow name looks like a credential.
	SecEnvCredentialShaped Code = "W-SEC-024"
	// SecGatewayAllowed: a network allow entry names a gateway's upstream.
	SecGatewayAllowed Code = "W-SEC-025"
	// SecKeyFromEnv: a key was read from the environment or as a literal.
	SecKeyFromEnv Code = "W-SEC-027"
	// SecUnmeteredGateway: a gateway not serving an inference choice is not
	// metered by the spend ceilings.
	SecUnmeteredGateway Code = "W-SEC-030"
)
