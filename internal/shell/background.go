package shell

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/murmur/mur/internal/event"
)

// BackgroundTool is the runtime-provided tool offered when
// lifecycle.shell_grace_secs is set.
const BackgroundTool = "background-command"

// Ways an exit reaches the agent, for shell_completed's delivered_via.
const (
	ViaBackgroundCommand = "background-command"
	ViaCompletionTask    = "completion_task"
)

// newWorkID returns wrk_ followed by a UUIDv7 in hex, so ids sort by the
// time they were handed out.
func newWorkID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	ms := uint64(time.Now().UnixMilli())
	binary.BigEndian.PutUint16(u[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(u[2:6], uint32(ms))
	u[6] = u[6]&0x0f | 0x70
	u[8] = u[8]&0x3f | 0x80
	return "wrk_" + hex.EncodeToString(u[:])
}

// demote moves a running command to the background: its log starts with
// the command and what was read so far, shell_detached is emitted, and the
// exit is awaited on its own goroutine.
func (p *proc) demote() Result {
	s := p.s
	p.mu.Lock()
	p.workID = newWorkID()
	p.detach = time.Now()
	p.logPath = filepath.Join(s.logs, p.workID+".log")
	f, err := os.OpenFile(p.logPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		// Output keeps flowing into memory; the exit still reaches the
		// agent, only the log is missing.
		fmt.Fprintf(s.stderr(), "[capsule-runtime] warning: cannot create %s: %v\n", p.logPath, err)
	} else {
		fmt.Fprintf(f, "Command: %s %s\n\n", p.binary, p.command)
		_ = p.out.copyTo(f)
		_ = p.errs.copyTo(f)
		p.log = f
	}
	p.tail = lastN(append(append([]byte(nil), p.out.buf...), p.errs.buf...), OutputLimit)
	p.out.discard()
	p.errs.discard()
	p.mu.Unlock()

	s.mu.Lock()
	s.work[p.workID] = p
	s.order = append(s.order, p.workID)
	s.mu.Unlock()

	s.sink.Emit(event.Event{Type: "shell_detached", Fields: map[string]any{
		"work_id": p.workID, "binary": p.canon, "command": p.command,
		"after_ms": p.detach.Sub(p.start).Milliseconds(), "log": p.logPath,
	}})
	go func() {
		<-p.exited
		p.finish(holdWait)
		p.mu.Lock()
		abandoned := p.abandoned
		p.mu.Unlock()
		// After the session's end no task can carry the exit.
		if cb := s.p.OnBackgroundExit; cb != nil && !abandoned {
			cb(p.completion())
		}
	}()
	return Result{Binary: p.canon, WorkID: p.workID, LogPath: p.logPath, graceSecs: s.p.GraceSecs}
}

// Completion is a backgrounded command's exit.
type Completion struct {
	WorkID   string
	Binary   string
	Command  string
	ExitCode int
	Status   string
	LogPath  string
}

func (p *proc) completion() Completion {
	return Completion{WorkID: p.workID, Binary: p.canon, Command: p.command,
		ExitCode: p.result.ExitCode, Status: p.result.Status, LogPath: p.logPath}
}

func (s *Session) stderr() io.Writer {
	if s.p.Stderr == nil {
		return io.Discard
	}
	return s.p.Stderr
}

// Deliver records that a backgrounded command's exit reached the agent by
// via (ViaBackgroundCommand or ViaCompletionTask): shell_completed is
// written once. It reports false when the exit was already delivered or
// the command has not exited, so a completion task is not enqueued twice.
func (s *Session) Deliver(workID, via string) (bool, error) {
	s.mu.Lock()
	p, ok := s.work[workID]
	s.mu.Unlock()
	if !ok {
		return false, fmt.Errorf("%q: %w", workID, ErrUnknownWork)
	}
	select {
	case <-p.done:
	default:
		return false, nil
	}
	p.mu.Lock()
	if p.delivered || p.abandoned {
		p.mu.Unlock()
		return false, nil
	}
	p.delivered = true
	p.mu.Unlock()
	r := p.result
	f := map[string]any{
		"work_id": workID, "binary": p.canon, "command": p.command,
		"exit_code": r.ExitCode, "status": r.Status, "delivered_via": via,
		"duration_ms": r.Duration.Milliseconds(), "log": p.logPath,
	}
	if r.Limit != "" {
		f["resource_limit"] = r.Limit
	}
	s.sink.Emit(event.Event{Type: "shell_completed", Fields: f})
	return true, nil
}

// Running lists the work ids of backgrounded commands still running, for a
// task_end's running_commands.
func (s *Session) Running() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range s.order {
		select {
		case <-s.work[id].done:
		default:
			out = append(out, id)
		}
	}
	return out
}

