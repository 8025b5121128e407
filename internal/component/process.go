package component

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/murmur/mur/internal/wasm/cm"
)

// IfaceProcess is the process driver's interface (transport: process).
const IfaceProcess = "murmur:driver/process@0.1.0"

// InterruptMode is murmur:driver/process's interrupt-mode enum.
type InterruptMode string

func (InterruptMode) witEnum() {}

// The interrupt-mode cases.
const (
	InterruptStdinMessage InterruptMode = "stdin-message"
	InterruptSignalInt    InterruptMode = "signal-int"
	InterruptUnsupported  InterruptMode = "unsupported"
)

// ProcessDescription is describe()'s description record.
type ProcessDescription struct {
	Executable     string        `wit:"executable"`
	VersionArgs    []string      `wit:"version-args"`
	TestedVersions []string      `wit:"tested-versions"`
	RequiredEnv    []string      `wit:"required-env"`
	Interrupt      InterruptMode `wit:"interrupt"`
	ReportsUsage   bool          `wit:"reports-usage"`
}

// ToolServer is the loopback tool server handed to the driver.
type ToolServer struct {
	URL       string   `wit:"url"`
	Token     string   `wit:"token"`
	ToolNames []string `wit:"tool-names"`
}

// LaunchRequest is launch()'s launch-request record.
type LaunchRequest struct {
	Prompt        string      `wit:"prompt"`
	SystemPrompt  *string     `wit:"system-prompt"`
	Model         *string     `wit:"model"`
	Config        *string     `wit:"config"`
	ResumeSession *string     `wit:"resume-session"`
	Tools         *ToolServer `wit:"tools"`
	MaxTurns      uint32      `wit:"max-turns"`
}

// LaunchPlan is launch()'s launch-plan record.
type LaunchPlan struct {
	Args       []string `wit:"args"`
	EnvSet     []Pair   `wit:"env-set"`
	Stdin      []byte   `wit:"stdin"`
	CloseStdin bool     `wit:"close-stdin"`
	Interrupt  []byte   `wit:"interrupt"`
}

// HarnessToolCall is the harness-event tool-call record.
type HarnessToolCall struct {
	ID    string `wit:"id"`
	Name  string `wit:"name"`
	Input string `wit:"input"`
}

// HarnessUsage is the harness-event usage record.
type HarnessUsage struct {
	InputTokens  uint64 `wit:"input-tokens"`
	OutputTokens uint64 `wit:"output-tokens"`
}

// The harness-event cases.
const (
	HarnessSession         = "session"
	HarnessMessage         = "message"
	HarnessToolCallEvent   = "tool-call"
	HarnessUsageEvent      = "usage"
	HarnessFinished        = "finished"
	HarnessFailed          = "failed"
	HarnessSessionNotFound = "session-not-found"
)

// HarnessEvent is one harness-event: Case names it; Text carries the
// session id, message, result, failure or missing session; ToolCall and
// Usage their cases.
type HarnessEvent struct {
	Case     string
	Text     string
	ToolCall HarnessToolCall
	Usage    HarnessUsage
}

// ProcessDriver is an instantiated process driver's murmur:driver/process
// export.
type ProcessDriver struct {
	inst                                    *Instance
	describe, parseVersion, launch, parseLn *cm.Func
}

// ExportsProcess reports whether the component exports any version of
// murmur:driver/process (a transport: http driver that does is refused
// with E-RUN-030).
func ExportsProcess(c *cm.Component) bool {
	bare := IfaceProcess[:strings.LastIndex(IfaceProcess, "@")]
	for _, e := range c.Exports() {
		if e.Name == bare || strings.HasPrefix(e.Name, bare+"@") {
			return true
		}
	}
	return false
}

// ErrNoProcess means the component exports no version of
// murmur:driver/process at all (E-RUN-029); ErrVersion, that it exports
// only another version (E-WIT-LEVEL-001).
var ErrNoProcess = errors.New("component exports no murmur:driver/process")

