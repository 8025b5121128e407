package capsule

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/eval"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/hooks"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/shell/readonly"
	"github.com/murmur/mur/internal/shell/shelltool"
	"github.com/murmur/mur/internal/wasm/cm"
)

// hookEntry is one runtime: hook entry as the launch found it.
type hookEntry struct {
	spec  hooks.Spec
	grant hooks.Grant
	file  string
	id    *[32]byte
}

// hookEntries reads every runtime: hook entry: the contract fields from
// the hook's own murmur.yaml (staging has checked them against the
// binding table), on_overflow and the grant from the capsule's entry.
func (l *launcher) hookEntries() ([]hookEntry, diag.List) {
	var out []hookEntry
	var ds diag.List
	for i, e := range l.c.Artifacts {
		if e.Role() != manifest.RoleHook {
			continue
		}
		field := fmt.Sprintf("artifacts[%d]", i)
		r, ok := l.res.Get(e.Name)
		if !ok {
			ds = append(ds, diag.New(diag.RunNotInstalled, l.c.Pos(field), field, fmt.Sprintf("hook %q is not staged", e.Name)))
			continue
		}
		own, _ := l.res.Artifact(e.Name)
		sp := hooks.Spec{Name: e.Name, Entry: field, Block: e.OnOverflow == "block", Policy: hooks.PolicyNone}
		if own != nil {
			sp.Binding, sp.Async = own.Binding, own.ExecutionMode == "async"
			if own.CommitPolicy != "" {
				sp.Policy = own.CommitPolicy
			}
		}
		if why := scriptlessHook(l.c, sp); why != "" {
			ds = append(ds, diag.New(diag.ManInvalid, l.c.Pos(field), field, fmt.Sprintf(
				"hook %q %s, and a script capsule has no model: it would never run; remove the entry, or give the capsule an inference block and no runtime: capsule entry (docs/script-capsules.md)", e.Name, why)))
			continue
		}
		sp.Deadline, sp.DeadlineField = hooks.DefaultDeadline, "the default hook deadline (set capabilities.limits.deadline_seconds on "+field+")"
		if caps := l.c.Capabilities; caps != nil && caps.Limits != nil && caps.Limits.DeadlineSeconds != nil {
			sp.Deadline, sp.DeadlineField = time.Duration(*caps.Limits.DeadlineSeconds)*time.Second, "capabilities.limits.deadline_seconds"
		}
		g := hooks.Grant{}
		if ac := e.Capabilities; ac != nil {
			if ac.Limits != nil && ac.Limits.DeadlineSeconds != nil {
				sp.Deadline, sp.DeadlineField = time.Duration(*ac.Limits.DeadlineSeconds)*time.Second, field+".capabilities.limits.deadline_seconds"
			}
			if ac.TaskIO != nil && ac.TaskIO.Read != nil {
				g.TaskIO = *ac.TaskIO.Read
			}
			if ac.Conversation != nil && ac.Conversation.Read != nil {
				g.Conversation = *ac.Conversation.Read
			}
		}
		for _, v := range l.scope.Artifacts {
			if v.Name == e.Name {
				g.Network, g.Scope, g.Records = v.Network, v.Scope, v.Records
				if v.StateStore != "" {
					// The store is keyed by name, not by session or work
					// folder, so it outlives both.
					home, err := config.MurmurDir()
					if err != nil {
						ds = append(ds, diag.New(diag.ManInvalid, l.c.Pos(field), field, err.Error()))
						continue
					}
					g.StateDir = filepath.Join(home, "state", v.StateStore)
				}
			}
		}
		if e.Config != nil {
			if b, err := e.Config.JSON(); err == nil {
				g.Env = append(g.Env, [2]string{"MURMUR_ARTIFACT_CONFIG", string(b)})
			}
		}
		if o := l.c.Observability; o != nil && o.OtelEndpoint != "" {
			g.Env = append(g.Env, [2]string{"MURMUR_OTEL_ENDPOINT", o.OtelEndpoint})
		}
		// observability.eval reaches every hook: murmur/hook-eval scores
		// with it (internal/eval), and dataset_id is the spec's env row.
		if o := l.c.Observability; o != nil && o.Eval != nil {
			if b, err := json.Marshal(o.Eval); err == nil {
				g.Env = append(g.Env, [2]string{eval.EnvConfig, string(b)})
			}
			if o.Eval.DatasetID != "" {
				g.Env = append(g.Env, [2]string{eval.EnvDataset, o.Eval.DatasetID})
			}
		}
		file, err := componentFile(r, own)
		if err != nil {
			ds = append(ds, diag.New(diag.RunNotInstalled, l.c.Pos(field), field, err.Error()))
			continue
		}
		out = append(out, hookEntry{spec: sp, grant: g, file: file, id: componentID(r, file)})
	}
	return out, ds
}

