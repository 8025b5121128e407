package manifest

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/murmur/mur/internal/diag"
)

// Status is what this build of mur does with a declared manifest field.
type Status string

// Field statuses.
const (
	// Honoured: mur run carries the field out.
	Honoured Status = "honoured"
	// Refused: the feature is not in this build; a capsule that declares the
	// field is refused at launch (mur run, mur doctor) rather than run
	// without it.
	Refused Status = "refused"
	// Warned: the spec makes the field advisory where it is written; it is
	// accepted and warned with Code.
	Warned Status = "warned"
	// Elsewhere: the spec gives the field no meaning for a run; another
	// command reads it.
	Elsewhere Status = "elsewhere"
)

// Field is one row of Fields: a manifest field path as FieldPaths writes it
// ("[]" for a list item, "*" for a map key), what mur does with it, and why.
type Field struct {
	Path   string
	Status Status
	// Code is the warning of a Warned field, or the code a Refused field is
	// refused with.
	Code diag.Code
	Why  string
	// RefusedIf, when set on a Refused field, limits the refusal to the
	// written values it returns true for (at is the written path, with
	// list indexes); other values are what this build does anyway.
	RefusedIf func(c *Capsule, at string) bool
	// When says in words which values RefusedIf refuses, for the docs.
	When string
}

const (
	evalRow  = "forwarded to every hook as MURMUR_EVAL_CONFIG (and dataset_id as MURMUR_DATASET_ID); murmur/hook-eval scores with it"
	hookOnly = "recognized only on a runtime: hook entry: refused in the capsule-wide block when the manifest is read (E-MAN-003)"
	inertArt = "a capsule-wide concern: on a tool, driver or hook entry it does nothing (W-SEC-006 on a hook)"
)

func h(path, why string) Field { return Field{Path: path, Status: Honoured, Why: why} }
func r(path, why string) Field {
	return Field{Path: path, Status: Refused, Code: diag.RunNotHonoured, Why: why}
}
func rc(path string, code diag.Code, why string) Field {
	return Field{Path: path, Status: Refused, Code: code, Why: why}
}
func w(path string, code diag.Code, why string) Field {
	return Field{Path: path, Status: Warned, Code: code, Why: why}
}
func e(path, why string) Field { return Field{Path: path, Status: Elsewhere, Why: why} }

// each expands one entry to every path under prefix named in subs.
func each(prefix string, f func(string, string) Field, why string, subs ...string) []Field {
	out := make([]Field, 0, len(subs))
	for _, s := range subs {
		out = append(out, f(prefix+s, why))
	}
	return out
}

var artIndexRE = regexp.MustCompile(`^artifacts\[(\d+)\]`)

// artifactAt is the artifacts: entry a written path is under.
func artifactAt(c *Capsule, at string) (ArtifactRef, bool) {
	m := artIndexRE.FindStringSubmatch(at)
	if m == nil {
		return ArtifactRef{}, false
	}
	i, _ := strconv.Atoi(m[1])
	if i >= len(c.Artifacts) {
		return ArtifactRef{}, false
	}
	return c.Artifacts[i], true
}

