package capsule

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/conversation"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/otel"
	"github.com/murmur/mur/internal/process"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/spend"
	"github.com/murmur/mur/internal/trace"
)

// Parts are a session's pieces once its manifest is resolved: the
// effective manifest the loop's plan is built from, the driver and tools
// that serve it, and where the session lives. Open builds them from
// murmur.yaml and its staged artifacts; OpenParts takes them from a caller
// that built its own (tests, benchmarks).
type Parts struct {
	// Capsule is the manifest with its defaults applied
	// (manifest.Capsule.Effective); Installed gives the limits resolver
	// its drivers' models: tables.
	Capsule   *manifest.Capsule
	Installed manifest.Installed
	// MachineTokensPerDay is the global config's daily token ceiling; 0
	// is none.
	MachineTokensPerDay int64
	// SkillText is the payload of inference.system_prompt_artifact.
	SkillText string
	// Conversation is the conversation policy; the zero value keeps no
	// record (context.record: off).
	Conversation Conversation
	// ManifestDir holds murmur.yaml; MurmurHome is ~/.murmur.
	ManifestDir string
	MurmurHome  string
	// Workdir, LaunchTask, Deadline and SystemPrompt are Options'.
	Workdir      string
	LaunchTask   string
	Deadline     time.Duration
	SystemPrompt *string
	// Driver serves every agent-loop turn; Tools are the inventory, every
	// kind already wrapped as a Tool (skills with agent.NewSkill).
	Driver agent.Driver
	Tools  []agent.Tool
	// Runner runs lifecycle.done_check inside the session's containment;
	// required when the manifest sets one.
	Runner agent.CommandRunner
	// Gateways are session_start.gateways, from the credential gateway;
	// SessionFields are added to session_start as they are (what other
	// areas decide at launch: effective_grants, containment).
	Gateways      []map[string]any
	SessionFields map[string]any
	Stderr        io.Writer
	// Watch is Options.Watch: a subscriber from session_start on.
	Watch event.Sink
	// OtelEndpoint is observability.otel_endpoint ("" exports nothing);
	// Open takes it from the manifest.
	OtelEndpoint string
	// Now, Sleep and Rand replace the clock, waits and jitter in tests.
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
	Rand  *rand.Rand

	// harness serves the model under transport: process (Driver is nil
	// then).
	harness *process.Transport
}

// OpenParts opens a session from parts already built. Like Open, it
// refuses with a diag.ListError before any session folder exists.
func OpenParts(ctx context.Context, p Parts) (*Session, error) {
	return openParts(ctx, p, nil)
}

