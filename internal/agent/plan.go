package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/spend"
	"github.com/murmur/mur/internal/trace"
)

// Config is what the loop reads of a transport: http capsule manifest,
// resolved by the manifest engine and handed down by the capsule session;
// zero values are "unset".
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
	KeepWorking      *manifest.KeepWorking
	DoneCheck        *manifest.DoneCheck
	// DeadlineNoticeSecs is lifecycle.deadline_notice_secs; nil is the
	// default (five minutes, or a tenth of the deadline when shorter).
	DeadlineNoticeSecs *int
	ToolRefresh        string
}

// Plan is a Config checked, with the tools it offers, before anything of
// a session exists. The session then starts one Loop from it.
type Plan struct {
	Config Config
	// Prompt is Config.Prompt with the manifest's folder and the
	// --system-prompt override.
	Prompt PromptSources
	// Tools is the inventory; BoundSkill is the skill bound as the system
	// prompt and so left out of it ("" for none).
	Tools      *Inventory
	BoundSkill string
	// Capture and Retry are Config's with their defaults.
	Capture trace.Capture
	Retry   RetryConfig
}

// NewPlan checks everything of cfg that can refuse a capsule before any
// session exists. A refusal is a diag.ListError (such as E-RUN-009 for a
// system_prompt_file that cannot be read); any other error is a plan the
// caller built wrong. prompt carries the manifest's folder and the
// --system-prompt override; runner says a contained command runner exists
// for lifecycle.done_check.
func NewPlan(cfg Config, tools []Tool, prompt PromptSources, runner bool) (*Plan, error) {
	if len(cfg.ModelLimits) == 0 {
		return nil, errors.New("plan: no resolved model limits for the primary driver choice")
	}
	if dc := cfg.DoneCheck; dc != nil {
		// Validation refused a command that does not split into a program
		// and its words (E-MAN-003); a plan built without it is wrong.
		if argv, err := dc.Argv(); err != nil || len(argv) == 0 {
			return nil, fmt.Errorf("plan: lifecycle.done_check.command %q does not name a program", dc.Command)
		}
	}
	if cfg.DoneCheck != nil && !runner {
		// Never run the check uncontained: without the shell session's
		// runner there is nowhere safe to run it.
		return nil, errors.New("plan: lifecycle.done_check is set but no contained command runner was given")
	}
	if _, _, _, err := basePrompt(prompt); err != nil {
		var d diag.Diagnostic
		if errors.As(err, &d) {
			return nil, diag.ListError{d}
		}
		return nil, err
	}
	p := &Plan{Config: cfg, Prompt: prompt, Capture: cfg.Capture, Retry: DefaultRetry}
	if prompt.ArtifactName != "" && prompt.Override == nil {
		// The skill bound as the system prompt is not offered as a tool
		// too; --system-prompt releases it back into the inventory.
		p.BoundSkill = prompt.ArtifactName[strings.LastIndex(prompt.ArtifactName, "/")+1:]
		kept := tools[:0:0]
		for _, t := range tools {
			if d := t.Def(); d.Kind == KindSkill && d.Name == p.BoundSkill {
				continue
			}
			kept = append(kept, t)
		}
		tools = kept
	}
	inv, err := NewInventory(tools)
	if err != nil {
		return nil, err
	}
	p.Tools = inv
	if p.Capture == "" {
		p.Capture = trace.CaptureMeta
	}
	if cfg.Retry != nil {
		p.Retry = *cfg.Retry
	}
	return p, nil
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
	// runs; BlobDir holds captured payloads; Logs a failed call's text.
	Workdir, BlobDir, Logs string
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

// Loop starts the plan's loop: the system prompt is composed with the
// instruction files in rt.Workdir, and the spend ceilings and deadline set.
func (p *Plan) Loop(rt Runtime) (*Loop, error) {
	cfg := p.Config
	prompt, err := ComposePrompt(p.Prompt, cfg.InstructionFiles, rt.Workdir)
	if err != nil {
		return nil, err
	}
	l := &Loop{
		SessionID: rt.SessionID, Model: cfg.Model, Driver: rt.Driver, Choice: cfg.ModelLimits[0], Config: cfg.DriverConfig,
		Tools: p.Tools, Prompt: prompt, Events: rt.Events,
		Recorder: trace.Recorder{Level: p.Capture, BlobDir: rt.BlobDir},
		Retry:    p.Retry, MaxTurns: cfg.MaxTurns, Keep: cfg.KeepWorking, Done: cfg.DoneCheck,
		Runner: rt.Runner, Workdir: rt.Workdir, Logs: rt.Logs, Now: rt.Now, Sleep: rt.Sleep, Rand: rt.Rand,
	}
	if cfg.MaxSessionTokens > 0 {
		l.Session = spend.NewSessionCeiling(cfg.MaxSessionTokens)
		l.Ceilings = append(l.Ceilings, l.Session)
	}
	if rt.Meter != nil {
		l.Ceilings = append(l.Ceilings, rt.Meter)
	}
	if rt.Deadline > 0 {
		l.Deadline = rt.Start.Add(rt.Deadline)
		if n := noticeSecs(cfg.DeadlineNoticeSecs, rt.Deadline); n > 0 {
			l.NoticeAt = l.Deadline.Add(-time.Duration(n) * time.Second)
		}
	}
	return l, nil
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

// Describe is the loop's part of session_start: the model and driver,
// every choice's limits, the tools, capture, retry and the prompt's
// sources, the turn and token limits, and the deadline.
func (l *Loop) Describe(p *Plan) map[string]any {
	cfg := p.Config
	tools := make([]string, 0, len(l.Tools.Defs()))
	for _, d := range l.Tools.Defs() {
		tools = append(tools, d.Name)
	}
	f := map[string]any{
		"transport": "http", "model": cfg.Model, "driver": cfg.DriverName,
		"capture": string(p.Capture), "model_limits": cfg.ModelLimits, "tools": tools,
		"retry":        map[string]any{"max_retries": p.Retry.MaxRetries, "initial_delay_ms": p.Retry.InitialDelayMs, "max_delay_ms": p.Retry.MaxDelayMs},
		"tool_refresh": orDefault(cfg.ToolRefresh, "compaction"),
	}
	if cfg.Capsule != "" {
		f["capsule"] = cfg.Capsule
	}
	if l.Prompt.Source != "" {
		f["system_prompt_source"] = l.Prompt.Source
	}
	if l.Prompt.Instructions != nil {
		f["instruction_files"] = l.Prompt.Instructions
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
	return f
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// FragmentWarning is the W-RUN-001 line for an answer cut at the output cap.
func FragmentWarning() string {
	return string(codeFragment) + " the answer is a fragment: the last allowed turn was cut at the output cap; raise inference.max_tokens or inference.max_turns for the rest"
}