// scriptlessHook says why a hook can never act in a script capsule (its
// binding is an event only a model makes, or its only commit is a seed
// for a model), or "" when it can or the capsule is not a script. Its
// binding is known only once the hook's own murmur.yaml is staged, so
// this is the launch's refusal, not the manifest's.
func scriptlessHook(c *manifest.Capsule, sp hooks.Spec) string {
	if c.Script() < 0 {
		return ""
	}
	switch {
	case sp.Binding == component.OnInference || sp.Binding == component.OnCompaction:
		return "is bound to " + sp.Binding
	case sp.Policy == hooks.PolicySeedContext:
		return "commits " + hooks.PolicySeedContext
	}
	return ""
}

// sessionHooks is a session's hooks and what they are told: the task in
// progress (for task-io/read), the turn the last inference record named,
// and the session's tool and shell call counts (on-session-end).
type sessionHooks struct {
	set      *hooks.Set
	c        *manifest.Capsule
	sessID   string
	maxTurns int
	reopens  int64

	mu         sync.Mutex
	turn       uint32
	toolCalls  uint32
	shellCalls uint32
	task       *component.TaskText
	pending    []pendingEvent
	// staged is what on-stage's write-manifests did, recorded once the
	// trace is open.
	staged []map[string]any
	// seed is the session's seed ceilings; process is transport: process,
	// where no seed is taken.
	seed    hooks.SeedLimits
	window  int64
	process bool
}

// startHooks compiles and instantiates every hook under its grant, now
// that the session's folders exist. A hook that cannot load refuses the
// launch.
func (l *launcher) startHooks(ctx context.Context, list []hookEntry, d session.Dirs, sink event.Sink, plan *agent.Plan) (*sessionHooks, error) {
	if len(list) == 0 {
		return nil, nil
	}
	sh := &sessionHooks{c: l.c, sessID: d.ID, maxTurns: int(deref(plan.Inference.MaxTurns)), reopens: manifest.DefaultMaxTaskReopens}
	sh.seedLimits(plan)
	if lc := l.c.Lifecycle; lc != nil && lc.MaxTaskReopens != nil {
		sh.reopens = *lc.MaxTaskReopens
	}
	var specs []hooks.Spec
	var callers []hooks.Caller
	fail := func(err error) (*sessionHooks, error) {
		for _, c := range callers {
			c.Close()
		}
		return nil, err
	}
	for _, he := range list {
		load := func() ([]byte, error) { return os.ReadFile(he.file) }
		var comp *cm.Component
		var err error
		if he.id != nil {
			comp, err = l.rt.CompileFrom(*he.id, load)
		} else {
			var b []byte
			if b, err = load(); err == nil {
				comp, err = l.rt.Compile(b)
			}
		}
		if err != nil {
			return fail(fmt.Errorf("hook %q: %w", he.spec.Name, err))
		}
		if sh.seed.Budget > 0 {
			// task-start-event@0.5.0 has no budget-tokens or
			// context-window (spec 004 names them): the launch's
			// values reach every hook in its environment instead.
			he.grant.Env = append(he.grant.Env[:len(he.grant.Env):len(he.grant.Env)],
				[2]string{EnvSeedBudget, fmt.Sprint(sh.seed.Budget)}, [2]string{EnvContextWindow, fmt.Sprint(sh.window)})
		}
		pol, err := he.grant.Policy(d.Workdir, d.Records, he.spec.Name, &hookLog{path: hooks.LogPath(d.Logs(), he.spec.Name)})
		if err != nil {
			return fail(err)
		}
		host := &component.Host{Inference: l.loops.inferenceFor(origin("hook", he.spec.Name))}
		if he.grant.TaskIO {
			host.TaskIO = sh
		}
		if he.grant.Conversation {
			if host.Conversation, err = newHookConversation(sh); err != nil {
				return fail(fmt.Errorf("hook %q: %w", he.spec.Name, err))
			}
		}
		c, err := hooks.NewComponent(ctx, l.rt, comp, component.Options{Name: he.spec.Name, Policy: pol, Host: host,
			Limits: cm.Limits{MemoryBytes: hooks.Memory, Deadline: he.spec.Deadline}})
		if err != nil {
			return fail(fmt.Errorf("hook %q: %w", he.spec.Name, err))
		}
		specs = append(specs, he.spec)
		callers = append(callers, c)
	}
	sh.set = hooks.New(hooks.Options{Events: sink, Logs: d.Logs()}, specs, callers)
	return sh, nil
}

