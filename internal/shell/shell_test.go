package shell

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/shell/readonly"
)

// bare is the test container: it prepares nothing. Production passes a
// *sandbox.Session; the sandbox's own suite runs these paths contained.
type bare struct{ prepared int }

func (b *bare) Prepare(*exec.Cmd) error { b.prepared++; return nil }

// recorder is a collecting event.Sink.
type recorder struct {
	mu  sync.Mutex
	evs []event.Event
}

func (r *recorder) Emit(e event.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *recorder) of(typ string) []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event.Event
	for _, e := range r.evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

type fixture struct {
	s    *Session
	rec  *recorder
	pol  Policy
	errw *strings.Builder
}

func grace(n int) *int { return &n }

func newFixture(t testing.TB, mod func(*Policy)) *fixture {
	t.Helper()
	root := t.TempDir()
	p := Policy{
		Allow:      []string{"bash", "sh", "echo", "cat", "env", "sleep", "printenv", "touch"},
		PATH:       os.Getenv("PATH"),
		HostEnv:    append(os.Environ(), "SECRET_TOKEN_X=1", "MY_API_KEY=k"),
		Workdir:    filepath.Join(root, "work"),
		Home:       filepath.Join(root, "rec", "home"),
		Tmp:        filepath.Join(root, "rec", "tmp"),
		RuntimeDir: filepath.Join(root, "run"),
		RecordsDir: filepath.Join(root, "rec"),
		SessionID:  "ses_test",
	}
	for _, d := range []string{p.Workdir, p.Home, p.Tmp, p.RuntimeDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if mod != nil {
		mod(&p)
	}
	var errw strings.Builder
	p.Stderr = &syncWriter{b: &errw}
	rec := &recorder{}
	s, err := New(p, &bare{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return &fixture{s: s, rec: rec, pol: p, errw: &errw}
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (f *fixture) call(t *testing.T, binary, command string) Result {
	t.Helper()
	r, err := f.s.Call(context.Background(), binary, command)
	if err != nil {
		t.Fatalf("Call(%s, %q): %v", binary, command, err)
	}
	return r
}

func TestResultFormat(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	tests := []struct {
		binary, command, want string
	}{
		{"bash", `printf 'out\n'; printf 'err\n' >&2`, "Exit code: 0\nStdout:\nout\n\nStderr:\nerr\n"},
		{"bash", `printf 'out\n'`, "Exit code: 0\nStdout:\nout\n"},
		{"bash", `printf 'err' >&2; exit 3`, "Exit code: 3\nStderr:\nerr\n"},
		{"bash", `true`, "Exit code: 0\n"},
		{"bash", `kill -9 $$`, "Exit code: 137\n"},
		// A non-interpreter takes the arguments alone, split with quotes.
		{"echo", `a 'b  c' "d"`, "Exit code: 0\nStdout:\na b  c d\n"},
		{"echo", `> x | y`, "Exit code: 0\nStdout:\n> x | y\n"},
		// stdin is /dev/null: cat ends at once.
		{"cat", ``, "Exit code: 0\n"},
	}
	for _, tt := range tests {
		r := f.call(t, tt.binary, tt.command)
		if got := r.Text(); got != tt.want {
			t.Errorf("%s %q:\n got %q\nwant %q", tt.binary, tt.command, got, tt.want)
		}
	}
	if got := f.rec.of("shell"); len(got) != len(tests) {
		t.Fatalf("shell records = %d, want %d", len(got), len(tests))
	}
	last := f.rec.of("shell")[4].Fields
	if last["status"] != "signal" || last["exit_code"] != 137 {
		t.Errorf("signal record = %v", last)
	}
	if _, err := os.Stat(filepath.Join(f.pol.Workdir, "x")); err == nil {
		t.Error("echo's arguments went through a shell")
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(p *Policy) { p.Allow = append(p.Allow, "no-such-binary-xyz") })
	ctx := context.Background()
	if _, err := f.s.Call(ctx, "rm", "-rf x"); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("rm: %v", err)
	}
	if _, err := f.s.Call(ctx, "no-such-binary-xyz", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	if _, err := f.s.Call(ctx, "echo", "'open"); err == nil {
		t.Error("unterminated quote accepted")
	}
	if _, err := New(f.pol, nil, nil); !errors.Is(err, ErrNoContainer) {
		t.Errorf("nil container: %v", err)
	}
	bad := f.pol
	bad.Allow = []string{"/bin/sh"}
	if _, err := New(bad, &bare{}, nil); !errors.Is(err, ErrPolicy) {
		t.Errorf("path in allow: %v", err)
	}
	bad = f.pol
	bad.Workdir = "rel"
	if _, err := New(bad, &bare{}, nil); !errors.Is(err, ErrPolicy) {
		t.Errorf("relative workdir: %v", err)
	}
	// A relative PATH entry is never searched.
	rel := f.pol
	rel.PATH = "."
	s, err := New(rel, &bare{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve("bash"); !errors.Is(err, ErrNotFound) {
		t.Errorf("relative PATH: %v", err)
	}
}

func TestReadOnlyRefusalRunsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(p *Policy) { p.ReadOnly = []string{"tests"} })
	if err := os.MkdirAll(filepath.Join(f.pol.Workdir, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ binary, command string }{
		{"bash", "echo x > tests/a"},
		{"touch", "tests/a"},
	} {
		_, err := f.s.Call(context.Background(), c.binary, c.command)
		var d *readonly.Denial
		if !errors.As(err, &d) || d.Path != "tests/a" || !strings.Contains(d.Message(), "Nothing ran") {
			t.Fatalf("%s %q: err = %v", c.binary, c.command, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.pol.Workdir, "tests", "a")); err == nil {
		t.Error("refused call ran")
	}
	if n := len(f.rec.of("protected_path_denied")); n != 2 {
		t.Errorf("protected_path_denied records = %d", n)
	}
	if n := len(f.rec.of("shell")); n != 0 {
		t.Errorf("a refused call wrote %d shell records", n)
	}
	if _, err := f.s.Execute(context.Background(), "bash", []string{"-c", "echo > tests/b"}, nil); !errors.Is(err, readonly.ErrDenied) {
		t.Errorf("execute: %v", err)
	}
	// Check refuses the same way without a record or a run.
	if d, err := f.s.Check("bash", "rm -r tests"); err != nil || d == nil || d.Path != "tests" {
		t.Errorf("Check = %v, %v", d, err)
	}
	if d, err := f.s.Check("bash", "rm -r other"); err != nil || d != nil {
		t.Errorf("Check of an allowed line = %v, %v", d, err)
	}
	if _, err := f.s.Check("rm", "tests"); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("Check of a disallowed binary: %v", err)
	}
	if n := len(f.rec.of("protected_path_denied")); n != 3 {
		t.Errorf("protected_path_denied records after Check = %d, want 3", n)
	}
	// Writing elsewhere is fine.
	if r := f.call(t, "bash", "echo x > ok.txt"); r.ExitCode != 0 {
		t.Error(r.Text())
	}
}

func TestProcessShape(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(p *Policy) {
		p.Identity = [][2]string{{"MURMUR_CAPSULE_NAME", "cap"}}
		p.BaselineEnv = []string{"SECRET_TOKEN_X"}
	})
	// Its own process-group leader, stdin /dev/null, cwd the workdir.
	r := f.call(t, "bash", `set -- $(cut -d' ' -f5 /proc/$$/stat); echo "pgid=$1 pid=$$"; readlink /proc/$$/fd/0; pwd`)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	var pgid, pid int
	if len(lines) != 3 {
		t.Fatalf("output %q", r.Stdout)
	}
	if _, err := fmtSscanf(lines[0], &pgid, &pid); err != nil || pgid != pid {
		t.Errorf("not a group leader: %q", lines[0])
	}
	if lines[1] != "/dev/null" {
		t.Errorf("stdin = %q", lines[1])
	}
	if lines[2] != f.pol.Workdir {
		t.Errorf("cwd = %q", lines[2])
	}
	env := parseEnv(strings.Split(strings.TrimSpace(f.call(t, "env", "").Stdout), "\n"))
	for k, want := range map[string]string{
		"HOME": f.pol.Home, "USERPROFILE": f.pol.Home, "TMPDIR": f.pol.Tmp, "TMP": f.pol.Tmp, "TEMP": f.pol.Tmp,
		"MURMUR_RUNTIME_DIR": f.pol.RuntimeDir, "MURMUR_RECORDS_DIR": f.pol.RecordsDir, "MURMUR_CAPSULE_NAME": "cap",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	for _, k := range []string{"SECRET_TOKEN_X", "MY_API_KEY"} {
		if _, ok := env[k]; ok {
			t.Errorf("credential %s leaked", k)
		}
	}
}

func fmtSscanf(s string, pgid, pid *int) (int, error) {
	m := regexp.MustCompile(`^pgid=(\d+) pid=(\d+)$`).FindStringSubmatch(s)
	if m == nil {
		return 0, errors.New("no match")
	}
	*pgid, _ = strconv.Atoi(m[1])
	*pid, _ = strconv.Atoi(m[2])
	return 2, nil
}

func TestTruncation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	r := f.call(t, "bash", `head -c 20000 /dev/zero | tr '\0' a; printf 'tail-marker'; echo small >&2`)
	if !r.Truncated || len(r.Stdout) != OutputLimit || !strings.HasSuffix(r.Stdout, "tail-marker") {
		t.Fatalf("truncated=%v len=%d", r.Truncated, len(r.Stdout))
	}
	if r.StdoutBytes != 20011 || r.StderrBytes != 6 {
		t.Errorf("bytes %d/%d", r.StdoutBytes, r.StderrBytes)
	}
	if r.Stderr != "small\n" {
		t.Errorf("stderr %q", r.Stderr)
	}
	if !regexp.MustCompile(`/logs/shell-\d+\.log$`).MatchString(r.FullOutputPath) {
		t.Errorf("log path %q", r.FullOutputPath)
	}
	if !strings.Contains(r.Text(), "Output truncated. Full output written to "+r.FullOutputPath) {
		t.Errorf("text lacks the truncation line: %q", r.Text()[len(r.Text())-200:])
	}
	full, err := os.ReadFile(r.FullOutputPath)
	if err != nil {
		t.Fatal(err)
	}
	want := "Stdout:\n" + strings.Repeat("a", 20000) + "tail-marker\n\nStderr:\nsmall\n"
	if string(full) != want {
		t.Errorf("full log is %d bytes, want %d", len(full), len(want))
	}
	parts, _ := filepath.Glob(filepath.Join(f.pol.RecordsDir, "logs", ".shell-*"))
	if len(parts) != 0 {
		t.Errorf("spill files left: %v", parts)
	}
	// Exactly at the limit is not truncated.
	r = f.call(t, "bash", `head -c 16384 /dev/zero`)
	if r.Truncated || len(r.Stdout) != OutputLimit {
		t.Errorf("at the limit: truncated=%v len=%d", r.Truncated, len(r.Stdout))
	}
}

func TestOutputHolders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	pidfile := filepath.Join(f.pol.Tmp, "server.pid")

	// A redirected background server holds neither pipe: the call returns
	// without the holder wait (no note; that wait would have killed the
	// server) and the server keeps running for later calls. How fast is
	// BenchmarkCallRedirectedServer's.
	r := f.call(t, "bash", `sleep 60 >/dev/null 2>&1 & echo $! > `+pidfile+`; echo started`)
	if r.Note != "" || r.Stdout != "started\n" {
		t.Fatalf("redirected server: %q", r.Text())
	}
	server := readPid(t, pidfile)
	if syscall.Kill(server, 0) != nil {
		t.Fatal("server is not running after the call")
	}

	// An unredirected child holds the output: a 1 s wait, then the group
	// is killed, and what the dying processes wrote is returned.
	start := time.Now()
	r = f.call(t, "bash", `(echo early; sleep 30; echo never) & (sleep 0.1; echo quick) & echo main`)
	d := time.Since(start)
	if d < 900*time.Millisecond {
		t.Errorf("holder wait took %v, want the 1 s window", d)
	}
	if r.Note != NoteGroupKilled || !strings.Contains(r.Text(), NoteGroupKilled) {
		t.Errorf("note = %q", r.Note)
	}
	for _, w := range []string{"early", "quick", "main"} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("stdout %q lacks %q", r.Stdout, w)
		}
	}
	if strings.Contains(r.Stdout, "never") {
		t.Error("killed holder kept running")
	}

	// Output a background process prints and exits within the second is
	// part of the result, with no note.
	r = f.call(t, "bash", `(sleep 0.1; echo late) & echo first`)
	if r.Note != "" || r.Stdout != "first\nlate\n" {
		t.Errorf("late output: %q note %q", r.Stdout, r.Note)
	}

	// The session's end kills the redirected server.
	if _, err := f.s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitGone(t, server)
	if _, err := f.s.Call(context.Background(), "bash", "true"); !errors.Is(err, ErrClosed) {
		t.Errorf("call after close: %v", err)
	}
}

func TestHolderOutsideGroup(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	t.Parallel()
	f := newFixture(t, func(p *Policy) { p.Allow = append(p.Allow, "setsid") })
	pidfile := filepath.Join(f.pol.Tmp, "escapee.pid")
	start := time.Now()
	r := f.call(t, "bash", `setsid bash -c 'echo $$ > `+pidfile+`; echo from-escapee; exec sleep 30' & sleep 0.2; echo main`)
	d := time.Since(start)
	escapee := readPid(t, pidfile)
	t.Cleanup(func() { syscall.Kill(escapee, syscall.SIGKILL) })
	if d < 2900*time.Millisecond {
		t.Errorf("gave up after %v, want the 3 s window", d)
	}
	if r.Note != NoteLeftGroup {
		t.Errorf("note = %q", r.Note)
	}
	if !strings.Contains(r.Stdout, "main") || !strings.Contains(r.Stdout, "from-escapee") {
		t.Errorf("stdout = %q", r.Stdout)
	}
}

// settle bounds the waits below for something that must happen: it is a
// deadline for a hung test, far past any load, never a timing goal.
const settle = 2 * time.Minute

func readPid(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(settle); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return n
			}
		}
	}
	t.Fatalf("no pid in %s after %v", path, settle)
	return 0
}

// waitGone waits for a process to exit (a zombie counts: its parent may
// not be us), on its pidfd rather than by polling /proc against a clock.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(settle.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatalf("poll pidfd %d: %v", pid, err)
		}
		if n == 0 {
			t.Errorf("process %d still running after %v", pid, settle)
		}
		return
	}
}
