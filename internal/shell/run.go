package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/murmur/mur/internal/event"
)

// OutputLimit is how much of each stream a result shows (and how much of a
// backgrounded command's output background-command returns).
const OutputLimit = 16 << 10

// Waits after a command's own process exits while something still holds its
// output: up to holdWait for the pipes to close, then the group is killed,
// then up to killWait more.
var (
	holdWait = time.Second
	killWait = 2 * time.Second
)

// Notes the model reads after the output when a holder had to be dealt with.
const (
	NoteGroupKilled = "Note: processes this command started were still holding its output after it exited and were killed."
	NoteLeftGroup   = "Note: a process this command started outside its process group (for example with setsid) still holds its output; it keeps running until the session ends, which kills it."
)

type spec struct {
	binary   string // the tool name: the bare binary, or a native tool's name
	path     string
	args     []string
	command  string
	env      []string
	demote   bool // may move to the background (shell tools, native tools)
	emitCall bool // write a shell record on a foreground finish
}

// Result is one call's outcome as the model reads it (Text).
type Result struct {
	// Binary is the program that ran, symlinks resolved.
	Binary   string
	ExitCode int
	// Status is ok, error (non-zero exit or a failed wait), signal, or
	// resource_limit (the container attributed the end to a limit).
	Status string
	Stdout string
	Stderr string
	// StdoutBytes and StderrBytes count everything each stream printed
	// (the on-shell hook's stdout-bytes and stderr-bytes).
	StdoutBytes int64
	StderrBytes int64
	// Truncated says a stream passed OutputLimit; FullOutputPath then holds
	// both streams in full.
	Truncated      bool
	FullOutputPath string
	// Note is the output-holder note, if step 2 or 3 was reached.
	Note string
	// Limit is the line naming the resource limit the command hit, from
	// the container; Status is then resource_limit.
	Limit    string
	Duration time.Duration
	// WorkID is set when the command moved to the background; the result
	// then says it is still running and nothing else is final.
	WorkID    string
	LogPath   string
	graceSecs *int
}

// Text renders the result the agent reads back.
func (r Result) Text() string {
	var b strings.Builder
	if r.WorkID != "" {
		fmt.Fprintf(&b, "Still running: the command moved to the background. Work id: %s\n", r.WorkID)
		if r.graceSecs != nil {
			b.WriteString("Use the background-command tool with this work id to see its output so far, wait for it to exit, or stop it.\n")
		}
		fmt.Fprintf(&b, "Its output is being written to %s.\n", r.LogPath)
		return b.String()
	}
	fmt.Fprintf(&b, "Exit code: %d\n", r.ExitCode)
	if r.Stdout != "" {
		b.WriteString("Stdout:\n")
		b.WriteString(r.Stdout)
		if !strings.HasSuffix(r.Stdout, "\n") {
			b.WriteByte('\n')
		}
	}
	if r.Stderr != "" {
		if r.Stdout != "" {
			b.WriteByte('\n')
		}
		b.WriteString("Stderr:\n")
		b.WriteString(r.Stderr)
		if !strings.HasSuffix(r.Stderr, "\n") {
			b.WriteByte('\n')
		}
	}
	if r.Truncated {
		fmt.Fprintf(&b, "Output truncated. Full output written to %s\n", r.FullOutputPath)
	}
	if r.Limit != "" {
		b.WriteString(r.Limit)
		b.WriteByte('\n')
	}
	if r.Note != "" {
		b.WriteString(r.Note)
		b.WriteByte('\n')
	}
	return b.String()
}

// capture keeps one stream of a foreground command: everything while it is
// within OutputLimit, then a spill file with everything plus the last
// OutputLimit bytes in memory.
type capture struct {
	buf   []byte
	n     int64
	spill *os.File
	err   error
}

func (c *capture) write(dir string, b []byte) {
	c.n += int64(len(b))
	if c.spill == nil && len(c.buf)+len(b) <= OutputLimit {
		c.buf = append(c.buf, b...)
		return
	}
	if c.spill == nil && c.err == nil {
		f, err := os.CreateTemp(dir, ".shell-*.part")
		if err == nil {
			_, err = f.Write(c.buf)
		}
		c.spill, c.err = f, err
	}
	if c.spill != nil && c.err == nil {
		_, c.err = c.spill.Write(b)
	}
	c.buf = lastN(append(c.buf, b...), OutputLimit)
}

// copyTo writes the whole stream.
func (c *capture) copyTo(w io.Writer) error {
	if c.spill == nil {
		_, err := w.Write(c.buf)
		return err
	}
	if c.err != nil {
		return c.err
	}
	if _, err := c.spill.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, c.spill)
	return err
}

func (c *capture) endsInNewline() bool {
	return len(c.buf) == 0 || c.buf[len(c.buf)-1] == '\n'
}

