// Package shell runs a session's shell tools, murmur:shell/execute calls and
// native tools: each one an allowed binary resolved on mur run's PATH,
// started contained as its own process-group leader with /dev/null stdin and
// an environment built row by row, its output read back in the spec's result
// format, demoted to the background after lifecycle.shell_grace_secs, and
// killed at the session's end.
package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/shell/readonly"
	"github.com/murmur/mur/internal/shell/syntax"
)

// Container prepares a command to run contained (Landlock, cgroup, network
// namespace, rlimits, seccomp). *sandbox.Session satisfies it. Prepare may
// set fields of cmd.SysProcAttr but must keep the command a process group
// leader: Setpgid, which this package sets before calling it, or Setsid (a
// new session is a new process group too).
type Container interface {
	Prepare(cmd *exec.Cmd) error
}

// Starter is implemented by a container that starts its prepared commands
// itself (*sandbox.Session's Start: the command is born inside the
// session's cgroups, saving a migration per command); others are started
// with cmd.Start.
type Starter interface {
	Start(cmd *exec.Cmd) error
}

// LimitExplainer is implemented by a container that can attribute a
// finished command's failure to one resource limit (*sandbox.Session's
// LimitHit): the line it returns follows the result, and the command's
// status becomes resource_limit.
type LimitExplainer interface {
	LimitHit(err error, state *os.ProcessState) string
}

var (
	// ErrNotAllowed: the binary is not in capabilities.shell.allow.
	ErrNotAllowed = errors.New("binary not in capabilities.shell.allow")
	// ErrNotFound: an allowed binary is not on mur run's PATH.
	ErrNotFound = errors.New("binary not found on PATH")
	// ErrNoContainer: a session cannot run anything without containment.
	ErrNoContainer = errors.New("no container: every subprocess runs contained")
	// ErrUnknownWork: a work id this session did not hand out.
	ErrUnknownWork = errors.New("unknown work id")
	// ErrClosed: the session has ended.
	ErrClosed = errors.New("shell session ended")
	// ErrPolicy: the policy cannot start a session.
	ErrPolicy = errors.New("invalid shell policy")
)

// Policy is everything a session's subprocesses are granted, as plain
// values (docs/shell.md maps each from murmur.yaml).
type Policy struct {
	// Allow is capabilities.shell.allow: bare binary names.
	Allow []string
	// Interpreters are the allowed binaries whose command is a whole line
	// run as -c; nil means readonly.ShellInterpreters.
	Interpreters []string
	// PATH is the PATH mur run started with; bare names resolve on it.
	PATH string
	// HostEnv is mur run's environment (os.Environ()); only the rows of
	// the process environment read from it.
	HostEnv []string
	// Identity is row 2 (MURMUR_CAPSULE_NAME, …, MURMUR_INFERENCE_*) for
	// shell tool calls in a session with inference; empty otherwise.
	Identity [][2]string
	// BaselineEnv and StripEnv are capabilities.shell.baseline_env and
	// strip_env glob patterns.
	BaselineEnv []string
	StripEnv    []string
	// GraceSecs is lifecycle.shell_grace_secs; nil means not set.
	GraceSecs *int
	// ReadOnly is capabilities.filesystem.read_only.
	ReadOnly []string
	// Workdir is where commands run. Home and Tmp are the session's home/
	// and tmp/ folders; TmpMapped says the sandbox maps /tmp onto Tmp.
	Workdir   string
	Home      string
	Tmp       string
	TmpMapped bool
	// RuntimeDir and RecordsDir are the session's directories; LogsDir
	// defaults to RecordsDir/logs.
	RuntimeDir string
	RecordsDir string
	LogsDir    string
	// SessionID names the session in the session-end report.
	SessionID string
	// Stderr receives the session-end report; nil discards it.
	Stderr io.Writer
	// OnBackgroundExit, when set, is called (on its own goroutine) when a
	// backgrounded command exits, so a queue/sleep session can enqueue a
	// completion task: call Deliver(id, ViaCompletionTask) first and
	// enqueue only when it returns true.
	OnBackgroundExit func(Completion)
}

// Session runs one session's subprocesses.
type Session struct {
	p       Policy
	c       Container
	sink    event.Sink
	ro      *readonly.Checker
	allow   map[string]bool
	interp  map[string]bool
	hostEnv map[string]string
	logs    string

	mu     sync.Mutex
	work   map[string]*proc
	order  []string
	groups map[int]bool // process groups started, for the session-end kill
	closed bool
}

