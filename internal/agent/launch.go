package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/spend"
	"github.com/murmur/mur/internal/trace"
)

// Config is what the loop reads of a transport: http capsule manifest. The
// integrator fills it from the parsed manifest; zero values are "unset".
type Config struct {
	Capsule      string
	Model        string
	DriverName   string
	DriverConfig json.RawMessage
	// ModelLimits are every driver choice's limits as the manifest engine
	// resolved them (manifest.ResolveLimits), the primary first; the loop
	// serves every turn through the primary.
	ModelLimits         []manifest.ChoiceLimits
	MaxTurns            int
	MaxSessionTokens    int64
	MachineTokensPerDay int64
	// Retry is inference.retry with defaults applied; nil is DefaultRetry.
	Retry            *RetryConfig
	Capture          trace.Capture
	Prompt           PromptSources
	InstructionFiles []string
	KeepWorking      *KeepWorking
	DoneCheck        *DoneCheck
	// DeadlineNoticeSecs is lifecycle.deadline_notice_secs; nil is the
	// default (five minutes, or a tenth of the deadline when shorter).
	DeadlineNoticeSecs *int
	ToolRefresh        string
	// Retain is trace.retain; nil deletes nothing, ever.
	Retain *session.Retain
}

// Options is one mur run launch.
type Options struct {
	Config Config
	// ManifestDir holds murmur.yaml; MurmurHome is ~/.murmur.
	ManifestDir string
	MurmurHome  string
	// The mur run flags this launcher reads.
	Workdir      string        // --workdir
	Task         string        // --task
	Deadline     time.Duration // --deadline; 0 is none
	SystemPrompt *string       // --system-prompt; nil when not given
	// Driver serves every agent-loop turn; Tools are the inventory, every
	// kind already wrapped as a Tool (skills with NewSkill).
	Driver Driver
	Tools  []Tool
	// Gateways are session_start.gateways, from the credential gateway.
	Gateways []map[string]any
	// Sinks receive the session's events beside trace.jsonl (hooks, OTel).
	Sinks []event.Sink
	// Runner runs lifecycle.done_check inside the session's containment;
	// required when the manifest sets one.
	Runner CommandRunner
	Stderr io.Writer
	// Now, Sleep and Rand replace the clock, waits and jitter in tests.
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
	Rand  *rand.Rand
	// OnSession is called once the session exists, before its task runs.
	OnSession func(session.Dirs)
	// OnEvents is called right after OnSession with the session's event
	// stream, so other producers (shell tools, the sandbox) record into
	// the same trace. OnEnd runs once the task is over, before
	// session_end is written, so their last records precede it.
	OnEvents func(session.Dirs, event.Sink)
	OnEnd    func()
	// SessionFields are added to session_start as they are: what other
	// areas decide at launch (effective_grants, containment).
	SessionFields map[string]any
}

// Exit codes of mur run.
const (
	ExitCodeOK       = 0
	ExitCodeTask     = 1 // the task ended other than ok
	ExitCodeRefused  = 2 // the launch was refused before any task ran
	ExitCodeCanceled = 130
)

// Launch runs a capsule's launch task under transport: http and returns the
// exit code mur run exits with. Refusals are printed to Stderr as
// diagnostics; err is non-nil only for a launch refused before the session
// existed or a failure of the runtime itself.
func Launch(ctx context.Context, o Options) (int, error) {
	s, code, err := Open(o)
	if s == nil {
		var refused diag.ListError
		if errors.As(err, &refused) {
			for _, e := range refused {
				fmt.Fprintln(o.Stderr, e.String())
			}
			err = nil
		}
		return code, err
	}
	if s.TaskErr != nil {
		return s.Close(Outcome{Status: ExitFailed, Code: codeTaskFailed, Reason: s.TaskErr.Error()})
	}
	if s.TaskSource == session.TaskAbsent {
		fmt.Fprintf(s.stderr, "mur: %s: no task: give one with --task, or put task.md or input.txt in the work folder %s\n", s.Dirs.ID, s.Dirs.Workdir)
		return s.Close(Outcome{Status: ExitOK})
	}
	out := s.RunTask(ctx, Task{ID: "tsk_" + strings.TrimPrefix(s.Dirs.ID, session.Prefix), Origin: OriginCLI, Text: s.Task})
	return s.Close(out)
}

