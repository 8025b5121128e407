//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"github.com/murmur/mur/internal/diag"
)

// Probe finds nothing to enforce off Linux: every mechanism is reported as
// not enforced, so every policy runs advisory (W-SEC-001).
func Probe() Host {
	why := "no kernel enforcement on " + runtime.GOOS
	return Host{OS: runtime.GOOS, Controllers: map[string]string{}, Why: map[string]string{
		"filesystem": why, "seccomp": why, "network namespace": why, "cgroup": why, "mount namespace": why,
	}}
}

// Main has nothing to do off Linux: commands are not re-executed.
func Main() {}

// Session off Linux only watches the workdir size ceiling; commands run
// uncontained, as the report says.
type Session struct {
	policy  Policy
	report  Report
	ended   chan struct{}
	endErr  error
	endOnce sync.Once
	stop    chan struct{}
	mu      sync.Mutex
	closed  bool
}

// NewSession checks the floor (anything above advisory is refused with
// E-CAP-003) and starts the size watcher.
func NewSession(ctx context.Context, p Policy) (*Session, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	h := Probe()
	if err := CheckFloor(h, p); err != nil {
		return nil, err
	}
	s := &Session{policy: p, report: Explain(h, p), ended: make(chan struct{}), stop: make(chan struct{})}
	if p.WorkdirMaxBytes > 0 {
		go s.watch(10 * time.Second)
	}
	return s, nil
}

func (s *Session) watch(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		p := s.policy
		if n := treeBytes(p.Workdir, p.Tmp, p.Home); n > p.WorkdirMaxBytes {
			d := diag.New(diag.RunWorkdirSize, diag.Pos{}, "capabilities.resources.workdir_max_bytes",
				fmt.Sprintf("the work, temporary and home folders hold %d bytes, over the %d-byte ceiling; the session is ended", n, p.WorkdirMaxBytes))
			s.endOnce.Do(func() { s.endErr = &refusal{d: d, kind: ErrWorkdirSize}; close(s.ended) })
			return
		}
	}
}

// TmpMapped is false off Linux: /tmp is never remapped.
func (s *Session) TmpMapped() bool { return false }

// Report is the session's containment report: advisory, and why.
func (s *Session) Report() Report { return s.report }

// Warnings are the session's W-SEC diagnostics (W-SEC-001).
func (s *Session) Warnings() diag.List { return s.report.Warnings }

// Notes is empty off Linux: there is no egress proxy resolving names.
func (s *Session) Notes() []string { return nil }

// Denied is empty off Linux: there is no egress proxy.
func (s *Session) Denied() []string { return nil }

// Ended is closed when the workdir size ceiling was crossed.
func (s *Session) Ended() <-chan struct{} { return s.ended }

// Err is why the session ended, or nil.
func (s *Session) Err() error {
	select {
	case <-s.ended:
		return s.endErr
	default:
		return nil
	}
}

// Command is exec.CommandContext with Prepare applied.
func (s *Session) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	if err := s.Prepare(cmd); err != nil {
		cmd.Err = err
	}
	return cmd
}

// Prepare gives the command an empty environment when none was set and the
// workdir as its directory; nothing else is enforced here.
func (s *Session) Prepare(cmd *exec.Cmd) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	if cmd.Dir == "" {
		cmd.Dir = s.policy.Workdir
	}
	return nil
}

// Start starts a prepared command.
func (s *Session) Start(cmd *exec.Cmd) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return cmd.Start()
}

// LimitHit names the workdir ceiling when it ended the session; no other
// limit is enforced off Linux.
func (s *Session) LimitHit(err error, _ *os.ProcessState) string {
	if s.Err() != nil {
		return fmt.Sprintf("The session was ended: the work, temporary and home folders passed workdir_max_bytes (%d bytes).", s.policy.WorkdirMaxBytes)
	}
	return ""
}

// Close stops the watcher.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
	return nil
}