func (c *capture) discard() {
	if c.spill != nil {
		c.spill.Close()
		os.Remove(c.spill.Name())
		c.spill = nil
	}
}

func lastN(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append(b[:0:0], b[len(b)-n:]...)
}

// proc is one running command.
type proc struct {
	spec
	s        *Session
	cmd      *exec.Cmd
	pgid     int
	start    time.Time
	canon    string
	rOut     *os.File
	rErr     *os.File
	pipes    sync.WaitGroup
	pipesEnd chan struct{}
	exited   chan struct{}
	waitErr  error

	mu      sync.Mutex
	out     capture
	errs    capture
	workID  string
	log     *os.File // set at demotion
	logPath string
	tail    []byte // last OutputLimit bytes, after demotion
	logN    int64
	detach  time.Time

	// Set once the exit has been read, before done closes.
	result Result
	done   chan struct{}
	// delivered says the exit reached the agent (shell_completed written).
	delivered bool
	abandoned bool
}

// run starts a command and returns its result, or a background handle when
// it is demoted.
func (s *Session) run(ctx context.Context, sp spec) (Result, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return Result{}, ErrClosed
	}
	if err := os.MkdirAll(s.logs, 0o700); err != nil {
		return Result{}, fmt.Errorf("create logs directory: %w", err)
	}
	rOut, wOut, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("stdout pipe: %w", err)
	}
	rErr, wErr, err := os.Pipe()
	if err != nil {
		rOut.Close()
		wOut.Close()
		return Result{}, fmt.Errorf("stderr pipe: %w", err)
	}
	// The call's ctx never kills the command (a canceled call demotes it
	// instead); the command gets a context of its own so a container may
	// install a Cancel that kills the whole group.
	cmd := exec.CommandContext(context.Background(), sp.path, sp.args...)
	cmd.Env = sp.env
	cmd.Dir = s.p.Workdir
	cmd.Stdin = nil // exec opens /dev/null
	cmd.Stdout, cmd.Stderr = wOut, wErr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	closeAll := func() { rOut.Close(); wOut.Close(); rErr.Close(); wErr.Close() }
	if err := s.c.Prepare(cmd); err != nil {
		closeAll()
		return Result{}, fmt.Errorf("contain %q: %w", sp.binary, err)
	}
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid && !cmd.SysProcAttr.Setsid {
		closeAll()
		return Result{}, fmt.Errorf("contain %q: the container cleared Setpgid: %w", sp.binary, ErrPolicy)
	}
	p := &proc{
		spec: sp, s: s, cmd: cmd, rOut: rOut, rErr: rErr,
		pipesEnd: make(chan struct{}), exited: make(chan struct{}), done: make(chan struct{}),
		canon: canonical(sp.path),
	}
	p.start = time.Now()
	start := cmd.Start
	if st, ok := s.c.(Starter); ok {
		start = func() error { return st.Start(cmd) }
	}
	if err := start(); err != nil {
		closeAll()
		return Result{}, fmt.Errorf("start %q: %w", sp.binary, err)
	}
	wOut.Close()
	wErr.Close()
	p.pgid = cmd.Process.Pid
	s.mu.Lock()
	s.groups[p.pgid] = true
	ended := s.closed
	s.mu.Unlock()
	if ended {
		// The session ended while this command was starting: it gets the
		// same kill as everything else the session started.
		p.kill()
	}

	p.pipes.Add(2)
	go p.read(rOut, &p.out)
	go p.read(rErr, &p.errs)
	go func() { p.pipes.Wait(); close(p.pipesEnd) }()
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()

	var graceC <-chan time.Time
	var graceEnd time.Time
	if sp.demote && s.p.GraceSecs != nil {
		g := time.Duration(*s.p.GraceSecs) * time.Second
		graceEnd = p.start.Add(g)
		t := time.NewTimer(g)
		defer t.Stop()
		graceC = t.C
	}
	select {
	case <-p.exited:
	case <-graceC:
		select {
		case <-p.exited: // already exited at the check
		default:
			return p.demote(), nil
		}
	case <-ctx.Done():
		if sp.demote {
			return p.demote(), nil
		}
		p.kill()
		<-p.exited
		p.finish(holdWait) // the group is dead: its pipes close at once
		return p.result, fmt.Errorf("%q: %w", sp.binary, ctx.Err())
	}
	wait := holdWait
	if !graceEnd.IsZero() {
		wait = min(wait, time.Until(graceEnd))
	}
	p.finish(max(wait, 0))
	return p.result, nil
}

