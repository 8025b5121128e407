package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/images"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/spend"
	"github.com/murmur/mur/internal/trace"
)

// Plan is the one resolved, validated input every task of a session runs
// from. It holds the effective manifest's inference and lifecycle blocks
// as they are (Capsule.Effective applied every default; nothing is
// copied), every driver choice's limits as manifest.ResolveLimits
// resolved them, the capture level, the system prompt's sources and the
// tool inventory. A capsule session builds it once, with NewPlan, before
// any session exists; the loop reads it and re-derives nothing.
type Plan struct {
	// Capsule is the capsule's name.
	Capsule string
	// Inference and Lifecycle are the effective manifest's blocks.
	Inference *manifest.Inference
	Lifecycle *manifest.Lifecycle
	// Limits are every driver choice's limits, the primary first; the
	// loop serves every turn through the primary.
	Limits []manifest.ChoiceLimits
	// DriverConfig is inference.driver.config as JSON; nil when unset.
	DriverConfig json.RawMessage
	// CompactionConfig is inference.compaction.driver_config laid over
	// DriverConfig (shallow), sent by run-inference calls that serve
	// on-compaction; nil when the manifest sets no driver_config.
	CompactionConfig json.RawMessage
	// CompactionPrompt is inference.compaction.system_prompt, or the text
	// of its system_prompt_file, read at launch; nil when neither is set.
	CompactionPrompt *string
	// Models is the primary driver's models: table, which gives a hook's
	// run-inference its output cap for the model it calls.
	Models map[string]manifest.ModelLimits
	// Capture is trace.capture.
	Capture trace.Capture
	// MachineTokensPerDay is the machine's daily token ceiling (the global
	// config's spend.machine_tokens_per_day); 0 is none.
	MachineTokensPerDay int64
	// Prompt is where the system prompt comes from beyond the manifest.
	Prompt PromptSources
	// Tools is the inventory; BoundSkill is the skill bound as the system
	// prompt and so left out of it ("" for none).
	Tools      *Inventory
	BoundSkill string
	// Images are context.images resolved: how many images the driver
	// receives as bytes (keep) and what a turn's tools may return.
	Images images.Limits
}

// Sources are what a plan is built from besides the manifest.
type Sources struct {
	// Installed gives manifest.ResolveLimits the drivers' models: tables.
	Installed manifest.Installed
	Tools     []Tool
	Prompt    PromptSources
	// MachineTokensPerDay is the global config's daily ceiling; 0 is none.
	MachineTokensPerDay int64
	// Contained says a contained command runner exists for
	// lifecycle.done_check.
	Contained bool
}