// hookLog appends a hook's stderr to its log file.
type hookLog struct{ path string }

func (h *hookLog) Write(p []byte) (int, error) {
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Write(p)
}

// Current implements component.TaskReader for hooks granted
// capabilities.task_io.read.
func (h *sessionHooks) Current(context.Context) (component.TaskText, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.task == nil {
		return component.TaskText{}, &component.ReadError{Case: "no-task", Msg: "no task is in progress"}
	}
	return *h.task, nil
}

// stage dispatches on-stage with the capsule's shell allow-list and
// commits its write-manifests answers into runtimeDir and inv.
func (h *sessionHooks) stage(ctx context.Context, runtimeDir string, inv *agent.Inventory) {
	allow := []string{}
	if caps := h.c.Capabilities; caps != nil && caps.Shell != nil {
		allow = append(allow, caps.Shell.Allow...)
	}
	r := h.set.Dispatch(ctx, component.OnStage, component.StageEvent{ShellAllow: allow}, nil)
	h.commitManifests(r, allow, runtimeDir, inv)
}

// sessionStart records what on-stage wrote and dispatches
// on-session-start.
func (h *sessionHooks) sessionStart(ctx context.Context, model string) {
	h.manifestRecords()
	caps := []string{}
	if cp := h.c.Capabilities; cp != nil {
		if cp.Network != nil && len(cp.Network.Allow) > 0 {
			caps = append(caps, "network")
		}
		if cp.Filesystem != nil {
			caps = append(caps, "filesystem")
		}
		if cp.Shell != nil && len(cp.Shell.Allow) > 0 {
			caps = append(caps, "shell")
		}
	}
	sort.Strings(caps)
	h.set.Dispatch(ctx, component.OnSessionStart, component.SessionContext{
		CapsuleName: h.c.Name, CapsuleVersion: h.c.Version, SessionID: h.sessID, Model: model, Capabilities: caps,
	}, nil)
}

// Emit follows the session's records for the events the loop and the
// shell layer report: inference (on-inference) and shell (on-shell). It
// runs inside the stream's delivery, where calling a hook (which writes
// records of its own) would re-enter the stream, so it only notes the
// event; flush dispatches the notes, in order, at the session's next
// point of control: before a tool call is gated, after it returns, and
// at a task's end. A blocking hook is so waited for before anything the
// response or command leads to happens.
func (h *sessionHooks) Emit(e event.Event) {
	switch e.Type {
	case "inference":
		if _, failed := e.Fields["error"]; failed {
			return
		}
		if _, byComponent := e.Fields["origin"]; byComponent {
			// A hook's or tool's own run-inference is not an agent turn:
			// on-inference follows the loop's responses only, so a hook
			// that calls the model from on-inference cannot feed itself.
			return
		}
		turn := u32(e.Fields["turn"])
		decision := "answer"
		if sr, _ := e.Fields["stop_reason"].(string); sr == string(agent.StopToolUse) {
			decision = "tool_use"
		} else if sr == string(agent.StopMaxTokens) {
			decision = "output_cap"
		}
		ev := component.InferenceEvent{Turn: turn, InputTokens: u64(e.Fields["input_tokens"]), OutputTokens: u64(e.Fields["output_tokens"]), Decision: decision}
		h.mu.Lock()
		h.turn = turn
		h.pending = append(h.pending, pendingEvent{component.OnInference, ev, taskAt(e)})
		h.mu.Unlock()
	case "shell":
		bin, _ := e.Fields["binary"].(string)
		cmd, _ := e.Fields["command"].(string)
		h.mu.Lock()
		h.shellCalls++
		ev := component.ShellEvent{Turn: h.turn, Binary: bin, Command: cmd, ExitCode: int32(i64(e.Fields["exit_code"])),
			StdoutBytes: u64(e.Fields["stdout_bytes"]), StderrBytes: u64(e.Fields["stderr_bytes"]), DurationMS: u64(e.Fields["duration_ms"])}
		h.pending = append(h.pending, pendingEvent{component.OnShell, ev, taskAt(e)})
		h.mu.Unlock()
	}
}

// pendingEvent is an event noted by Emit, to be dispatched by flush.
type pendingEvent struct {
	handler string
	ev      any
	at      map[string]any
}