// read copies one pipe into its capture or, after demotion, the log.
func (p *proc) read(f *os.File, c *capture) {
	defer p.pipes.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if p.log != nil {
				p.appendLog(buf[:n])
			} else {
				c.write(p.s.logs, buf[:n])
			}
			p.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// appendLog writes output read after demotion; p.mu is held.
func (p *proc) appendLog(b []byte) {
	if n, err := p.log.Write(b); err == nil {
		p.logN += int64(n)
	}
	p.tail = lastN(append(p.tail, b...), OutputLimit)
}

func (p *proc) kill() {
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
}

// finish runs once the command's own process has exited: it deals with
// processes still holding the output (wait, group kill, give up), then
// builds the result, writes the log's exit line for a backgrounded command,
// and closes done.
func (p *proc) finish(wait time.Duration) {
	note := ""
	t := time.NewTimer(wait)
	select {
	case <-p.pipesEnd:
		t.Stop()
	case <-t.C:
		p.kill()
		note = NoteGroupKilled
		k := time.NewTimer(killWait)
		select {
		case <-p.pipesEnd:
			k.Stop()
		case <-k.C:
			note = NoteLeftGroup
			// The holder keeps the pipe's write end; closing the read end
			// unblocks the readers so what was read is returned.
			p.rOut.Close()
			p.rErr.Close()
			<-p.pipesEnd
		}
	}
	p.rOut.Close()
	p.rErr.Close()
	if syscall.Kill(-p.pgid, 0) != nil {
		// The group is empty: forget it so a reused number is never killed.
		p.s.mu.Lock()
		delete(p.s.groups, p.pgid)
		p.s.mu.Unlock()
	}

	code, status := exitStatus(p.cmd.ProcessState, p.waitErr)
	limit := ""
	if le, ok := p.s.c.(LimitExplainer); ok {
		if limit = le.LimitHit(p.waitErr, p.cmd.ProcessState); limit != "" {
			status = "resource_limit"
		}
	}
	r := Result{
		Binary: p.canon, ExitCode: code, Status: status, Note: note, Limit: limit,
		Duration: time.Since(p.start),
	}
	p.mu.Lock()
	if p.log != nil {
		if len(p.tail) > 0 && p.tail[len(p.tail)-1] != '\n' && !p.abandoned {
			p.log.WriteString("\n")
		}
		if !p.abandoned {
			fmt.Fprintf(p.log, "\nExit code: %d\n", code)
		}
		p.log.Close()
		r.Stdout = string(p.tail)
		r.LogPath = p.logPath
	} else {
		r.Stdout, r.Stderr = string(p.out.buf), string(p.errs.buf)
		r.StdoutBytes, r.StderrBytes = p.out.n, p.errs.n
		if p.out.spill != nil || p.errs.spill != nil {
			r.Truncated = true
			path, err := p.writeFullLog()
			if err != nil {
				r.Note = strings.TrimSpace(r.Note + "\nNote: the full output could not be written: " + err.Error())
			}
			r.FullOutputPath = path
		}
		p.out.discard()
		p.errs.discard()
	}
	p.result = r
	p.mu.Unlock()
	close(p.done)

	if p.emitCall && p.workID == "" {
		f := map[string]any{
			"binary": p.canon, "command": p.command, "exit_code": code, "status": status,
			"duration_ms": r.Duration.Milliseconds(), "stdout_bytes": p.out.n, "stderr_bytes": p.errs.n,
			"truncated": r.Truncated,
		}
		if r.FullOutputPath != "" {
			f["full_output_path"] = r.FullOutputPath
		}
		if note != "" {
			f["note"] = note
		}
		if limit != "" {
			f["resource_limit"] = limit
		}
		p.s.sink.Emit(event.Event{Type: "shell", Fields: f})
	}
}

// writeFullLog writes logs/shell-<ms>.log once, with Stdout: and Stderr:
// sections; p.mu is held.
func (p *proc) writeFullLog() (string, error) {
	ms := p.start.UnixMilli()
	var f *os.File
	var err error
	var path string
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("shell-%d.log", ms)
		if i > 0 {
			name = fmt.Sprintf("shell-%d-%d.log", ms, i)
		}
		path = filepath.Join(p.s.logs, name)
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("create full output log: %w", err)
	}
	defer f.Close()
	var b bytes.Buffer
	b.WriteString("Stdout:\n")
	if _, err := f.Write(b.Bytes()); err != nil {
		return path, err
	}
	if err := p.out.copyTo(f); err != nil {
		return path, err
	}
	sep := "\nStderr:\n"
	if !p.out.endsInNewline() {
		sep = "\n" + sep
	}
	if _, err := f.WriteString(sep); err != nil {
		return path, err
	}
	if err := p.errs.copyTo(f); err != nil {
		return path, err
	}
	return path, f.Close()
}

// exitStatus turns a wait into the exit code the model reads and the
// status shell_completed records. A signal death reads as 128+signal, the
// way shells report it.
func exitStatus(st *os.ProcessState, waitErr error) (int, string) {
	if st == nil {
		return -1, "error"
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), "signal"
	}
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		return st.ExitCode(), "error"
	}
	if st.ExitCode() == 0 {
		return 0, "ok"
	}
	return st.ExitCode(), "error"
}