// openParts checks the plan, then creates the session: folders, trace,
// the event stream, the launcher's shell layer (when there is one), the
// loop, MURMUR.md, session_start and retention.
func openParts(ctx context.Context, p Parts, l *launcher) (*Session, error) {
	stderr := p.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	now := p.Now
	if now == nil {
		now = time.Now
	}
	script := l != nil && l.script != nil
	if p.Driver == nil && p.harness == nil && !script {
		return nil, errors.New("capsule: no driver to serve inference")
	}
	if p.Capsule == nil {
		return nil, errors.New("capsule: no manifest to plan the session from")
	}
	// The one plan every task of the session runs from.
	plan, err := newPlan(p, script, agent.Sources{
		Installed: p.Installed, Tools: p.Tools, MachineTokensPerDay: p.MachineTokensPerDay, Contained: p.Runner != nil,
		Prompt: agent.PromptSources{ManifestDir: p.ManifestDir, ArtifactText: p.SkillText, Override: p.SystemPrompt},
	})
	if err != nil {
		return nil, err
	}
	retain, err := retention(p.Capsule)
	if err != nil {
		return nil, err
	}

	dirs, err := session.Create(session.Layout{MurmurHome: p.MurmurHome, ManifestDir: p.ManifestDir, Workdir: p.Workdir})
	if err != nil {
		return nil, err
	}
	tw, err := trace.Create(dirs.Trace())
	if err != nil {
		dirs.Release()
		return nil, err
	}
	sctx, endSession := context.WithCancelCause(ctx)
	s := &Session{
		dirs: dirs, plan: plan, events: &event.Stream{}, tw: tw, stderr: stderr, now: now,
		l: l, ctx: sctx, endSession: endSession, first: true,
	}
	// The trace is one subscriber of the session's stream; it keeps
	// records only, never live events.
	s.events.Add(event.Recorded(tw))
	if p.Watch != nil {
		s.events.Add(p.Watch)
	}
	if l != nil {
		l.endSession = endSession
		l.text.bind(s.events, "")
		l.start(sctx, dirs, s.events, stderr)
		// Hooks load once the folders their grants name exist; one that
		// cannot load refuses the launch.
		s.hooks, err = l.startHooks(sctx, l.hookList, dirs, s.events, plan)
		if err != nil {
			s.abort()
			return nil, err
		}
		if s.hooks != nil {
			l.holder.set(s.hooks)
			s.hooks.stage(sctx, dirs.Runtime(), plan.Tools)
			s.events.Add(s.hooks)
		}
	}
	s.start = now()

	rt := agent.Runtime{
		SessionID: dirs.ID, Driver: p.Driver, Runner: p.Runner, Events: s.events,
		Workdir: dirs.Workdir, BlobDir: dirs.Blobs(), Logs: dirs.Logs(), OutDir: filepath.Dir(dirs.Result()),
		Start: s.start, Deadline: p.Deadline, Now: p.Now, Sleep: p.Sleep, Rand: p.Rand,
	}
	if s.hooks != nil {
		rt.Compactor = compactor{s.hooks}
	}
	if l != nil {
		rt.Events = l.completions.stamp(s.events)
	}
	if n := plan.MachineTokensPerDay; n > 0 {
		rt.Meter = spend.NewMachineMeter(spend.MeterPath(p.MurmurHome), n)
	}
	s.loop, err = agent.NewLoop(plan, rt)
	if err == nil && l != nil && !script {
		l.loops.set(s.loop)
	}
	if err == nil {
		err = writeMurmurMD(dirs, plan, s.loop.Prompt())
	}
	if err != nil {
		s.abort()
		return nil, err
	}

	s.launchTask, s.launchSource, s.launchErr = session.LaunchTask(p.LaunchTask, dirs.Workdir)
	if script && s.launchSource == session.TaskAbsent && s.launchErr == nil {
		// A script capsule's launch is its run, task or none.
		s.launchSource = TaskScript
	}
	if p.harness != nil {
		s.harness = p.harness
		if err := s.bindHarness(p.harness, s.loop.Prompt(), p.MachineTokensPerDay, p.MurmurHome); err != nil {
			s.abort()
			return nil, err
		}
	}
	start := s.startFields()
	if s.harness != nil {
		harnessStart(start, s.harness)
	}
	start["session_id"], start["workdir"], start["records_dir"], start["runtime_dir"] = dirs.ID, dirs.Workdir, dirs.Records, dirs.Runtime()
	start["task_source"] = string(s.launchSource)
	if p.Gateways != nil {
		start["gateways"] = p.Gateways
	}
	for k, v := range p.SessionFields {
		if _, taken := start[k]; !taken {
			start[k] = v
		}
	}
	// OpenTelemetry is one more subscriber, from session_start on.
	otel.Subscribe(s.events, otelEndpoint(p), stderr, otel.SpoolDir(p.MurmurHome))
	s.events.Emit(event.Event{Type: "session_start", Fields: start})
	if s.hooks != nil {
		s.hooks.sessionStart(sctx, modelOf(l.c))
	}
	if retain != nil {
		s.sweep(p.ManifestDir, *retain)
	}
	if d := s.openConversation(p.Conversation); d != nil {
		s.abort()
		return nil, refusal(diag.List{*d})
	}
	return s, nil
}