// flush dispatches the events Emit noted, in order; an artifact an
// on-inference hook commits is recorded as hook_artifact.
func (h *sessionHooks) flush(ctx context.Context) {
	for {
		h.mu.Lock()
		if len(h.pending) == 0 {
			h.mu.Unlock()
			return
		}
		p := h.pending[0]
		h.pending = h.pending[1:]
		h.mu.Unlock()
		r := h.set.Dispatch(ctx, p.handler, p.ev, p.at)
		for _, c := range r.Commits {
			f := map[string]any{"hook": c.Hook, "artifact": c.Output.Text}
			for k, v := range p.at {
				f[k] = v
			}
			if ie, ok := p.ev.(component.InferenceEvent); ok {
				f["turn"] = ie.Turn
			}
			h.set.Record("hook_artifact", f)
		}
	}
}

func taskAt(e event.Event) map[string]any {
	f := map[string]any{}
	if id, ok := e.Fields["task_id"]; ok {
		f["task_id"] = id
	}
	return f
}

// taskStart dispatches on-task-start and makes the task readable through
// task-io/read. It returns the first seed a hook's commit_policy
// seed-context took, for seedTask to fit (ok false: none).
func (h *sessionHooks) taskStart(ctx context.Context, t Task) (hook string, seed []component.Message, ok bool) {
	h.mu.Lock()
	h.task = &component.TaskText{TaskID: t.ID, ContextID: t.ContextID, Input: t.Text}
	h.mu.Unlock()
	r := h.set.Dispatch(ctx, component.OnTaskStart, component.TaskStartEvent{
		TaskID: t.ID, ContextID: t.ContextID, Source: string(t.Origin), InputBytes: uint64(len(t.Text)),
	}, map[string]any{"task_id": t.ID})
	for _, c := range r.Commits {
		if c.Output.Case == hooks.SeedArm {
			return c.Hook, c.Output.Messages, true
		}
	}
	return "", nil, false
}

// taskEnd dispatches on-task-end for an attempt that ended with o. It
// returns the feedback to reopen the task with when a hook's reopen-task
// is committed and the task may still be reopened: reopens so far are
// under lifecycle.max_task_reopens and the task has turns left under
// inference.max_turns. A reopen that is not granted is recorded.
func (h *sessionHooks) taskEnd(ctx context.Context, o Outcome, reopened int64, turns int) (string, string, bool) {
	h.flush(ctx)
	h.mu.Lock()
	if h.task != nil && h.task.TaskID == o.TaskID {
		ans := o.Answer
		h.task.AgentResult = &ans
	}
	h.mu.Unlock()
	at := map[string]any{"task_id": o.TaskID}
	r := h.set.Dispatch(ctx, component.OnTaskEnd, component.TaskEndEvent{TaskID: o.TaskID, ExitStatus: o.Status}, at)
	for _, c := range r.Commits {
		if c.Output.Case != component.OutReopenTask {
			continue
		}
		f := map[string]any{"task_id": o.TaskID, "hook": c.Hook, "reopens": reopened, "limit": h.reopens}
		switch {
		case ctx.Err() != nil:
			f["refused"] = "the task's context ended"
		case reopened >= h.reopens:
			f["refused"] = fmt.Sprintf("lifecycle.max_task_reopens (%d) reached", h.reopens)
		case h.maxTurns > 0 && turns >= h.maxTurns:
			f["refused"] = fmt.Sprintf("inference.max_turns (%d) spent", h.maxTurns)
		default:
			return c.Hook, c.Output.Text, true
		}
		h.set.Record("task_reopen_refused", f)
		return "", "", false
	}
	return "", "", false
}

// sessionEnd dispatches on-session-end and drains the async hooks.
func (h *sessionHooks) sessionEnd(final Outcome, totals Outcome, dur time.Duration) {
	h.flush(context.Background())
	h.mu.Lock()
	ev := component.SessionEndEvent{
		TotalTurns: uint32(totals.Turns), TotalInputTokens: uint64(totals.InputTokens), TotalOutputTokens: uint64(totals.OutputTokens),
		TotalToolCalls: h.toolCalls, TotalShellCalls: h.shellCalls, DurationMS: uint64(dur.Milliseconds()), ExitStatus: final.Status,
	}
	h.mu.Unlock()
	h.set.Dispatch(context.Background(), component.OnSessionEnd, ev, nil)
	h.set.Drain(hooks.DefaultDrain)
}

// hookedTool puts a tool behind the session's hooks: the policy hooks
// are asked before it runs (on-tool-call for every tool, on-shell too
// for a shell tool, with the binary resolved as it will run), and
// on-tool-call observers are told after it returns.
type hookedTool struct {
	agent.Tool
	h *hookHolder
}

