package diag

// Kind says which manifest an example is.
type Kind string

const (
	// Capsule examples are capsule manifests, run through capsule validation.
	Capsule Kind = "capsule"
	// Artifact examples are artifact manifests, run through the build checks.
	Artifact Kind = "artifact"
)

// Entry is one row of the catalogue.
type Entry struct {
	Code  Code
	Title string
	// Kind and Example: a minimal manifest that yields Code. Empty when the
	// code cannot be decided from a manifest alone; Decided then says when
	// it is.
	Kind    Kind
	Example string
	Decided string
}

const hdr = "name: c\nversion: \"1\"\n"

// Catalogue lists every code in code order.
var Catalogue = []Entry{
	{Code: BldName, Title: "artifact name is not a valid bare name", Kind: Artifact,
		Example: "name: ana/tool\nversion: \"1\"\nruntime: tool\nrequires_files: [tool.wasm]\n"},
	{Code: BldPath, Title: "requires_files entry is not a plain relative path", Kind: Artifact,
		Example: "name: t\nversion: \"1\"\nruntime: tool\nrequires_files: [../tool.wasm]\n"},
	{Code: BldNoPayload, Title: "wasm artifact declares no compiled payload", Kind: Artifact,
		Example: "name: t\nversion: \"1\"\nruntime: tool\n"},
	{Code: BldInferenceAuth, Title: "inference_auth: is the former name of upstream_auth:", Kind: Artifact,
		Example: "name: t\nversion: \"1\"\nruntime: tool\nrequires_files: [t.wasm]\ninference_auth: {header: Authorization, value: \"Bearer {key}\"}\n"},
	{Code: BldModels, Title: "models: malformed or not on a driver", Kind: Artifact,
		Example: "name: t\nversion: \"1\"\nruntime: tool\nrequires_files: [t.wasm]\nmodels: {m: {max_output_tokens: 1, context_window: 2}}\n"},
	{Code: BldProviderTool, Title: "provider_tool: malformed or not on a tool", Kind: Artifact,
		Example: "name: t\nversion: \"1\"\nruntime: tool\nrequires_files: [t.wasm]\nprovider_tool: {kind: printer, display_width: 1, display_height: 1}\n"},
	{Code: BldComponent, Title: "wasm payload is not a component wasmtime compiles", Decided: "by mur build: reads and compiles the payload"},
	{Code: BldWorld, Title: "component does not fit its role at a served WIT version", Decided: "by mur build: reads the compiled component's exports and imports"},
	{Code: BldNative, Title: "native artifact ships no executable for this platform", Decided: "by mur build: reads the payload's executable"},
	{Code: BldSkill, Title: "skill ships no usable skill.md", Decided: "by mur build: reads the payload's skill.md"},
	{Code: CapNetworkEntry, Title: "malformed network allow entry", Kind: Capsule,
		Example: hdr + "capabilities:\n  network:\n    allow: [\"https://api.example.com/v1\"]\n"},
	{Code: CapScope, Title: "filesystem scope is absolute or escapes the workdir", Kind: Capsule,
		Example: hdr + "capabilities:\n  filesystem:\n    scope: ../up\n"},
	{Code: CapProviderToolFloor, Title: "provider tool needs a sealed containment floor", Kind: Capsule,
		Decided: "at staging: needs the installed tool's own provider_tool: block (manifest.CheckProviderTools)"},
	{Code: CapStagedRuntimeFloor, Title: "staged_runtime needs a sealed containment floor", Kind: Capsule,
		Example: hdr + "capabilities:\n  shell:\n    allow: [python3]\n    staged_runtime:\n      - {binary: python3, source_path: /opt/py, pin: p1}\n"},
	{Code: CapNetns, Title: "a subprocess tree needs a network namespace", Decided: "at launch: probes the host for network namespaces"},
	{Code: CapInterpreterRuntime, Title: "interpreter runtime cannot be granted on this host", Decided: "at launch: depends on the host's interpreter layout"},
	{Code: CapExportRoot, Title: "export root resolves outside the workdir", Decided: "at launch: depends on symlinks in the work folder"},
	{Code: CapPeerTTL, Title: "peer_files.max_ttl missing or above 15m under after_task: sleep", Kind: Capsule,
		Example: hdr + "lifecycle:\n  task_acceptance: queue\n  after_task: sleep\nexports:\n  peer_files:\n    root: out/\n"},
	{Code: CapStateStore, Title: "state store name is not one path segment", Kind: Capsule,
		Example: hdr + "artifacts:\n  - name: a/t\n    version: \"1\"\n    capabilities:\n      state:\n        store: ../x\n"},
	{Code: CapConfigShape, Title: "artifact config cannot travel as JSON", Kind: Capsule,
		Example: hdr + "artifacts:\n  - name: a/t\n    version: \"1\"\n    config: [1, 2]\n"},
	{Code: CapRecordStore, Title: "context.record_store is not one path segment", Kind: Capsule,
		Example: hdr + "context:\n  record_store: a/b\n"},
	{Code: CapReadOnly, Title: "read_only entry is absolute or escapes the workdir", Kind: Capsule,
		Example: hdr + "capabilities:\n  filesystem:\n    read_only: [/etc]\n"},
	{Code: CapEnvCredential, Title: "env.allow names a stripped credential", Kind: Capsule,
		Example: hdr + "capabilities:\n  env:\n    allow: [ANTHROPIC_API_KEY]\n"},
	{Code: CapGatewayNative, Title: "gateway: on a native tool", Kind: Capsule,
		Decided: "at staging: needs the installed tool's implementation (manifest.CheckGateways)"},
	{Code: CapGatewayKey, Title: "gateway has no api_key and is not keyless", Kind: Capsule,
		Example: hdr + "artifacts:\n  - name: a/t\n    version: \"1\"\n    gateway:\n      endpoint: https://api.example.com\n"},
	{Code: CapProcessEnv, Title: "process driver needs an undeclared env var", Decided: "at launch: needs the process driver's describe()"},
	{Code: CapDuplicateTool, Title: "two artifacts share a bare name", Kind: Capsule,
		Example: hdr + "artifacts:\n  - {name: a/t, version: \"1\"}\n  - {name: b/t, version: \"1\"}\n"},
	{Code: DeployVersion, Title: "no release to deploy for a dev mur", Decided: "by mur deploy run: depends on the running mur's version"},
	{Code: IONotFound, Title: "local source path not found", Decided: "at launch: reads the local source from disk"},
	{Code: IOMissingFile, Title: "a requires_files entry is missing", Decided: "by mur build: reads the source directory (manifest.LoadArtifact)"},
	{Code: ManType, Title: "a value has the wrong type", Kind: Capsule,
		Example: hdr + "exports:\n  peer_tasks:\n    accept: maybe\n"},
	{Code: ManInvalid, Title: "invalid or refused manifest field", Kind: Capsule,
		Example: hdr + "registry: https://example.com\n"},
	{Code: MCPToken, Title: "MCP request without the session's bearer token", Decided: "by the MCP tool server, on each HTTP request"},
	{Code: MCPMalformed, Title: "MCP message is not JSON-RPC", Decided: "by the MCP tool server, on each message"},
	{Code: MCPTooLarge, Title: "MCP message over the server's limit", Decided: "by the MCP tool server, on each message"},
	{Code: MCPUnknownTool, Title: "tools/call names no served tool", Decided: "by the MCP tool server, on tools/call"},
	{Code: MCPArguments, Title: "tools/call arguments not an object or missing a required field", Decided: "by the MCP tool server, on tools/call"},
	{Code: RegNotFound, Title: "artifact version not found in any source", Decided: "by mur install and runtime pulls, asking each source in the resolution order"},
	{Code: RegUnreachable, Title: "registry unreachable", Decided: "by mur install and mur publish, contacting a registry"},
	{Code: RegAuth, Title: "registry refused the credentials", Decided: "by mur install and mur publish, contacting a registry"},
	{Code: RegReservedVersion, Title: "reserved version cannot be published", Kind: Artifact,
		Example: "name: t\nversion: latest\nruntime: tool\nrequires_files: [t.wasm]\n"},
	{Code: RegDigest, Title: "bytes differ from their reported digest", Decided: "by mur install, launch staging and runtime pulls, hashing what was fetched"},
	{Code: RegPin, Title: "bytes differ from the murmur.lock pin", Decided: "by mur install, launch staging and runtime pulls, comparing with murmur.lock"},
	{Code: RegPackage, Title: "package refused as hostile or malformed", Decided: "when a .mur.zip is opened (artifact.Open)"},
	{Code: RegMismatch, Title: "package's own manifest names another artifact", Decided: "by mur install, reading the packed murmur.yaml"},
	{Code: RegPublished, Title: "version already published with other bytes", Decided: "by mur publish"},
	{Code: RegLock, Title: "murmur.lock is malformed", Decided: "whenever murmur.lock is read"},
	{Code: RegModels, Title: "packed driver's models: is malformed", Decided: "by mur install and mur publish, reading a packed artifact"},
	{Code: RegSource, Title: "no such registry in config.yaml", Decided: "by mur install and mur search, reading --registry and the resolution order"},
	{Code: RegUnsigned, Title: "artifact unsigned where trusted_keys demands a signature", Decided: "by mur install and a running session's pull, reading config.yaml's trusted_keys and the signatures attached in the source"},
	{Code: RegUntrusted, Title: "artifact signed by no trusted key", Decided: "by mur install and a session's pull, verifying the attached signatures against trusted_keys; at launch, for a pin whose recorded signing key trusted_keys no longer trusts"},
	{Code: RegSignature, Title: "signature does not verify against the artifact's bytes", Decided: "by mur install and a session's pull, verifying the attached signatures against trusted_keys; at launch, re-verifying the bundle a pin's verified: names (missing, changed or no longer verifying)"},
	{Code: RegScopeSource, Title: "no usable source for the artifact's scope", Decided: "by mur install, reading sources: in config.yaml and asking the GitHub API for the repository"},
	{Code: RegOwner, Title: "scope source's owner differs from the one murmur.lock recorded", Decided: "by mur install, comparing the repository owner's GitHub id with murmur.lock's owner_id"},
	{Code: RegAsset, Title: "scope source's release has no asset for the artifact", Decided: "by mur install, listing the assets of the release tagged with the version"},
	{Code: RegKeyless, Title: "keyless signature, which this mur does not verify", Decided: "by mur install and a session's pull, where trusted_keys demands a signature and every attached bundle is keyless (or by an untrusted key)"},
	{Code: RunNotInstalled, Title: "driver or harness binary not installed", Decided: "at staging: needs the installed artifacts (manifest.CheckDrivers)"},
	{Code: RunPromptFile, Title: "system_prompt_file missing or unreadable", Decided: "at launch and by mur doctor: reads the prompt file (manifest.CheckPromptFiles)"},
	{Code: RunPortInUse, Title: "internal_port already in use", Decided: "at launch: binds the port"},
	{Code: RunWorkdirSize, Title: "work folder passed its size ceiling", Decided: "while the session runs"},
	{Code: RunRoost, Title: "no mur-roost daemon reachable", Decided: "at launch: contacts MURMUR_ROOST_URL"},
	{Code: RunUpstreamAuth, Title: "artifact has no usable upstream_auth:", Decided: "at staging: needs the installed artifact's manifest (manifest.CheckGateways)"},
	{Code: RunCredentialRejected, Title: "inference upstream rejected the credential", Decided: "while the session runs"},
	{Code: RunNoProcessInterface, Title: "driver exports no process interface", Decided: "at launch: inspects the driver component"},
	{Code: RunProcessOnHTTP, Title: "http driver exports the process interface", Decided: "at launch: inspects the driver component"},
	{Code: RunDescribe, Title: "process driver describe() failed", Decided: "at launch: instantiates the process driver"},
	{Code: RunHarnessTurn, Title: "harness turn limit or failed turn", Decided: "while the session runs"},
	{Code: RunHarnessIdle, Title: "harness inactive for 600 seconds", Decided: "while the session runs"},
	{Code: RunHarnessSession, Title: "harness session not found", Decided: "while the session runs"},
	{Code: RunNoUsage, Title: "spend ceiling on a driver that reports no usage", Decided: "at launch: needs the process driver's describe()"},
	{Code: RunTaskFailed, Title: "the task failed", Decided: "while the session runs"},
	{Code: RunModels, Title: "driver models: malformed or no output cap", Decided: "at staging: needs the driver's models: table (manifest.ResolveLimits)"},
	{Code: RunCompactionCap, Title: "compaction max_tokens above the model's output cap", Decided: "at staging: needs the driver's models: table (manifest.ResolveLimits)"},
	{Code: RunNoInputBudget, Title: "output cap leaves no input budget", Decided: "at staging: needs the driver's models: table (manifest.ResolveLimits)"},
	{Code: RunVision, Title: "computer tool on a model without vision", Decided: "at staging: needs the driver's models: table (manifest.CheckProviderTools)"},
	{Code: RunProviderTool, Title: "stored artifact's provider_tool: is malformed", Decided: "at staging: needs the installed tool's manifest (manifest.CheckProviderTools)"},
	{Code: RunNotHonoured, Title: "declared field not carried out by this build of mur", Decided: "at launch (mur run, mur doctor): manifest.Capsule.Unhonoured checks the written fields against manifest.Fields"},
	{Code: RunResume, Title: "session cannot be resumed", Decided: "at launch (mur run --resume): reads the named session's trace.jsonl"},
	{Code: RunConversationRecord, Title: "conversation record cannot be read or written", Decided: "at launch (mur run --context, --resume) and as a task opens its context's record"},
	{Code: RunReplayCapture, Title: "session recorded below trace.capture: content", Decided: "by mur replay: reads the session's trace.jsonl"},
	{Code: RunReplayRecords, Title: "session cannot be replayed as recorded", Decided: "by mur replay: reads the session's trace.jsonl and blobs/"},
	{Code: RunInstall, Title: "pull or removal refused in a running session", Decided: "while the session runs: a pull or removal checks capabilities.install, the stores and murmur.lock"},
	{Code: SpendMeter, Title: "machine spend meter file is damaged", Decided: "whenever a run admits or settles a call under spend.machine_tokens_per_day"},
	{Code: WITLevel, Title: "interface version not served by this WIT level", Decided: "at launch or pull: inspects the component's exports"},
	{Code: RosterQueue, Title: "roster member's queue smaller than its callers", Decided: "by mur run --roster: needs the roster"},
	{Code: RunFragment, Title: "turn cut at the output cap", Decided: "while the session runs"},
	{Code: RunHarnessVersion, Title: "harness version untested or unreadable", Decided: "at launch: runs the harness's version check"},
	{Code: RunAlternateUnavailable, Title: "alternate's credential found nowhere", Decided: "at launch: resolves credentials (manifest.CheckCredentials)"},
	{Code: RunSchemaUnchecked, Title: "tool input_schema cannot be checked", Decided: "while the session runs, once per tool"},
	{Code: RunModelUnlisted, Title: "model not in the driver's models: table", Decided: "at staging: needs the driver's models: table (manifest.ResolveLimits)"},
	{Code: SecNoKernelEnforcement, Title: "no kernel enforcement on this host", Decided: "at launch: probes the host"},
	{Code: SecLiteralSecret, Title: "credential written as a literal", Kind: Capsule,
		Example: hdr + "artifacts:\n  - name: a/t\n    version: \"1\"\n    gateway:\n      endpoint: https://api.example.com\n      api_key: sk-literal\n"},
	{Code: SecHookInert, Title: "capability does not govern hooks", Kind: Capsule,
		Example: hdr + "artifacts:\n  - name: a/h\n    version: \"1\"\n    runtime: hook\n    capabilities:\n      shell:\n        allow: [bash]\n"},
	{Code: SecNarrowDropped, Title: "narrowed network entry outside the ceiling", Kind: Capsule,
		Example: hdr + "capabilities:\n  network:\n    allow: [https://a.example.com]\nartifacts:\n  - name: a/t\n    version: \"1\"\n    capabilities:\n      network:\n        allow: [b.example.com]\n"},
	{Code: SecArtifactInert, Title: "capability does not apply to a tool or driver", Kind: Capsule,
		Example: hdr + "artifacts:\n  - name: a/t\n    version: \"1\"\n    capabilities:\n      env:\n        allow: [X]\n"},
	{Code: SecInterpreterRuntime, Title: "interpreter_runtime widens host access", Kind: Capsule,
		Example: hdr + "capabilities:\n  shell:\n    allow: [python3]\n    interpreter_runtime:\n      - binary: python3\n        dirs:\n          - {path: /usr/lib/python3, list_dir: true}\n"},
	{Code: SecWorkdirExec, Title: "workdir made executable", Kind: Capsule,
		Example: hdr + "capabilities:\n  filesystem:\n    workdir_exec: true\n"},
	{Code: SecCapsuleState, Title: "capsule-wide state reaches nothing", Kind: Capsule,
		Example: hdr + "capabilities:\n  state:\n    store: s\n"},
	{Code: SecCapsuleConversation, Title: "capsule-wide conversation reaches nothing", Kind: Capsule,
		Example: hdr + "capabilities:\n  conversation:\n    read: true\n"},
	{Code: SecReadOnlyInterpreter, Title: "read_only is advisory against an interpreter", Kind: Capsule,
		Example: hdr + "capabilities:\n  filesystem:\n    read_only: [tests]\n  shell:\n    allow: [bash]\n"},
	{Code: SecReadOnlyUndeclared, Title: "tool input left to the key-name rules", Decided: "at staging: needs each installed tool's input_schema (manifest.CheckReadOnlyTools)"},
	{Code: SecUnknownKey, Title: "unrecognized key", Kind: Capsule,
		Example: hdr + "colour: blue\n"},
	{Code: SecIOMaxUnavailable, Title: "io.max unavailable for the workdir device", Decided: "at launch: resolves the workdir's block device"},
	{Code: SecEnvCredentialShaped, Title: "credential-shaped env.allow name", Kind: Capsule,
		Example: hdr + "capabilities:\n  env:\n    allow: [MY_TOKEN]\n"},
	{Code: SecGatewayAllowed, Title: "allow entry names a gateway upstream", Kind: Capsule,
		Example: hdr + "capabilities:\n  network:\n    allow: [https://api.example.com]\nartifacts:\n  - name: a/t\n    version: \"1\"\n    gateway:\n      endpoint: https://api.example.com\n      api_key: ${K}\n"},
	{Code: SecKeyFromEnv, Title: "key read from the environment or a literal", Decided: "at launch: resolves credentials (manifest.CheckCredentials)"},
	{Code: SecUnmeteredGateway, Title: "gateway not metered by spend ceilings", Kind: Capsule,
		Example: hdr + "artifacts:\n  - name: a/t\n    version: \"1\"\n    gateway:\n      endpoint: https://api.example.com\n      api_key: ${K}\n"},
}

// Lookup returns the catalogue entry for c.
func Lookup(c Code) (Entry, bool) {
	for _, e := range Catalogue {
		if e.Code == c {
			return e, true
		}
	}
	return Entry{}, false
}