// New starts a session's shell layer. A nil container is refused: nothing
// runs bare.
func New(p Policy, c Container, sink event.Sink) (*Session, error) {
	if c == nil {
		return nil, ErrNoContainer
	}
	if sink == nil {
		sink = event.Discard
	}
	for _, k := range []struct{ name, v string }{{"Workdir", p.Workdir}, {"Home", p.Home}, {"Tmp", p.Tmp}, {"RecordsDir", p.RecordsDir}} {
		if k.v == "" || !filepath.IsAbs(k.v) {
			return nil, fmt.Errorf("policy %s %q must be an absolute path: %w", k.name, k.v, ErrPolicy)
		}
	}
	if p.GraceSecs != nil && *p.GraceSecs < 0 {
		return nil, fmt.Errorf("policy GraceSecs %d is negative: %w", *p.GraceSecs, ErrPolicy)
	}
	ro, err := readonly.New(p.Workdir, p.ReadOnly)
	if err != nil {
		return nil, err
	}
	s := &Session{
		p: p, c: c, sink: sink, ro: ro,
		allow: map[string]bool{}, interp: map[string]bool{},
		hostEnv: parseEnv(p.HostEnv),
		logs:    p.LogsDir,
		work:    map[string]*proc{},
		groups:  map[int]bool{},
	}
	if s.logs == "" {
		s.logs = filepath.Join(p.RecordsDir, "logs")
	}
	for _, b := range p.Allow {
		if !bareName(b) {
			return nil, fmt.Errorf("capabilities.shell.allow entry %q is not a bare binary name: %w", b, ErrPolicy)
		}
		s.allow[b] = true
	}
	interps := p.Interpreters
	if interps == nil {
		interps = readonly.ShellInterpreters
	}
	for _, b := range interps {
		s.interp[b] = true
	}
	return s, nil
}

func bareName(b string) bool {
	return b != "" && b != "." && b != ".." && !strings.ContainsAny(b, "/ \t\n\r\v\f")
}

// Resolve finds an allowed binary on mur run's PATH.
func (s *Session) Resolve(binary string) (string, error) {
	if !s.allow[binary] {
		return "", fmt.Errorf("%q: %w", binary, ErrNotAllowed)
	}
	for _, dir := range filepath.SplitList(s.p.PATH) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would resolve against the workdir
		}
		cand := filepath.Join(dir, binary)
		if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return cand, nil
		}
	}
	return "", fmt.Errorf("%q on PATH %q: %w", binary, s.p.PATH, ErrNotFound)
}

// canonical is the binary as records name it: symlinks resolved.
func canonical(p string) string {
	if c, err := filepath.EvalSymlinks(p); err == nil {
		return c
	}
	return p
}

// Call runs one shell tool call: binary is the tool (an allowed bare name)
// and command its command argument — the whole line for an interpreter,
// the arguments alone otherwise. A write the read-only check identifies is
// refused with a *readonly.Denial (its Message is what the model reads) and
// a protected_path_denied record, and nothing runs. A non-zero exit is a
// Result, not an error.
func (s *Session) Call(ctx context.Context, binary, command string) (Result, error) {
	path, err := s.Resolve(binary)
	if err != nil {
		return Result{}, err
	}
	args, d, err := s.check(binary, command)
	if err != nil {
		return Result{}, err
	}
	if d != nil {
		s.sink.Emit(d.Event())
		return Result{}, d
	}
	return s.run(ctx, spec{
		binary: binary, path: path, args: args, command: command,
		env:      s.buildEnv(envRequest{identity: true}),
		demote:   true,
		emitCall: true,
	})
}

// Check is the read-only pre-dispatch check of a shell tool call, with no
// record and nothing run: the dispatcher calls it before asking policy
// hooks, and on a refusal emits d.Event() and gives the model
// d.Message(). Call repeats it, so a call that skips Check is still
// refused.
func (s *Session) Check(binary, command string) (*readonly.Denial, error) {
	if !s.allow[binary] {
		return nil, fmt.Errorf("%q: %w", binary, ErrNotAllowed)
	}
	_, d, err := s.check(binary, command)
	return d, err
}

// Record writes the protected_path_denied record of a refusal found by
// Check, for a dispatcher that refuses the call itself.
func (s *Session) Record(d *readonly.Denial) { s.sink.Emit(d.Event()) }