// Session is one running session: its directories, event stream and loop.
// mur run drives it through Launch; the A2A door will open one and run
// each accepted task on it. Tasks run one at a time.
type Session struct {
	Dirs session.Dirs
	Loop *Loop
	// Task is the launch's own task and TaskSource where it came from
	// (TaskAbsent when there is none); TaskErr is a task file that exists
	// but could not be read.
	Task       string
	TaskSource session.TaskSource
	TaskErr    error

	events *event.Stream
	tw     *trace.Writer
	stderr io.Writer
	now    func() time.Time
	start  time.Time
	onEnd  func()
	totals Outcome
}

// Events is the session's event stream.
func (s *Session) Events() *event.Stream { return s.events }

// RunTask runs one task to its end under the session's deadline.
func (s *Session) RunTask(ctx context.Context, t Task) Outcome {
	if !s.Loop.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, s.Loop.Deadline)
		defer cancel()
	}
	o := s.Loop.RunTask(ctx, t)
	s.totals.Turns += o.Turns
	s.totals.InputTokens += o.InputTokens
	s.totals.OutputTokens += o.OutputTokens
	return o
}

// Close ends the session with the outcome that decides its exit status:
// OnEnd runs, out/result.txt and session_end are written, the status line
// is printed, and the trace is closed. It returns mur run's exit code.
func (s *Session) Close(final Outcome) (int, error) {
	code, err := finish(s.onEnd, s.events, s.tw, s.Dirs, s.stderr, s.now, s.start, final, s.totals)
	if cerr := s.tw.Close(); err == nil {
		err = cerr
	}
	if rerr := s.Dirs.Release(); err == nil {
		err = rerr
	}
	return code, err
}

// Open checks everything that can refuse the launch, then creates the
// session: directories, trace, prompt, MURMUR.md and the loop, and writes
// session_start. A refusal returns a nil Session with ExitCodeRefused and
// err: a diag.ListError of the refusing diagnostics, or any other failure.
// Warnings are printed to Stderr.
func Open(o Options) (*Session, int, error) {
	stderr := o.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	cfg := o.Config
	if o.Driver == nil {
		return nil, ExitCodeRefused, errors.New("launch: no driver to serve inference")
	}

	// Everything that can refuse the launch is checked before any
	// session directory exists.
	if len(cfg.ModelLimits) == 0 {
		return nil, ExitCodeRefused, errors.New("launch: no resolved model limits for the primary driver choice")
	}
	limits := cfg.ModelLimits
	var dl diag.List
	if cfg.DoneCheck != nil && len(cfg.DoneCheck.Argv) == 0 {
		return nil, ExitCodeRefused, errors.New("launch: lifecycle.done_check has no resolved command words")
	}
	if cfg.DoneCheck != nil && o.Runner == nil {
		// Never run the check uncontained: without the shell session's
		// runner there is nowhere safe to run it.
		return nil, ExitCodeRefused, errors.New("launch: lifecycle.done_check is set but no contained command runner was given")
	}
	src := cfg.Prompt
	src.ManifestDir = o.ManifestDir
	src.Override = o.SystemPrompt
	if _, _, _, err := basePrompt(src); err != nil {
		var d diag.Diagnostic
		if errors.As(err, &d) {
			dl = append(dl, d)
		} else {
			return nil, ExitCodeRefused, err
		}
	}
	for _, w := range dl.Warnings() {
		fmt.Fprintln(stderr, w.String())
	}
	if dl.HasErrors() {
		return nil, ExitCodeRefused, diag.ListError(dl.Errors())
	}
	tools := o.Tools
	bound := ""
	if src.ArtifactName != "" && src.Override == nil {
		// The skill bound as the system prompt is not offered as a tool
		// too; --system-prompt releases it back into the inventory.
		bound = src.ArtifactName[strings.LastIndex(src.ArtifactName, "/")+1:]
		tools = nil
		for _, t := range o.Tools {
			if d := t.Def(); d.Kind == KindSkill && d.Name == bound {
				continue
			}
			tools = append(tools, t)
		}
	}
	inv, err := NewInventory(tools)
	if err != nil {
		return nil, ExitCodeRefused, err
	}
	capture := cfg.Capture
	if capture == "" {
		capture = trace.CaptureMeta
	}
	retry := DefaultRetry
	if cfg.Retry != nil {
		retry = *cfg.Retry
	}

	dirs, err := session.Create(session.Layout{MurmurHome: o.MurmurHome, ManifestDir: o.ManifestDir, Workdir: o.Workdir})
	if err != nil {
		return nil, ExitCodeRefused, err
	}
	tw, err := trace.Create(dirs.Trace())
	if err != nil {
		return nil, ExitCodeRefused, err
	}
	var events event.Stream
	events.Add(event.Recorded(tw))
	for _, s := range o.Sinks {
		events.Add(s)
	}
	if o.OnSession != nil {
		o.OnSession(dirs)
	}
	if o.OnEvents != nil {
		o.OnEvents(dirs, &events)
	}
	start := now()

	prompt, err := ComposePrompt(src, cfg.InstructionFiles, dirs.Workdir)
	if err == nil {
		err = writeMurmurMD(dirs, inv, prompt, cfg.InstructionFiles, bound)
	}
	if err != nil {
		tw.Close()
		dirs.Release()
		return nil, ExitCodeRefused, err
	}

	l := &Loop{
		SessionID: dirs.ID, Model: cfg.Model, Driver: o.Driver, Choice: limits[0], Config: cfg.DriverConfig,
		Tools: inv, Prompt: prompt, Events: &events,
		Recorder: trace.Recorder{Level: capture, BlobDir: dirs.Blobs()},
		Retry:    retry, MaxTurns: cfg.MaxTurns, Keep: cfg.KeepWorking, Done: cfg.DoneCheck,
		Runner: o.Runner, Workdir: dirs.Workdir, Logs: dirs.Logs(), Now: o.Now, Sleep: o.Sleep, Rand: o.Rand,
	}
	if cfg.MaxSessionTokens > 0 {
		l.Session = spend.NewSessionCeiling(cfg.MaxSessionTokens)
		l.Ceilings = append(l.Ceilings, l.Session)
	}
	if cfg.MachineTokensPerDay > 0 {
		l.Ceilings = append(l.Ceilings, spend.NewMachineMeter(spend.MeterPath(o.MurmurHome), cfg.MachineTokensPerDay))
	}
	if o.Deadline > 0 {
		l.Deadline = start.Add(o.Deadline)
		if n := noticeSecs(cfg.DeadlineNoticeSecs, o.Deadline); n > 0 {
			l.NoticeAt = l.Deadline.Add(-time.Duration(n) * time.Second)
		}
	}

	sess := &Session{Dirs: dirs, Loop: l, events: &events, tw: tw, stderr: stderr, now: now, start: start, onEnd: o.OnEnd}
	sess.Task, sess.TaskSource, sess.TaskErr = session.LaunchTask(o.Task, dirs.Workdir)
	events.Emit(event.Event{Type: "session_start", Fields: sessionStart(o, dirs, limits, prompt, inv, capture, retry, l, sess.TaskSource)})
	if cfg.Retain != nil {
		removed, err := session.Sweep(dirs, o.ManifestDir, *cfg.Retain, now())
		for _, r := range removed {
			f := map[string]any{"session_id": r.ID, "reason": r.Reason, "records_dir": r.Records}
			if r.Workdir != "" {
				f["workdir"] = r.Workdir
			}
			events.Emit(event.Event{Type: "retention", Fields: f})
		}
		if err != nil {
			// A session that cannot be removed is reported, not fatal:
			// the running session is not at fault.
			fmt.Fprintf(stderr, "mur: %s: %v\n", dirs.ID, err)
		}
	}
	return sess, ExitCodeOK, nil
}