// NewPlan builds the plan of capsule c, which must be effective (built by
// Capsule.Effective, so every default is the manifest engine's), and
// checks everything that can refuse it before any session exists. A
// refusal is a diag.ListError (E-RUN-052/054/055 from the limits
// resolver, E-RUN-009 for a system_prompt_file that cannot be read); any
// other error is a plan the caller built wrong.
func NewPlan(c *manifest.Capsule, src Sources) (*Plan, error) {
	if err := resolved(c); err != nil {
		return nil, err
	}
	inf, lc := c.Inference, c.Lifecycle
	limits, ds := manifest.ResolveLimits(c, src.Installed)
	if ds.HasErrors() {
		return nil, diag.ListError(ds.Errors())
	}
	if len(limits) == 0 && !inf.IsProcess() {
		return nil, fmt.Errorf("plan: driver %q is not among the installed artifacts, so it has no limits", inf.Driver.Artifact)
	}
	if dc := lc.DoneCheck; dc != nil {
		// Validation refused a command that does not split into a program
		// and its words (E-MAN-003); a plan built without it is wrong.
		if argv, err := dc.Argv(); err != nil || len(argv) == 0 {
			return nil, fmt.Errorf("plan: lifecycle.done_check.command %q does not name a program", dc.Command)
		}
		if !src.Contained {
			// Never run the check uncontained: without the shell session's
			// runner there is nowhere safe to run it.
			return nil, errors.New("plan: lifecycle.done_check is set but no contained command runner was given")
		}
	}
	capture, err := trace.ParseCapture(c.Trace.Capture)
	if err != nil {
		return nil, fmt.Errorf("plan: trace.capture: %w", err)
	}
	p := &Plan{
		Capsule: c.Name, Inference: inf, Lifecycle: lc, Limits: limits, Capture: capture,
		MachineTokensPerDay: src.MachineTokensPerDay, Prompt: src.Prompt,
	}
	var ci *manifest.Images
	if c.Context != nil {
		ci = c.Context.Images
	}
	if p.Images, err = images.Resolve(ci); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if dc := inf.Driver.Config; dc != nil {
		b, err := dc.JSON()
		if err != nil {
			return nil, fmt.Errorf("plan: inference.driver.config: %w", err)
		}
		p.DriverConfig = b
	}
	if cp := inf.Compaction; cp != nil && cp.DriverConfig != nil {
		if p.CompactionConfig, err = overlay(p.DriverConfig, cp.DriverConfig); err != nil {
			return nil, fmt.Errorf("plan: inference.compaction.driver_config: %w", err)
		}
	}
	if cp := inf.Compaction; cp != nil {
		switch {
		case cp.SystemPrompt != nil:
			v := *cp.SystemPrompt
			p.CompactionPrompt = &v
		case cp.SystemPromptFile != "":
			path := cp.SystemPromptFile
			if !filepath.IsAbs(path) {
				path = filepath.Join(src.Prompt.ManifestDir, path)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, diag.ListError{diag.New(diag.RunPromptFile, diag.Pos{}, "inference.compaction.system_prompt_file",
					fmt.Sprintf("cannot read the compaction system prompt file %q: %v; create it next to murmur.yaml or fix the path", cp.SystemPromptFile, err))}
			}
			v := string(b)
			p.CompactionPrompt = &v
		}
	}
	if src.Installed != nil {
		if a, ok := src.Installed.Artifact(inf.Driver.Artifact); ok && a != nil {
			p.Models = a.Models
		}
	}
	if _, _, _, err := p.basePrompt(); err != nil {
		var d diag.Diagnostic
		if errors.As(err, &d) {
			return nil, diag.ListError{d}
		}
		return nil, err
	}
	tools := src.Tools
	if name := inf.SystemPromptArtifact; name != "" && src.Prompt.Override == nil {
		// The skill bound as the system prompt is not offered as a tool
		// too; --system-prompt releases it back into the inventory.
		p.BoundSkill = name[strings.LastIndex(name, "/")+1:]
		kept := tools[:0:0]
		for _, t := range tools {
			if d := t.Def(); d.Kind == KindSkill && d.Name == p.BoundSkill {
				continue
			}
			kept = append(kept, t)
		}
		tools = kept
	}
	if p.Tools, err = NewInventory(tools); err != nil {
		return nil, err
	}
	return p, nil
}

// errUnresolved is a plan built from a manifest whose defaults were not
// applied: the loop would otherwise need defaults of its own.
var errUnresolved = errors.New("plan: the manifest is not effective: build the plan from Capsule.Effective()")

// resolved checks that c carries what the loop reads with its defaults
// applied, so no rule is resolved a second time here. Under transport:
// process the harness makes the model calls, so retry, tool refresh and
// limits do not apply (the manifest engine gives them no defaults there).
func resolved(c *manifest.Capsule) error {
	inf := c.Inference
	switch {
	case inf == nil || inf.Driver == nil || inf.Driver.Artifact == "":
		return errors.New("plan: no inference driver: inference.driver.artifact names none")
	case !inf.IsProcess() && (inf.Retry == nil || inf.Retry.MaxRetries == nil || inf.Retry.InitialDelayMS == nil || inf.Retry.MaxDelayMS == nil || inf.ToolRefresh == ""),
		inf.Transport == "", c.Trace == nil || c.Trace.Capture == "", c.Lifecycle == nil,
		c.Lifecycle.DoneCheck != nil && c.Lifecycle.DoneCheck.TimeoutSecs == nil:
		return errUnresolved
	}
	return nil
}

// primary is the driver choice every turn is served through.
func (p *Plan) primary() manifest.ChoiceLimits { return p.Limits[0] }

// maxTurns is inference.max_turns; 0 is no cap.
func (p *Plan) maxTurns() int { return int(deref(p.Inference.MaxTurns)) }

func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}

// Runtime is what a session gives its loop: the driver and command runner,
// the event sink every record goes to, and the places and clock it runs
// against. The loop knows nothing else of the session.
type Runtime struct {
	SessionID string
	Driver    Driver
	Runner    CommandRunner
	Events    event.Sink
	// Workdir is where instruction files are read and the done check
	// runs; BlobDir holds captured payloads; Logs is the session's logs
	// directory: a driver failure's text past its first line (a
	// WebAssembly trap's backtrace) goes to inference.log there, and the
	// task's reason keeps the one line.
	Workdir, BlobDir, Logs string
	// OutDir is the records directory's out/, where
	// inference.compaction.dump_summaries appends; "" writes none.
	OutDir string
	// Compactor runs the on-compaction hooks; nil for none.
	Compactor Compactor
	// Meter is the machine's daily token meter, nil for none.
	Meter spend.Admitter
	// Start and Deadline: the loop's tasks end Deadline after Start (0:
	// no deadline), with the agent told before.
	Start    time.Time
	Deadline time.Duration
	// Now, Sleep and Rand replace the clock, waits and jitter in tests.
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
	Rand  *rand.Rand
}