// check turns a tool call's command into argv and checks it.
func (s *Session) check(binary, command string) ([]string, *readonly.Denial, error) {
	if s.interp[binary] {
		return []string{"-c", command}, s.ro.CheckLine(binary, command), nil
	}
	args, err := syntax.SplitArgs(command)
	if err != nil {
		return nil, nil, fmt.Errorf("split the arguments of %q: %w", binary, err)
	}
	return args, s.ro.CheckArgs(binary, args), nil
}

// ExecResult is murmur:shell/execute's shell-result.
type ExecResult struct {
	ExitCode       int32
	Stdout         string
	Stderr         string
	Truncated      bool
	FullOutputPath *string
}

// Execute is murmur:shell/execute's run: binary must be allowed, args are
// its argv after the binary, env is added before the credential strip. It
// errs only on a refusal or a spawn/IO failure; a non-zero exit is data.
// It runs in the foreground until the command exits or ctx ends, and
// writes the shell record a shell tool call's command gets.
func (s *Session) Execute(ctx context.Context, binary string, args []string, env [][2]string) (ExecResult, error) {
	path, err := s.Resolve(binary)
	if err != nil {
		return ExecResult{}, err
	}
	if d := s.ro.CheckArgs(binary, args); d != nil {
		s.sink.Emit(d.Event())
		return ExecResult{}, d
	}
	r, err := s.run(ctx, spec{
		binary: binary, path: path, args: args, command: strings.Join(args, " "),
		env: s.buildEnv(envRequest{extra: env}), emitCall: true,
	})
	if err != nil {
		return ExecResult{}, err
	}
	out := ExecResult{ExitCode: int32(r.ExitCode), Stdout: r.Stdout, Stderr: r.Stderr, Truncated: r.Truncated}
	if r.FullOutputPath != "" {
		p := r.FullOutputPath
		out.FullOutputPath = &p
	}
	return out, nil
}

// Run runs an allowed binary with argv args in the foreground, as a
// shell tool call's environment gives it but without the session identity
// row or a shell record: a done check's command. When ctx ends first the
// command's group is killed and Run returns what it printed with
// ctx.Err().
func (s *Session) Run(ctx context.Context, binary string, args []string) (Result, error) {
	path, err := s.Resolve(binary)
	if err != nil {
		return Result{}, err
	}
	if d := s.ro.CheckArgs(binary, args); d != nil {
		s.sink.Emit(d.Event())
		return Result{}, d
	}
	return s.run(ctx, spec{
		binary: binary, path: path, args: args, command: strings.Join(args, " "),
		env: s.buildEnv(envRequest{}),
	})
}

// CheckInput is the read-only check of a WASM or native tool's input
// before dispatch: a refusal is recorded (protected_path_denied) and
// returned; give the model d.Message().
func (s *Session) CheckInput(tool string, input []byte, schema *readonly.Schema) (*readonly.Denial, error) {
	d, err := s.ro.CheckInput(tool, input, schema)
	if d != nil {
		s.sink.Emit(d.Event())
	}
	return d, err
}

// NativeTool is a runtime: tool artifact with a native implementation.
type NativeTool struct {
	// Name is the tool's name, for records.
	Name string
	// Path is the installed executable's absolute path.
	Path string
	// Config is artifacts[].config as compact JSON; nil means the entry
	// declares none and MURMUR_ARTIFACT_CONFIG is absent.
	Config []byte
	// StateDir is the tool's durable store (MURMUR_STATE_DIR); "" for none.
	StateDir string
}

// RunNative runs one call of a native tool through the same path as a shell
// command: contained, the shell environment plus the tool's own
// MURMUR_ARTIFACT_CONFIG and MURMUR_STATE_DIR, the call's JSON input as its
// single argument, the same result format and backgrounding. The caller
// runs the read-only input check (readonly.Checker.CheckInput) first, as
// for every tool.
func (s *Session) RunNative(ctx context.Context, t NativeTool, input []byte) (Result, error) {
	if !filepath.IsAbs(t.Path) {
		return Result{}, fmt.Errorf("native tool %q: path %q is not absolute: %w", t.Name, t.Path, ErrPolicy)
	}
	return s.run(ctx, spec{
		binary: t.Name, path: t.Path, args: []string{string(input)}, command: string(input),
		env:      s.buildEnv(envRequest{native: &t}),
		demote:   true,
		emitCall: true,
	})
}