// noticeSecs resolves lifecycle.deadline_notice_secs for a deadline.
func noticeSecs(set *int, deadline time.Duration) int {
	if set != nil {
		return *set
	}
	n := 300
	if tenth := int(deadline / time.Second / 10); tenth < n {
		n = tenth
	}
	if n < 1 {
		n = 1
	}
	return n
}

// sessionStart builds the session_start line.
func sessionStart(o Options, dirs session.Dirs, limits []manifest.ChoiceLimits, prompt Prompt, inv *Inventory, capture trace.Capture, retry RetryConfig, l *Loop, source session.TaskSource) map[string]any {
	cfg := o.Config
	tools := make([]string, 0, len(inv.Defs()))
	for _, d := range inv.Defs() {
		tools = append(tools, d.Name)
	}
	f := map[string]any{
		"session_id": dirs.ID, "transport": "http", "model": cfg.Model, "driver": cfg.DriverName,
		"workdir": dirs.Workdir, "records_dir": dirs.Records, "runtime_dir": dirs.Runtime(),
		"capture": string(capture), "model_limits": limits, "tools": tools,
		"retry":        map[string]any{"max_retries": retry.MaxRetries, "initial_delay_ms": retry.InitialDelayMs, "max_delay_ms": retry.MaxDelayMs},
		"task_source":  string(source),
		"tool_refresh": orDefault(cfg.ToolRefresh, "compaction"),
	}
	if cfg.Capsule != "" {
		f["capsule"] = cfg.Capsule
	}
	if prompt.Source != "" {
		f["system_prompt_source"] = prompt.Source
	}
	if prompt.Instructions != nil {
		f["instruction_files"] = prompt.Instructions
	}
	if cfg.MaxTurns > 0 {
		f["max_turns"] = cfg.MaxTurns
	}
	if cfg.MaxSessionTokens > 0 {
		f["max_session_tokens"] = cfg.MaxSessionTokens
	}
	if cfg.MachineTokensPerDay > 0 {
		f["machine_tokens_per_day"] = cfg.MachineTokensPerDay
	}
	if !l.Deadline.IsZero() {
		f["deadline"] = l.Deadline.UTC().Format(time.RFC3339Nano)
		if !l.NoticeAt.IsZero() {
			f["deadline_notice"] = l.NoticeAt.UTC().Format(time.RFC3339Nano)
		}
	}
	if o.Gateways != nil {
		f["gateways"] = o.Gateways
	}
	for k, v := range o.SessionFields {
		if _, taken := f[k]; !taken {
			f[k] = v
		}
	}
	return f
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// finish writes out/result.txt, session_end and the one-line status, and
// returns the exit code.
func finish(onEnd func(), events *event.Stream, tw *trace.Writer, dirs session.Dirs, stderr io.Writer, now func() time.Time, start time.Time, o, totals Outcome) (int, error) {
	if onEnd != nil {
		onEnd()
	}
	result := resultFile(o)
	werr := os.WriteFile(dirs.Result(), []byte(result), 0o600)
	f := map[string]any{
		"session_id": dirs.ID, "exit_status": o.Status, "turns": totals.Turns,
		"input_tokens": totals.InputTokens, "output_tokens": totals.OutputTokens,
		"duration_ms": now().Sub(start).Milliseconds(),
	}
	events.Emit(event.Event{Type: "session_end", Fields: f})
	code := ExitCodeTask
	switch o.Status {
	case ExitOK:
		code = ExitCodeOK
	case ExitCanceled:
		code = ExitCodeCanceled
	}
	if o.Fragment {
		fmt.Fprintf(stderr, "%s the answer is a fragment: the last allowed turn was cut at the output cap; raise inference.max_tokens or inference.max_turns for the rest\n", codeFragment)
	}
	fmt.Fprintln(stderr, statusLine(dirs, o, totals))
	return code, errors.Join(werr, tw.Err())
}

// resultFile is out/result.txt's content for an outcome.
func resultFile(o Outcome) string {
	switch o.Status {
	case ExitOK:
		if o.Fragment {
			return o.Answer + "\n\n[fragment: this reply was cut at the output cap]\n"
		}
		return o.Answer
	case ExitSpendCeiling:
		return "stopped: " + o.Reason + "\n"
	case ExitMaxTurns:
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
	if o.Status != ExitOK && o.Code != "" {
		head += string(o.Code) + " "
	}
	s := fmt.Sprintf("%s%s status: %s", head, dirs.ID, o.Status)
	if o.Reason != "" && o.Status != ExitOK {
		s += ": " + o.Reason
	}
	return s + fmt.Sprintf(" (%d turns, %d tokens; records %s)", totals.Turns, totals.InputTokens+totals.OutputTokens, dirs.Records)
}

// writeMurmurMD writes MURMUR.md into the session's runtime directory: the
// agent's map of what it has.
func writeMurmurMD(dirs session.Dirs, inv *Inventory, prompt Prompt, instructionFiles []string, bound string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# MURMUR.md\n\nSession %s. Work folder: %s\n", dirs.ID, dirs.Workdir)
	section := func(title string, kinds ...string) {
		var lines []string
		for _, d := range inv.Defs() {
			for _, k := range kinds {
				if d.Kind == k || (k == KindTool && d.Kind == "") {
					lines = append(lines, fmt.Sprintf("- %s: %s", d.Name, firstLine(d.Description)))
				}
			}
		}
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n", title, strings.Join(lines, "\n"))
	}
	section("Installed Tools", KindTool, KindNative, KindRuntime, KindShell)
	section("Installed Skills", KindSkill)
	if bound != "" {
		fmt.Fprintf(&b, "\n## System Prompt\n\nThe skill %s is bound as your system prompt, so it is not in your tool list.\n", bound)
	}
	if instructionFiles != nil {
		b.WriteString("\n## Instruction Files\n\n")
		for _, f := range prompt.Instructions {
			fmt.Fprintf(&b, "- %s: %s\n", f.Path, f.Status)
		}
		if nested := nestedInstructionFiles(dirs.Workdir, instructionFiles); len(nested) > 0 {
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