// NewLoop starts the loop that runs every task of a session from plan p:
// the system prompt is composed with the instruction files in rt.Workdir,
// and the spend ceilings and deadline set.
func NewLoop(p *Plan, rt Runtime) (*Loop, error) {
	prompt, err := p.ComposePrompt(rt.Workdir)
	if err != nil {
		return nil, err
	}
	l := &Loop{plan: p, rt: rt, prompt: prompt, recorder: trace.Recorder{Level: p.Capture, BlobDir: rt.BlobDir}, rand: rt.Rand}
	if l.rand == nil {
		l.rand = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x6d7572))
	}
	if n := deref(p.Inference.MaxSessionTokens); n > 0 {
		l.session = spend.NewSessionCeiling(n)
		l.ceilings = append(l.ceilings, l.session)
	}
	if rt.Meter != nil {
		l.ceilings = append(l.ceilings, rt.Meter)
	}
	if rt.Deadline > 0 {
		l.deadline = rt.Start.Add(rt.Deadline)
		if n := noticeSecs(p.Lifecycle.DeadlineNoticeSecs, rt.Deadline); n > 0 {
			l.noticeAt = l.deadline.Add(-time.Duration(n) * time.Second)
		}
	}
	return l, nil
}

// noticeSecs resolves lifecycle.deadline_notice_secs against the
// session's --deadline, which only the run knows: unset, it is five
// minutes, or a tenth of the deadline when shorter, at least a second.
func noticeSecs(set *int64, deadline time.Duration) int64 {
	if set != nil {
		return *set
	}
	n := int64(300)
	if tenth := int64(deadline / time.Second / 10); tenth < n {
		n = tenth
	}
	if n < 1 {
		n = 1
	}
	return n
}

// Prompt is the composed system prompt the loop sends.
func (l *Loop) Prompt() Prompt { return l.prompt }

// Deadline is when the session's --deadline ends its tasks; zero for none.
func (l *Loop) Deadline() time.Time { return l.deadline }

// Describe is the loop's part of session_start: the model and driver,
// every choice's limits, the tools, capture, retry and the prompt's
// sources, the turn and token limits, and the deadline.
func (l *Loop) Describe() map[string]any {
	p, inf := l.plan, l.plan.Inference
	tools := make([]string, 0, len(p.Tools.Defs()))
	for _, d := range p.Tools.Defs() {
		tools = append(tools, d.Name)
	}
	f := map[string]any{
		"transport": inf.Transport, "model": inf.Model, "driver": inf.Driver.Artifact,
		"capture": string(p.Capture), "tools": tools,
	}
	if !inf.IsProcess() {
		r := inf.Retry
		f["model_limits"], f["tool_refresh"] = p.Limits, inf.ToolRefresh
		f["retry"] = map[string]any{"max_retries": *r.MaxRetries, "initial_delay_ms": *r.InitialDelayMS, "max_delay_ms": *r.MaxDelayMS}
	}
	if p.Capsule != "" {
		f["capsule"] = p.Capsule
	}
	if l.prompt.Source != "" {
		f["system_prompt_source"] = l.prompt.Source
	}
	if l.prompt.Instructions != nil {
		f["instruction_files"] = l.prompt.Instructions
	}
	if n := p.maxTurns(); n > 0 {
		f["max_turns"] = n
	}
	if n := deref(inf.MaxSessionTokens); n > 0 {
		f["max_session_tokens"] = n
	}
	if p.MachineTokensPerDay > 0 {
		f["machine_tokens_per_day"] = p.MachineTokensPerDay
	}
	if !l.deadline.IsZero() {
		f["deadline"] = l.deadline.UTC().Format(time.RFC3339Nano)
		if !l.noticeAt.IsZero() {
			f["deadline_notice"] = l.noticeAt.UTC().Format(time.RFC3339Nano)
		}
	}
	return f
}

// FragmentWarning is the W-RUN-001 line for an answer cut at the output cap.
func FragmentWarning() string {
	return string(codeFragment) + " the answer is a fragment: the last allowed turn was cut at the output cap; raise inference.max_tokens or inference.max_turns for the rest"
}

// overlay lays over on base, shallowly: each top-level key of over
// replaces base's or is added beside it (spec 004
// inference.compaction.driver_config).
func overlay(base json.RawMessage, over *manifest.Raw) (json.RawMessage, error) {
	ob, err := over.JSON()
	if err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if len(base) > 0 {
		if err := json.Unmarshal(base, &m); err != nil {
			return nil, err
		}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(ob, &top); err != nil {
		return nil, err
	}
	for k, v := range top {
		m[k] = v
	}
	return json.Marshal(m)
}