// sweep applies trace.retain to the capsule's older sessions.
func (s *Session) sweep(manifestDir string, r session.Retain) {
	removed, err := session.Sweep(s.dirs, manifestDir, r, s.now())
	for _, r := range removed {
		f := map[string]any{"session_id": r.ID, "reason": r.Reason, "records_dir": r.Records}
		if r.Workdir != "" {
			f["workdir"] = r.Workdir
		}
		s.events.Emit(event.Event{Type: "retention", Fields: f})
	}
	if err != nil {
		// A session that cannot be removed is reported, not fatal: the
		// running session is not at fault.
		fmt.Fprintf(s.stderr, "mur: %s: %v\n", s.dirs.ID, err)
	}
}

// abort undoes a session that failed while opening.
func (s *Session) abort() {
	if s.hooks != nil {
		s.hooks.set.Close()
	}
	if s.l != nil {
		s.l.end()
	}
	s.tw.Close()
	s.dirs.Release()
	s.endSession(nil)
}

// Session is one running capsule. Its methods are safe for concurrent use;
// tasks run one at a time, in the order RunTask is called.
type Session struct {
	dirs   session.Dirs
	plan   *agent.Plan
	loop   *agent.Loop
	events *event.Stream
	tw     *trace.Writer
	stderr io.Writer
	now    func() time.Time
	start  time.Time
	totals agent.Outcome
	// conv gives each task its context's conversation record.
	conv *conversation.Keeper
	// compactResume is --resume-mode compact, until the launch task has
	// taken it.
	compactResume bool
	// The launch's own task, where it came from, and a task file that
	// exists but could not be read.
	launchTask   string
	launchSource session.TaskSource
	launchErr    error

	// l holds the staged components and the shell layer; nil for a
	// session opened from parts.
	l *launcher
	// harness is the transport: process model; nil under http.
	harness *process.Transport
	// hooks are the capsule's lifecycle hooks; nil without any.
	hooks *sessionHooks
	// ctx is the session's life; endSession ends it, with a cause of the
	// sandbox's own (E-RUN-013) or nil at Close.
	ctx        context.Context
	endSession context.CancelCauseFunc

	run sync.Mutex // held while a task runs
	// running is the task in progress, for the MCP calls made while it
	// runs (CallTool records them under it); nil between tasks.
	running atomic.Pointer[string]
	first   bool // the first minted id is the session's own suffix
	closeMu sync.Mutex
	closed  bool
}

// Dirs are the session's folders: records, trace, work folder.
func (s *Session) Dirs() session.Dirs { return s.dirs }

// ID is the session's id (ses_…).
func (s *Session) ID() string { return s.dirs.ID }

// LaunchTask is the task mur run was launched with: --task, else task.md or
// input.txt in the work folder. source is session.TaskAbsent when there is
// none; err is a task file that exists but could not be read.
func (s *Session) LaunchTask() (text string, source session.TaskSource, err error) {
	return s.launchTask, s.launchSource, s.launchErr
}

// Subscribe attaches a sink to the session's event stream: every record
// (what trace.jsonl holds) and every live event, from now until cancel is
// called or the session closes.
func (s *Session) Subscribe(k event.Sink) (cancel func()) {
	return s.events.Subscribe(k)
}

// ErrClosed is RunTask's outcome reason after Close; ErrEnding once the
// session's context has ended.
var (
	ErrClosed = errors.New("the session is closed")
	ErrEnding = errors.New("the session is ending: the task was not started")
)

// RunTask runs one task to its end and returns how it ended. Tasks run one
// at a time: a call waits for the task in progress. Canceling ctx cancels
// this task (status canceled); the session's deadline and the session's
// own end cancel it too.
func (s *Session) RunTask(ctx context.Context, t Task) Outcome {
	return s.runTask(ctx, t, false)
}