// ProcessDriver resolves the four functions of murmur:driver/process at
// exactly IfaceProcess.
func (i *Instance) ProcessDriver() (*ProcessDriver, error) {
	if !ExportsProcess(i.comp) {
		return nil, fmt.Errorf("%w: component %q: a transport: process driver exports %s", ErrNoProcess, i.Name, IfaceProcess)
	}
	d := &ProcessDriver{inst: i}
	for fn, dst := range map[string]**cm.Func{"describe": &d.describe, "parse-version": &d.parseVersion, "launch": &d.launch, "parse-line": &d.parseLn} {
		f, err := i.export(IfaceProcess, fn)
		if err != nil {
			return nil, err
		}
		*dst = f
	}
	return d, nil
}

// Describe calls describe().
func (d *ProcessDriver) Describe(ctx context.Context) (ProcessDescription, error) {
	var out ProcessDescription
	v, err := d.describe.Call(ctx)
	if err == nil {
		err = lift(v, &out)
	}
	if err != nil {
		return out, fmt.Errorf("process driver %q describe: %w", d.inst.Name, err)
	}
	return out, nil
}

// ParseVersion calls parse-version(output); ok is false when the driver
// cannot read a version there.
func (d *ProcessDriver) ParseVersion(ctx context.Context, output string) (version string, ok bool, err error) {
	v, err := d.parseVersion.Call(ctx, cm.String(output))
	if err != nil {
		return "", false, fmt.Errorf("process driver %q parse-version: %w", d.inst.Name, err)
	}
	var p *string
	if err := lift(v, &p); err != nil {
		return "", false, fmt.Errorf("process driver %q parse-version: %w", d.inst.Name, err)
	}
	if p == nil {
		return "", false, nil
	}
	return *p, true, nil
}

// DriverError is an err a process driver returned from launch or
// parse-line: the driver's own refusal, not a trap.
type DriverError struct {
	Func, Msg string
}

func (e *DriverError) Error() string { return e.Func + ": " + e.Msg }

// Launch calls launch(request). The driver's own err is a *DriverError.
func (d *ProcessDriver) Launch(ctx context.Context, r LaunchRequest) (LaunchPlan, error) {
	v, err := d.launch.Call(ctx, lower(r))
	if err != nil {
		return LaunchPlan{}, fmt.Errorf("process driver %q launch: %w", d.inst.Name, err)
	}
	p, _ := v.Payload()
	if !v.IsOK() {
		return LaunchPlan{}, &DriverError{Func: "launch", Msg: p.Str()}
	}
	var plan LaunchPlan
	if err := lift(p, &plan); err != nil {
		return LaunchPlan{}, fmt.Errorf("process driver %q launch: %w", d.inst.Name, err)
	}
	return plan, nil
}

// ParseLine calls parse-line(line). The driver's own err is a
// *DriverError.
func (d *ProcessDriver) ParseLine(ctx context.Context, line string) ([]HarnessEvent, error) {
	v, err := d.parseLn.Call(ctx, cm.String(line))
	if err != nil {
		return nil, fmt.Errorf("process driver %q parse-line: %w", d.inst.Name, err)
	}
	p, _ := v.Payload()
	if !v.IsOK() {
		return nil, &DriverError{Func: "parse-line", Msg: p.Str()}
	}
	var out []HarnessEvent
	for _, e := range p.List() {
		ev, err := liftHarnessEvent(e)
		if err != nil {
			return nil, fmt.Errorf("process driver %q parse-line: %w", d.inst.Name, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

func liftHarnessEvent(v cm.Val) (HarnessEvent, error) {
	if v.Kind() != cm.KindVariant {
		return HarnessEvent{}, fmt.Errorf("component: harness-event: guest returned %s", v.Kind())
	}
	ev := HarnessEvent{Case: v.Str()}
	p, _ := v.Payload()
	switch ev.Case {
	case HarnessSession, HarnessMessage, HarnessFinished, HarnessFailed, HarnessSessionNotFound:
		ev.Text = p.Str()
	case HarnessToolCallEvent:
		return ev, lift(p, &ev.ToolCall)
	case HarnessUsageEvent:
		return ev, lift(p, &ev.Usage)
	default:
		return ev, fmt.Errorf("component: harness-event: unknown case %q", ev.Case)
	}
	return ev, nil
}