// Fields is every capsule manifest field path mur knows and what a run
// does with it. TestFieldsCoverTypes keeps it equal to FieldPaths;
// docs/run.md's field table is generated from it (go run
// ./internal/manifest/genfields).
var Fields = concat(
	[]Field{
		h("name", "names the capsule, its session records and its stores"),
		h("version", "recorded in session_start and the door's agent card"),
		h("artifacts[].name", "staged from the stores"),
		h("artifacts[].version", "staged from the stores"),
		h("artifacts[].source", "a local artifact staged from its folder"),
		h("artifacts[].local_source", "required beside source"),
		h("artifacts[].prompt_payload", "checked when inference.system_prompt_artifact names the entry"),
		h("artifacts[].config", "delivered as MURMUR_ARTIFACT_CONFIG"),
		h("artifacts[].gateway.endpoint", "the entry's credential gateway"),
		h("artifacts[].gateway.api_key", "the entry's credential gateway"),
		h("artifacts[].gateway.keyless", "the entry's credential gateway"),
		h("artifacts[].runtime", "tools, drivers, skills and hooks run (hooks: docs/hooks.md); one runtime: capsule entry makes a script capsule (docs/script-capsules.md)"),
		h("artifacts[].on_overflow", "what an async hook's full queue does: drop (counted) or block"),
		h("artifacts[].capabilities.network.allow", "narrows the entry's egress below the capsule-wide list"),
		h("artifacts[].capabilities.filesystem.scope", "the entry's preopened folder"),
		w("artifacts[].capabilities.network.unix_sockets", diag.SecArtifactInert, inertArt),
		w("artifacts[].capabilities.filesystem.read_only", diag.SecArtifactInert, inertArt),
		w("artifacts[].capabilities.filesystem.workdir_exec", diag.SecArtifactInert, inertArt),
		w("artifacts[].capabilities.containment", diag.SecArtifactInert, inertArt),
		w("artifacts[].capabilities.env.allow", diag.SecArtifactInert, inertArt),
		w("artifacts[].capabilities.peer_fetch.allow", diag.SecArtifactInert, inertArt),
		w("artifacts[].capabilities.plan.submit", diag.SecArtifactInert, inertArt),
		h("artifacts[].capabilities.filesystem.records", "a hook's directory is the records directory's hooks/"),
		h("artifacts[].capabilities.task_io.read", "a hook reads the task and result text through murmur:task-io/read"),
		h("artifacts[].capabilities.conversation.read", "a hook reads the capsule's conversation record through murmur:conversation/read"),
		h("artifacts[].capabilities.state.store", "~/.murmur/state/<store>/: state/ beside a WASM tool's or driver's scope, MURMUR_STATE_DIR for a native tool"),
	},
	each("artifacts[].capabilities.", func(p, why string) Field { return w(p, diag.SecArtifactInert, why) }, inertArt,
		"limits.deadline_seconds", "limits.instances", "limits.memory_bytes", "limits.table_elements",
		"resources.cgroup_cpu_percent", "resources.cgroup_io_bytes_per_sec", "resources.cgroup_memory_bytes",
		"resources.cgroup_pids_max", "resources.cpu_seconds", "resources.max_file_size_bytes",
		"resources.max_open_files", "resources.max_processes", "resources.memory_bytes", "resources.workdir_max_bytes",
		"shell.allow", "shell.baseline_env", "shell.strip_env",
		"shell.interpreter_runtime[].binary", "shell.interpreter_runtime[].dirs[].list_dir", "shell.interpreter_runtime[].dirs[].path",
		"shell.staged_runtime[].binary", "shell.staged_runtime[].pin", "shell.staged_runtime[].source_path",
		"spawn.allow", "spawn.workdir_snapshot"),
	each("artifacts[].capabilities.install.", func(p, why string) Field { return rc(p, diag.ManInvalid, why) },
		"capsule-wide only: refused when the manifest is read", "from", "skill", "tool"),

	[]Field{
		h("capabilities.containment", "the containment floor the host must reach"),
		h("capabilities.env.allow", "host variables passed to tools and commands"),
		h("capabilities.filesystem.scope", "the tools' preopened folder"),
		h("capabilities.filesystem.read_only", "read-only paths for tools and commands"),
		h("capabilities.filesystem.workdir_exec", "whether commands may execute files in the work folder"),
		rc("capabilities.filesystem.records", diag.ManInvalid, hookOnly),
		h("capabilities.network.allow", "the egress allow-list"),
		h("capabilities.network.unix_sockets", "whether commands may use Unix sockets"),
		h("capabilities.limits.deadline_seconds", "per-call deadline of WASM components"),
		h("capabilities.limits.instances", "WASM store limit"),
		h("capabilities.limits.memory_bytes", "WASM store limit"),
		h("capabilities.limits.table_elements", "WASM store limit"),
		w("capabilities.conversation.read", diag.SecCapsuleConversation, "per hook only: the capsule-wide block reaches nothing"),
		w("capabilities.state.store", diag.SecCapsuleState, "per artifact only: the capsule-wide block reaches nothing"),
		rc("capabilities.task_io.read", diag.ManInvalid, hookOnly),
		r("capabilities.peer_fetch.allow", "redeeming peer-file handles is not in this build of mur"),
		r("capabilities.plan.submit", "the submit-plan tool is not in this build of mur"),
		h("capabilities.install.from", "[stores] pulls from the project store then the global store; [stores, sources] also fetches a version neither holds from the scope's GitHub source (config.yaml sources.<scope>), pinned with its owner id and written to no store"),
		h("capabilities.install.skill", "skills the pull-artifact tool (agent capsules) or manage.pull (script capsules) may install into the running session; the same entries govern removals"),
		h("capabilities.install.tool", "WASM tools a pull may install into the running session and a removal take out; a native tool is refused with E-RUN-905"),
		r("capabilities.spawn.allow", "sub-capsules (delegate-task, mur-roost) are not in this build of mur"),
		r("capabilities.spawn.workdir_snapshot", "sub-capsules (delegate-task, mur-roost) are not in this build of mur"),
	},
	each("capabilities.resources.", h, "a limit of the shell sandbox",
		"cgroup_cpu_percent", "cgroup_io_bytes_per_sec", "cgroup_memory_bytes", "cgroup_pids_max", "cpu_seconds",
		"max_file_size_bytes", "max_open_files", "max_processes", "memory_bytes", "workdir_max_bytes"),
	each("capabilities.shell.", h, "the shell tool and its sandbox",
		"allow", "baseline_env", "strip_env", "interpreter_runtime[].binary", "interpreter_runtime[].dirs[].list_dir",
		"interpreter_runtime[].dirs[].path", "staged_runtime[].binary", "staged_runtime[].pin", "staged_runtime[].source_path"),

	[]Field{
		h("network.internal_port", "the door's port"),
		h("network.authentication.scheme", "the door's bearer authentication"),
		h("network.authentication.credentials.*.scopes", "extra door tokens and their scopes"),

		h("context.max_tokens", "the context window input budgets are cut from"),
		h("context.record", "the durable conversation record under ~/.murmur/conversations/"),
		h("context.record_store", "the record's directory under ~/.murmur/conversations/"),
		h("context.retain.max_age", "conversation retention: records this capsule owns, removed whole at launch"),
		h("context.retain.max_messages", "conversation retention: the launch context's record, cut from the front at launch"),
		h("context.seed_budget", "the share of the input budget an on-task-start hook's seed-context may take (docs/hooks.md)"),
		h("context.seed_overflow_margin", "the slack above the seed budget within which a seed's oldest messages are dropped"),
		h("context.images.keep", "the newest images go to the model as bytes, older ones as their one line (docs/images.md)"),
		h("context.images.max_bytes", "a tool's larger image refused too_large, an A2A message's -32602 (docs/images.md)"),
		h("context.images.max_per_turn", "counted across a turn's tool calls (one call's under transport: process), and per A2A message (-32602)"),

		h("observability.otel_endpoint", "spans exported over OTLP/HTTP"),
		h("observability.eval.dataset_id", evalRow),
		h("observability.eval.scorers[].expected", evalRow),
		h("observability.eval.scorers[].max", evalRow),
		h("observability.eval.scorers[].name", evalRow),
		h("observability.eval.scorers[].type", evalRow),

		h("trace.capture", "how much of each request trace.jsonl keeps"),
		h("trace.retain.max_age", "session retention"),
		h("trace.retain.max_sessions", "session retention"),

		h("inference.transport", "http (a driver component) or process (a harness CLI through its process driver)"),
		h("inference.model", "the model the driver is asked for"),
		h("inference.driver.artifact", "the driver"),
		h("inference.driver.config", "the driver's config"),
		h("inference.max_turns", "turn limit"),
		h("inference.max_tokens", "per-turn output cap"),
		h("inference.max_session_tokens", "session spend ceiling"),
		h("inference.system_prompt", "the system prompt"),
		h("inference.system_prompt_file", "the system prompt"),
		h("inference.system_prompt_artifact", "the system prompt"),
		h("inference.instruction_files", "appended to the system prompt"),
		h("inference.tool_refresh", "when the tool list is bound"),
		h("inference.retry.initial_delay_ms", "driver call retries"),
		h("inference.retry.max_delay_ms", "driver call retries"),
		h("inference.retry.max_retries", "driver call retries"),
		h("inference.command", "the harness binary under transport: process"),
		r("inference.alternates[].name", "switching drivers needs control:, which is not in this build of mur"),
		r("inference.alternates[].model", "switching drivers needs control:, which is not in this build of mur"),
		r("inference.alternates[].driver.artifact", "switching drivers needs control:, which is not in this build of mur"),
		r("inference.alternates[].driver.config", "switching drivers needs control:, which is not in this build of mur"),
	},
	[]Field{
		h("inference.compaction.threshold", "when the on-compaction hooks run: a fraction of the primary choice's input budget"),
		h("inference.compaction.model", "compaction-event.model, the model the compaction hook's run-inference names"),
		h("inference.compaction.system_prompt", "compaction-event.system-prompt, passed verbatim to the compaction hook"),
		h("inference.compaction.system_prompt_file", "compaction-event.system-prompt, read at launch"),
		h("inference.compaction.dump_summaries", "each committed compaction appended to out/compaction-summaries.jsonl"),
		h("inference.compaction.max_tokens", "the output cap of run-inference calls made while serving on-compaction"),
		h("inference.compaction.driver_config", "laid over inference.driver.config for run-inference calls made while serving on-compaction"),
	},

	[]Field{
		h("lifecycle.task_acceptance", "the door's task queue"),
		h("lifecycle.after_task", "whether the session sleeps after a task"),
		h("lifecycle.queue_depth", "the door's task queue"),
		h("lifecycle.input_timeout_secs", "how long request-input waits"),
		h("lifecycle.shell_grace_secs", "when a command is demoted to the background"),
		h("lifecycle.deadline_notice_secs", "the deadline notice"),
		h("lifecycle.keep_working.message", "continuations after a turn end"),
		h("lifecycle.keep_working.limit", "continuations after a turn end"),
		h("lifecycle.done_check.command", "the done check"),
		h("lifecycle.done_check.limit", "the done check"),
		h("lifecycle.done_check.timeout_secs", "the done check"),
		h("lifecycle.conversation", "a threaded task starts from its context's record; out/result_<taskId>.txt"),
		h("lifecycle.max_task_reopens", "how often an on-task-end hook's reopen-task may reopen one task"),
		r("lifecycle.delegation_deadline_secs", "sub-capsules are not in this build of mur"),

		r("exports.files.root", "the resource plane is not in this build of mur"),
		r("exports.files.mode", "the resource plane is not in this build of mur"),
		r("exports.files.max_bytes", "the resource plane is not in this build of mur"),
		r("exports.peer_files.root", "peer-file handles are not in this build of mur"),
		r("exports.peer_files.max_ttl", "peer-file handles are not in this build of mur"),
		r("exports.peer_files.max_bytes", "peer-file handles are not in this build of mur"),
		h("exports.peer_tasks.accept", "whether the door serves peer tasks"),

		r("control.settings", "the control surface is not in this build of mur"),
		r("control.secrets", "the control surface is not in this build of mur"),
		r("control.agent_settings", "the control surface is not in this build of mur"),

		e("deploy.mur_version", "read by mur deploy alone (not in this build of mur); a run takes no meaning from it"),
		e("runtime", "an artifact-manifest field, read by mur build and mur publish"),
		e("implementation", "an artifact-manifest field, read by mur build and mur publish"),
		e("execution", "an artifact-manifest field, read by mur build and mur publish"),
		e("requires_files", "an artifact-manifest field, read by mur build and mur publish"),
		e("description", "an artifact-manifest field, read by mur build and mur publish"),
	},
)