// BackgroundRequest is the background-command tool's input.
type BackgroundRequest struct {
	WorkID string `json:"work_id"`
	// Action is status (the default), wait or stop.
	Action string `json:"action,omitempty"`
	// TimeoutSecs bounds a wait; 0 waits until the command exits or the
	// call is canceled.
	TimeoutSecs int `json:"timeout_secs,omitempty"`
}

// BackgroundSchema is the background-command tool's input_schema.
const BackgroundSchema = `{"type":"object","properties":{` +
	`"work_id":{"type":"string","description":"The wrk_ id a shell call returned when it moved to the background."},` +
	`"action":{"type":"string","enum":["status","wait","stop"],"description":"status (default): state and output so far; wait: block until it exits; stop: kill it and everything it started."},` +
	`"timeout_secs":{"type":"integer","minimum":0,"description":"For wait: give up after this many seconds and report the state then."}},` +
	`"required":["work_id"]}`

// ErrBadRequest is the kind of a malformed background-command request.
var ErrBadRequest = errors.New("invalid background-command request")

// Background runs the background-command tool and returns what the model
// reads: the state, the output so far (its last 16 KiB) and, once the
// command has exited, its exit code and status. Returning an exit delivers
// it (shell_completed with delivered_via background-command).
func (s *Session) Background(ctx context.Context, req BackgroundRequest) (string, error) {
	if s.p.GraceSecs == nil {
		return "", fmt.Errorf("%s is offered only when lifecycle.shell_grace_secs is set: %w", BackgroundTool, ErrBadRequest)
	}
	s.mu.Lock()
	p, ok := s.work[req.WorkID]
	s.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("%q: %w", req.WorkID, ErrUnknownWork)
	}
	switch req.Action {
	case "", "status":
	case "wait":
		var timeout <-chan time.Time
		if req.TimeoutSecs > 0 {
			t := time.NewTimer(time.Duration(req.TimeoutSecs) * time.Second)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-p.done:
		case <-timeout:
		case <-ctx.Done():
		}
		// A task that ended while its model waited reads nothing: its
		// exit stays undelivered for the completion task (select picks
		// at random when both are ready).
		if err := ctx.Err(); err != nil {
			return "", err
		}
	case "stop":
		select {
		case <-p.done:
		default:
			_ = syscall.Kill(-p.pgid, syscall.SIGTERM)
			t := time.NewTimer(killWait)
			select {
			case <-p.done:
			case <-t.C:
				p.kill()
			}
			t.Stop()
			select {
			case <-p.done:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
	default:
		return "", fmt.Errorf("action %q is not status, wait or stop: %w", req.Action, ErrBadRequest)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Work id: %s\nCommand: %s %s\n", p.workID, p.binary, p.command)
	select {
	case <-p.done:
		r := p.result
		fmt.Fprintf(&b, "State: exited after %d ms\nExit code: %d\nStatus: %s\n", r.Duration.Milliseconds(), r.ExitCode, r.Status)
		writeOutput(&b, r.Stdout)
		if r.Limit != "" {
			b.WriteString(r.Limit + "\n")
		}
		if r.Note != "" {
			b.WriteString(r.Note + "\n")
		}
		if _, err := s.Deliver(p.workID, ViaBackgroundCommand); err != nil {
			return "", err
		}
	default:
		p.mu.Lock()
		tail := string(p.tail)
		p.mu.Unlock()
		fmt.Fprintf(&b, "State: running for %d ms\n", time.Since(p.start).Milliseconds())
		writeOutput(&b, tail)
	}
	fmt.Fprintf(&b, "Full log: %s\n", p.logPath)
	return b.String(), nil
}

func writeOutput(b *strings.Builder, out string) {
	if out == "" {
		b.WriteString("Output: none yet\n")
		return
	}
	fmt.Fprintf(b, "Output (last %d KiB at most):\n%s", OutputLimit>>10, out)
	if !strings.HasSuffix(out, "\n") {
		b.WriteByte('\n')
	}
}