// runTask is RunTask; launch marks mur run's own task, which takes the
// launch's context.
func (s *Session) runTask(ctx context.Context, t Task, launch bool) Outcome {
	s.run.Lock()
	defer s.run.Unlock()
	if s.isClosed() {
		return Outcome{TaskID: t.ID, Status: agent.ExitFailed, Reason: ErrClosed.Error()}
	}
	if s.ctx.Err() != nil {
		// The session is ending (its context was canceled, or the sandbox
		// ended it): a task that gets its turn now is not started, so it
		// leaves no task_start or task_end (spec 004: nothing started).
		return Outcome{TaskID: t.ID, Status: agent.ExitCanceled, Reason: ErrEnding.Error()}
	}
	if t.ID == "" {
		t.ID = s.mintTaskID()
	}
	if t.Origin == "" {
		t.Origin = OriginCLI
	}
	if t.Events != nil {
		cancel := s.Subscribe(t.Events)
		defer cancel()
	}
	s.running.Store(&t.ID)
	defer s.running.Store(nil)
	ctx, stop := mergeCancel(ctx, s.ctx)
	defer stop()
	if deadline := s.loop.Deadline(); !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	if s.l != nil {
		s.l.text.bind(s.events, t.ID)
	}
	history, log, err := s.beginTask(&t, launch)
	if err != nil {
		return Outcome{TaskID: t.ID, Status: agent.ExitFailed, Code: diag.RunConversationRecord, Reason: err.Error()}
	}
	var o Outcome
	defer func() { s.endTask(t, o, log) }()
	at := agent.Task{ID: t.ID, ContextID: t.ContextID, Origin: t.Origin, Text: t.Text, Images: t.Images, History: history}
	if launch && s.compactResume {
		s.compactResume = false
		at.CompactHistory = true
	}
	if log != nil {
		at.Log = log
	}
	if s.hooks != nil {
		at.Seed = s.seedTask(ctx, t)
	}
	o = s.attempt(ctx, at)
	s.add(o)
	if s.hooks == nil {
		return o
	}
	// An on-task-end hook may reopen the task (commit_policy
	// reopen-task): its agent loop runs again with the original text and
	// the hook's feedback, up to lifecycle.max_task_reopens times and
	// never past inference.max_turns counted across the attempts.
	turns, in, out := o.Turns, o.InputTokens, o.OutputTokens
	for reopened := int64(0); ; reopened++ {
		hook, feedback, ok := s.hooks.taskEnd(ctx, o, reopened, turns)
		if !ok {
			break
		}
		s.events.Emit(event.Event{Type: "task_reopened", Fields: map[string]any{
			"task_id": t.ID, "hook": hook, "reopen": reopened + 1, "limit": s.hooks.reopens, "feedback": feedback,
		}})
		text := fmt.Sprintf("%s\n\n[murmur] The hook %s reopened this task after your answer:\n%s", t.Text, hook, feedback)
		if o.Answer != "" {
			text = fmt.Sprintf("%s\n\n[murmur] Your previous answer was:\n%s\n\n[murmur] The hook %s reopened this task:\n%s", t.Text, o.Answer, hook, feedback)
		}
		at.Text = text
		if s.hooks.maxTurns > 0 {
			// The reopened attempt is handed only the turns the task
			// has left (spec 004: reopening never grants turns past
			// inference.max_turns).
			at.MaxTurns = s.hooks.maxTurns - turns
		}
		o = s.attempt(ctx, at)
		s.add(o)
		turns += o.Turns
		in += o.InputTokens
		out += o.OutputTokens
	}
	o.Turns, o.InputTokens, o.OutputTokens = turns, in, out
	s.endIfCompactionFailed(o)
	return o
}

// add counts a task attempt's turns and tokens into the session's totals.
func (s *Session) add(o Outcome) {
	s.totals.Turns += o.Turns
	s.totals.InputTokens += o.InputTokens
	s.totals.OutputTokens += o.OutputTokens
}