// hookHolder gives the tools, built before the session, its hooks once
// they are instantiated.
type hookHolder struct {
	mu sync.Mutex
	h  *sessionHooks
}

func (x *hookHolder) get() *sessionHooks {
	if x == nil {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.h
}

func (x *hookHolder) set(h *sessionHooks) {
	x.mu.Lock()
	x.h = h
	x.mu.Unlock()
}

// Precheck forwards the shell tools' read-only check, which runs before
// any policy hook is asked.
func (t hookedTool) Precheck(input json.RawMessage) *readonly.Denial {
	if p, ok := t.Tool.(shelltool.Prechecker); ok {
		return p.Precheck(input)
	}
	return nil
}

func (t hookedTool) Call(ctx context.Context, input json.RawMessage) (agent.Result, error) {
	h := t.h.get()
	if h == nil {
		return t.Tool.Call(ctx, input)
	}
	def := t.Def()
	h.flush(ctx)
	h.mu.Lock()
	turn := h.turn
	taskID := ""
	if h.task != nil {
		taskID = h.task.TaskID
	}
	h.mu.Unlock()
	at := map[string]any{"task_id": taskID, "turn": turn, "tool": def.Name}
	if d := h.set.Gate(ctx, component.OnToolCall, component.ToolEvent{Turn: turn, ToolName: def.Name, InputBytes: uint64(len(input)), Status: "pending"}, at); d != nil {
		return denied(def.Name, d), nil
	}
	if def.Kind == agent.KindShell {
		var in struct {
			Command string `json:"command"`
		}
		json.Unmarshal(input, &in)
		if d := h.set.Gate(ctx, component.OnShell, component.ShellEvent{Turn: turn, Binary: resolveBinary(def.Name), Command: in.Command}, at); d != nil {
			return denied(def.Name, d), nil
		}
	}
	start := time.Now()
	res, err := t.Tool.Call(context.WithValue(ctx, hooksKey{}, h), input)
	h.mu.Lock()
	h.toolCalls++
	h.mu.Unlock()
	// The shell records the call wrote come before its on-tool-call.
	h.flush(ctx)
	status := string(res.Status)
	if err != nil {
		status = string(agent.StatusError)
	}
	out := len(res.Data) + len(res.Summary)
	h.set.Dispatch(ctx, component.OnToolCall, component.ToolEvent{Turn: turn, ToolName: def.Name, InputBytes: uint64(len(input)),
		OutputBytes: uint64(out), DurationMS: uint64(time.Since(start).Milliseconds()), Status: status}, at)
	return res, err
}

// denied is what the model reads back from a call a policy hook refused;
// nothing ran.
func denied(tool string, d *hooks.Denial) agent.Result {
	return agent.Result{Status: agent.StatusError, Summary: fmt.Sprintf("%s: denied by the policy hook %s: %s. This call did not run.", tool, d.Hook, d.Reason)}
}

// resolveBinary is shell-event.binary: the canonical path the name
// resolves to on PATH, else the bare name.
func resolveBinary(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return name
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func u64(v any) uint64 {
	n := i64(v)
	if n < 0 {
		return 0
	}
	return uint64(n)
}

func u32(v any) uint32 { return uint32(u64(v)) }

func i64(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case int32:
		return int64(n)
	case uint32:
		return int64(n)
	case uint64:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

// hooksKey carries a tool call's hooks to what the tool does through host
// imports (murmur:shell/execute), so its commands meet the same gates.
type hooksKey struct{}

func hooksFrom(ctx context.Context) *sessionHooks {
	h, _ := ctx.Value(hooksKey{}).(*sessionHooks)
	return h
}

// gateShell asks the on-shell policy hooks about a command a component
// runs through murmur:shell/execute; a denial is the import's err.
func (h *sessionHooks) gateShell(ctx context.Context, binary string, args []string) error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	turn := h.turn
	taskID := ""
	if h.task != nil {
		taskID = h.task.TaskID
	}
	h.mu.Unlock()
	cmd := strings.Join(args, " ")
	d := h.set.Gate(ctx, component.OnShell, component.ShellEvent{Turn: turn, Binary: resolveBinary(binary), Command: cmd},
		map[string]any{"task_id": taskID, "turn": turn, "binary": binary})
	if d != nil {
		return fmt.Errorf("shell/execute: %s denied by the policy hook %s: %s; nothing ran", binary, d.Hook, d.Reason)
	}
	return nil
}
