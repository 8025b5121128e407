// Package capsule owns a running capsule for as long as it lives: the
// manifest, resolved once; the artifacts staged from the store; the
// credential gateways; the compiled driver and tool components; the session
// folders and trace; the sandbox scope and the shell layer; and the
// session's one event stream. mur run opens a Session, runs its launch task
// and closes it; the A2A door opens one and runs every task it accepts on
// it, one at a time.
//
// The flow runs one way:
//
//	cli ─► capsule.Open ─► Session ─► RunTask (once per task) ─► agent loop
//	                          │
//	                          └─► one event stream ─► trace.jsonl, Subscribe
//
// Open refuses, with diagnostics (a diag.ListError), anything that cannot
// run before any session exists. RunTask runs one task to its end and
// returns its Outcome; its live events (text deltas, tool calls, status)
// go to the task's own sink while it runs. Subscribe follows the whole
// session. Close ends the session: out/result.txt, session_end and the
// status line. mur run runs RunLaunchTask and exits with ExitStatus of the
// outcome; the door drives the session through DoorBackend; OpenParts
// opens one from a driver and tools the caller built. The agent loop sees
// none of this: it gets a Plan and a Runtime (see docs/agent.md).
package capsule

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/images"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/process"
	"github.com/murmur/mur/internal/store"
	"github.com/murmur/mur/internal/wasm/cm"
)

// Options open one capsule session.
type Options struct {
	// Manifest is the path of murmur.yaml; "" is murmur.yaml in the
	// current directory.
	Manifest string
	// Workdir is the work folder; "" is <manifest-dir>/workdir/<session-id>.
	Workdir string
	// LaunchTask is the text of mur run --task; "" takes task.md or
	// input.txt from the work folder, if there.
	LaunchTask string
	// Deadline ends the session this long after it opens; 0 is none.
	Deadline time.Duration
	// SystemPrompt replaces the manifest's system prompt; nil keeps it.
	SystemPrompt *string
	// ContextID is mur run --context: the launch task continues (threaded)
	// or is recorded in that context; "" mints one.
	ContextID string
	// Resume is mur run --resume: the launch continues that recorded
	// session's conversation, whatever lifecycle.conversation says.
	Resume string
	// ResumeMode is mur run --resume-mode: "full" (or "") starts the
	// resumed task from the whole record; "compact" first hands it to
	// the capsule's on-compaction hooks and starts from their
	// replace-context (the record itself keeps every message).
	ResumeMode string
	// CapsuleURL is the door's URL when mur run serves one; shell commands
	// see it as MURMUR_CAPSULE_URL.
	CapsuleURL string
	// ModelEndpoint, when set, replaces the gateway endpoint of every
	// inference driver (inference.driver and the alternates) and makes
	// those gateways keyless: mur replay serves recorded answers there, so
	// no provider is reached and no key is needed.
	ModelEndpoint string
	// Stderr receives warnings and notes (W-… codes, sandbox notes) and
	// the session's status line at Close; nil discards them.
	Stderr io.Writer
	// Watch follows the session's event stream from its first record
	// (session_start) on, as Subscribe does from its call on; nil is none.
	Watch event.Sink
}

// Origin is where a task came from; task_start records it.
type Origin = agent.Origin

// Task origins.
const (
	OriginCLI        = agent.OriginCLI        // mur run's launch task
	OriginDoor       = agent.OriginDoor       // a SendMessage on the door
	OriginPeer       = agent.OriginPeer       // another capsule's message/send
	OriginCompletion = agent.OriginCompletion // a background command ended
)

// Task is one unit of work for the session.
type Task struct {
	// ID is the task's id; "" mints one (tsk_…).
	ID string
	// ContextID groups tasks of one conversation; a continuation never
	// crosses contexts.
	ContextID string
	Origin    Origin
	Text      string
	// Images are the images the task's message carried.
	Images []images.Image
	// Events, when set, receives every event of the session while this
	// task runs: its records (task_start, inference, tool_call, task_end,
	// …) and the live text (event.TextDelta, event.TextEnd), in order.
	Events event.Sink
}