// RunLaunchTask runs the launch's own task, as mur run does: a task file
// that cannot be read fails the session (E-RUN-040); no task at all is
// reported on Stderr and ends it ok; otherwise the task runs with its live
// events going to events (nil: none).
func (s *Session) RunLaunchTask(ctx context.Context, events event.Sink) Outcome {
	switch {
	case s.launchErr != nil:
		return Outcome{Status: agent.ExitFailed, Code: diag.RunTaskFailed, Reason: s.launchErr.Error()}
	case s.launchSource == session.TaskAbsent:
		fmt.Fprintf(s.stderr, "mur: %s: no task: give one with --task, or put task.md or input.txt in the work folder %s\n", s.dirs.ID, s.dirs.Workdir)
		return Outcome{Status: agent.ExitOK}
	}
	return s.runTask(ctx, Task{Origin: OriginCLI, Text: s.launchTask, Events: events}, true)
}

// mintTaskID names a task: the session's first is tsk_ with the session's
// own suffix (so a one-task session's ids match); later ones are new ids.
func (s *Session) mintTaskID() string {
	if s.first {
		s.first = false
		return "tsk_" + strings.TrimPrefix(s.ID(), session.Prefix)
	}
	id, err := session.NewID()
	if err != nil {
		// The clock or the random source failed; a task still needs a
		// unique name within the session.
		return fmt.Sprintf("tsk_%s_%d", strings.TrimPrefix(s.ID(), session.Prefix), time.Now().UnixNano())
	}
	return "tsk_" + strings.TrimPrefix(id, session.Prefix)
}

// mergeCancel is ctx, also canceled when the session's context ends (with
// its cause).
func mergeCancel(ctx, session context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(session, func() { cancel(context.Cause(session)) })
	return ctx, func() { stop(); cancel(nil) }
}

func (s *Session) isClosed() bool {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	return s.closed
}

// Close ends the session with the outcome that decides its status: the
// shell layer and sandbox close (their last records first), out/result.txt
// and session_end are written, the status line goes to Stderr, the trace
// closes and the components are released. It waits for the task in
// progress. A second Close does nothing.
func (s *Session) Close(final Outcome) error {
	s.run.Lock()
	defer s.run.Unlock()
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	s.closeMu.Unlock()
	if s.hooks != nil {
		// on-session-end, then every async hook's queue drained (within
		// its budget) before session_end is written.
		s.hooks.sessionEnd(final, s.totals, s.now().Sub(s.start))
	}
	if s.l != nil {
		s.l.end()
	}
	werr := os.WriteFile(s.dirs.Result(), []byte(resultFile(final)), 0o600)
	s.events.Emit(event.Event{Type: "session_end", Fields: map[string]any{
		"session_id": s.dirs.ID, "exit_status": final.Status, "turns": s.totals.Turns,
		"input_tokens": s.totals.InputTokens, "output_tokens": s.totals.OutputTokens,
		"duration_ms": s.now().Sub(s.start).Milliseconds(),
	}})
	if final.Fragment {
		fmt.Fprintln(s.stderr, agent.FragmentWarning())
	}
	fmt.Fprintln(s.stderr, statusLine(s.dirs, final, s.totals))
	var herr error
	if s.hooks != nil {
		herr = s.hooks.set.Close()
	}
	err := errors.Join(werr, herr, s.conv.Close(), s.tw.Err(), s.tw.Close(), trace.TakeBlobErr(s.dirs.Blobs()), s.dirs.Release())
	s.endSession(nil)
	if s.l != nil {
		s.l.close()
		if s.harness != nil {
			s.harness.Close()
		}
		s.l.rt.Close()
	}
	return err
}

// Exit statuses of mur run.
const (
	ExitOK       = 0
	ExitTask     = 1 // the task ended other than ok
	ExitRefused  = 2 // refused before any session existed
	ExitCanceled = 130
)

// ExitStatus is mur run's exit status for the outcome a session closed
// with.
func ExitStatus(final Outcome) int {
	switch final.Status {
	case agent.ExitOK:
		return ExitOK
	case agent.ExitCanceled:
		return ExitCanceled
	}
	return ExitTask
}