func concat(parts ...[]Field) []Field {
	var out []Field
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// pattern turns a written path (artifacts[2].gateway.endpoint,
// network.authentication.credentials.ci.scopes) into its Fields path.
func pattern(at string) string {
	p := indexRE.ReplaceAllString(at, "[]")
	const creds = "network.authentication.credentials."
	if rest, ok := strings.CutPrefix(p, creds); ok {
		_, tail, found := strings.Cut(rest, ".")
		p = creds + "*"
		if found {
			p += "." + tail
		}
	}
	return p
}

// under reports whether field (a Fields path) is at or under the written
// block path p.
func under(field, p string) bool {
	return field == p || strings.HasPrefix(field, p+".") || strings.HasPrefix(field, p+"[]")
}

// Unhonoured returns one E-RUN-900 (or the field's own code) for each
// declared field this build refuses (Fields), naming the file, line and
// field. A block is refused, once, when every field under it is
// (capabilities.spawn: {} too); a refused artifacts: entry is reported
// once, not again for each of its keys.
func (c *Capsule) Unhonoured() diag.List {
	var ds diag.List
	written := c.writtenPaths()
	refusedEntry := map[string]bool{}
	var reported []string // a refused block is named once, not again per key
	for _, at := range written {
		if m := artIndexRE.FindString(at); m != "" && at == m+".runtime" {
			if _, ok := refusal(c, at); ok {
				refusedEntry[m] = true
			}
		}
	}
	for _, at := range written {
		if m := artIndexRE.FindString(at); m != "" && refusedEntry[m] && at != m+".runtime" {
			continue
		}
		if reportedUnder(reported, at) {
			continue
		}
		f, ok := refusal(c, at)
		if !ok {
			continue
		}
		reported = append(reported, at)
		what := at
		if m := artIndexRE.FindString(at); m != "" && f.Path == "artifacts[].runtime" {
			a, _ := artifactAt(c, at)
			what = fmt.Sprintf("the %s entry (%s)", m, a.Name)
		}
		ds = append(ds, diag.New(f.Code, c.Pos(at), at,
			fmt.Sprintf("is declared but not carried out: %s; remove %s to run without it", f.Why, what)))
	}
	ds.Sort()
	return ds
}

func reportedUnder(reported []string, at string) bool {
	for _, r := range reported {
		if strings.HasPrefix(at, r+".") || strings.HasPrefix(at, r+"[") {
			return true
		}
	}
	return false
}

// refusal finds the Fields row that refuses the written path at, if any.
func refusal(c *Capsule, at string) (Field, bool) {
	p := pattern(at)
	var inside []Field
	for _, f := range Fields {
		if f.Path == p || strings.HasPrefix(p, f.Path+".") {
			// A leaf, or a free-form block's (config's) own keys.
			if f.Status == Refused && (f.RefusedIf == nil || f.RefusedIf(c, at)) {
				return f, true
			}
			return Field{}, false
		}
		if under(f.Path, p) {
			inside = append(inside, f)
		}
	}
	if len(inside) == 0 {
		return Field{}, false
	}
	for _, f := range inside {
		if f.Status != Refused || f.RefusedIf != nil {
			return Field{}, false
		}
	}
	return inside[0], true
}

// writtenPaths lists every field path the manifest wrote, in file order.
func (c *Capsule) writtenPaths() []string {
	out := make([]string, 0, len(c.pos))
	for k := range c.pos {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := c.pos[out[i]], c.pos[out[j]]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return out[i] < out[j]
	})
	return out
}