// Outcome is how a task ended: its status (agent.ExitOK, …), answer,
// reason, code and counts.
type Outcome = agent.Outcome

// Open resolves the manifest, stages its artifacts, builds the gateways,
// components and shell tools, and creates the session: its folders, its
// trace and session_start. Everything that refuses the capsule is
// returned as a diag.ListError before any session exists; ctx bounds the
// session's life (canceling it cancels the task in progress).
func Open(ctx context.Context, o Options) (*Session, error) {
	stderr := o.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	path := o.Manifest
	if path == "" {
		path = "murmur.yaml"
	}
	parsed, ds := manifest.LoadCapsule(path)
	if ds.HasErrors() || parsed == nil {
		return nil, refusal(ds)
	}
	warn := ds.Warnings()
	c := parsed.Effective()
	inf := c.Inference
	script := c.Script()
	if script < 0 && (inf == nil || inf.Driver == nil || inf.Driver.Artifact == "") {
		return nil, refusal(append(warn, diag.New(diag.ManInvalid, c.Pos("inference"), "inference.driver.artifact",
			"mur run needs an inference driver: declare a runtime: driver artifact and name it in inference.driver.artifact, or a runtime: capsule artifact for a script capsule (docs/script-capsules.md)")))
	}
	// A declared field this build does not carry out (a hook, exports,
	// control, …; manifest.Fields) refuses the capsule: running without it
	// would drop it silently, and a hook may be a policy control.
	if ds := parsed.Unhonoured(); len(ds) > 0 {
		return nil, refusal(append(warn, ds...))
	}

	// Containment: a floor above what this host achieves is refused
	// before anything exists. Its W-SEC-001 warnings come with the
	// sandbox session, once one is made.
	policy, report, cds := containment(c)
	if cds.HasErrors() {
		return nil, refusal(append(warn, cds.Errors()...))
	}
	// Staging judges the capsule by the floor it declares (its effective
	// containment floor); the check above has made sure this host reaches it.
	floor := ""
	if c.Capabilities != nil {
		floor = c.Capabilities.Containment
	}
	res, sds := store.Stage(ctx, parsed, floor)
	if d := processOnHTTP(c, res); d != nil {
		sds = append(sds, *d)
	}
	warn = append(warn, sds.Warnings()...)
	if sds.HasErrors() {
		return nil, refusal(append(warn, sds.Errors()...))
	}
	creds, err := config.GlobalCredentials()
	if err != nil {
		return nil, refusal(append(warn, diag.New(diag.ManInvalid, diag.Pos{}, "", err.Error())))
	}
	gws, gds := gateways(withModelEndpoint(c, o.ModelEndpoint), res, creds, osGetenv)
	warn = append(warn, gds.Warnings()...)
	if gds.HasErrors() {
		return nil, refusal(append(warn, gds.Errors()...))
	}
	for _, w := range warn {
		fmt.Fprintln(stderr, w.String())
	}

	murmurHome, err := config.MurmurDir()
	if err != nil {
		return nil, err
	}
	rt, err := component.New(cm.Config{CacheDir: filepath.Join(murmurHome, "cache", "wasm")})
	if err != nil {
		return nil, err
	}
	l := &launcher{c: c, res: res, rt: rt, gws: gws, dirs: &sessionDirs{}, scope: manifest.ExplainScope(c), capsuleURL: o.CapsuleURL, stderr: stderr}
	if caps := c.Capabilities; caps != nil && caps.Filesystem != nil {
		l.dirs.readOnly = caps.Filesystem.ReadOnly
	}
	fail := func(err error) (*Session, error) {
		l.close()
		rt.Close()
		return nil, err
	}
	// The model: an http driver component, or under transport: process a
	// harness driven by its process driver (internal/process).
	// The machine's daily token ceiling is the global config's, not the
	// manifest's; read once, for the plan and the harness's launch checks.
	var perDay int64
	if gp, err := config.GlobalPath(); err == nil {
		g, err := config.Load(gp)
		if err != nil {
			return fail(err)
		}
		if g.Spend != nil {
			perDay = g.Spend.MachineTokensPerDay
		}
	}
	var drv agent.Driver
	var harness *process.Transport
	switch {
	case script >= 0:
		// A script capsule: no model; its component drives the tools.
		l.script, err = l.scriptEntry(script)
	case inf.IsProcess():
		harness, err = l.harness(ctx, path, perDay, stderr)
	default:
		drv, err = l.driver()
	}
	if err != nil {
		return fail(err)
	}
	tools, err := l.tools()
	if err != nil {
		return fail(err)
	}
	shellTools, err := l.shellTools()
	if err != nil {
		return fail(err)
	}
	tools = append(tools, shellTools...)
	manifestDir, _ := filepath.Abs(filepath.Dir(path))
	// capabilities.install puts pull-artifact and remove-artifact in an
	// agent capsule's inventory.
	if l.installs = newInstalls(l, manifestDir, murmurHome); l.installs != nil && script < 0 {
		tools = append(tools, pullTool{l.installs}, removeTool{l.installs})
	}
	hookList, hds := l.hookEntries()
	if hds.HasErrors() {
		return fail(refusal(append(warn, hds...)))
	}
	l.hookList = hookList
	if len(hookList) > 0 {
		// Every tool is behind the hooks: policy hooks before a call,
		// on-tool-call observers after it.
		for i := range tools {
			tools[i] = hookedTool{Tool: tools[i], h: &l.holder}
		}
	}
	// Compile while the session is set up; l.close waits for the
	// compilations before the engine closes.
	prepare(l.lazies)

	var skillText string
	if inf != nil && inf.SystemPromptArtifact != "" {
		name := inf.SystemPromptArtifact
		if skillText, err = l.skillText(name); err != nil {
			return fail(err)
		}
	}
	var records []map[string]any
	for _, e := range c.Artifacts {
		if g := gws[e.Name]; g != nil {
			records = append(records, g.Record())
		}
	}
	conv, err := conversationFor(c, murmurHome, manifestDir, o)
	if err != nil {
		return fail(err)
	}
	if conv.Compact && !compactionHooked(hookList) {
		return fail(refusal(diag.List{diag.New(diag.RunResume, diag.Pos{}, "--resume-mode", fmt.Sprintf(
			"--resume %s --resume-mode compact hands the record to the capsule's on-compaction hooks, and it has none; declare one (murmur/hook-compact) or resume with --resume-mode full", o.Resume))}))
	}
	l.policy = policy
	parts := Parts{
		Capsule: c, Installed: l.res, MachineTokensPerDay: perDay, SkillText: skillText,
		Conversation: conv, ManifestDir: manifestDir, MurmurHome: murmurHome,
		Workdir: o.Workdir, LaunchTask: o.LaunchTask, Deadline: o.Deadline, SystemPrompt: o.SystemPrompt,
		Driver: drv, Tools: tools, Gateways: records, Stderr: stderr, Watch: o.Watch, harness: harness,
		SessionFields: map[string]any{"effective_grants": l.scope, "containment": ContainmentRecord(report)},
	}
	if c.Lifecycle.DoneCheck != nil {
		parts.Runner = &l.runner
	}
	s, err := openParts(ctx, parts, l)
	if err != nil {
		return fail(err)
	}
	if l.installs != nil {
		l.installs.bind(s.plan.Tools, s.dirs, s.events, func() error { return writeMurmurMD(s.dirs, s.plan, s.loop.Prompt()) })
	}
	return s, nil
}

// refusal is Open's error for diagnostics that refuse the capsule; the
// warnings among them come first, as mur run prints them.
func refusal(ds diag.List) error {
	ds.Sort()
	return diag.ListError(ds)
}