// resultFile is out/result.txt's content for an outcome.
func resultFile(o Outcome) string {
	switch o.Status {
	case agent.ExitOK:
		if o.Fragment {
			return o.Answer + "\n\n[fragment: this reply was cut at the output cap]\n"
		}
		return o.Answer
	case agent.ExitSpendCeiling:
		return "stopped: " + o.Reason + "\n"
	case agent.ExitMaxTurns:
		s := "stopped: max_turns_reached: the task used every turn inference.max_turns allows\n"
		if o.Answer != "" {
			s += "\n" + o.Answer
		}
		return s
	}
	return o.Status + ": " + o.Reason + "\n"
}

// statusLine is the one line mur run prints on stderr as the session ends.
func statusLine(dirs session.Dirs, o, totals Outcome) string {
	head := "mur: "
	if o.Status != agent.ExitOK && o.Code != "" {
		head += string(o.Code) + " "
	}
	s := fmt.Sprintf("%s%s status: %s", head, dirs.ID, o.Status)
	if o.Reason != "" && o.Status != agent.ExitOK {
		s += ": " + o.Reason
	}
	return s + fmt.Sprintf(" (%d turns, %d tokens; records %s)", totals.Turns, totals.InputTokens+totals.OutputTokens, dirs.Records)
}

// writeMurmurMD writes MURMUR.md into the session's runtime directory: the
// agent's map of what it has.
func writeMurmurMD(dirs session.Dirs, plan *agent.Plan, prompt agent.Prompt) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# MURMUR.md\n\nSession %s. Work folder: %s\n", dirs.ID, dirs.Workdir)
	section := func(title string, kinds ...string) {
		var lines []string
		for _, d := range plan.Tools.Defs() {
			for _, k := range kinds {
				if d.Kind == k || (k == agent.KindTool && d.Kind == "") {
					lines = append(lines, fmt.Sprintf("- %s: %s", d.Name, firstLine(d.Description)))
				}
			}
		}
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n", title, strings.Join(lines, "\n"))
	}
	section("Installed Tools", agent.KindTool, agent.KindNative, agent.KindRuntime, agent.KindShell)
	section("Installed Skills", agent.KindSkill)
	if plan.BoundSkill != "" {
		fmt.Fprintf(&b, "\n## System Prompt\n\nThe skill %s is bound as your system prompt, so it is not in your tool list.\n", plan.BoundSkill)
	}
	if entries := plan.Inference.InstructionFiles; entries != nil {
		b.WriteString("\n## Instruction Files\n\n")
		for _, f := range prompt.Instructions {
			fmt.Fprintf(&b, "- %s: %s\n", f.Path, f.Status)
		}
		if nested := nestedInstructionFiles(dirs.Workdir, entries); len(nested) > 0 {
			b.WriteString("\nFiles with these names in subfolders, not loaded (read them when you work there):\n\n")
			for _, n := range nested {
				fmt.Fprintf(&b, "- %s\n", n)
			}
		}
	}
	return os.WriteFile(filepath.Join(dirs.Runtime(), "MURMUR.md"), []byte(b.String()), 0o600)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// nestedLimit bounds the walk for nested instruction files so a huge work
// folder cannot stall the launch.
const nestedLimit = 20000

// nestedInstructionFiles lists files in subfolders of workdir whose base
// name is a listed entry's, which spec says MURMUR.md points to.
func nestedInstructionFiles(workdir string, entries []string) []string {
	names := map[string]bool{}
	listed := map[string]bool{}
	for _, e := range entries {
		c := filepath.ToSlash(filepath.Clean(e))
		listed[c] = true
		names[filepath.Base(c)] = true
	}
	var out []string
	seen := 0
	filepath.WalkDir(workdir, func(p string, d os.DirEntry, err error) error {
		seen++
		if seen > nestedLimit {
			return filepath.SkipAll
		}
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !names[d.Name()] {
			return nil
		}
		rel, _ := filepath.Rel(workdir, p)
		rel = filepath.ToSlash(rel)
		if !listed[rel] {
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// otelEndpoint is the parts' endpoint, else the manifest's.
func otelEndpoint(p Parts) string {
	if p.OtelEndpoint == "" && p.Capsule.Observability != nil {
		return p.Capsule.Observability.OtelEndpoint
	}
	return p.OtelEndpoint
}
