package progress

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/murmur/mur/internal/event"
)

// terminal is a real pseudo-terminal: the view writes to its tty end and
// the test reads what a person would see from the other.
type terminal struct {
	tty *os.File
	mu  sync.Mutex
	out bytes.Buffer
	got chan struct{}
}

func openTerminal(t *testing.T) *terminal {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	term := &terminal{tty: tty, got: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			select {
			case term.got <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { tty.Close(); ptmx.Close(); <-done })
	return term
}

func (term *terminal) text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

// waitFor waits until the terminal shows want (a generous bound: the
// machine may be loaded; no timing is asserted).
func (term *terminal) waitFor(t *testing.T, want string) {
	t.Helper()
	limit := time.After(20 * time.Second)
	for !strings.Contains(term.text(), want) {
		select {
		case <-term.got:
		case <-limit:
			t.Fatalf("the terminal never showed %q; it shows:\n%q", want, term.text())
		}
	}
}

func ev(typ string, kv ...any) event.Event {
	f := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		f[kv[i].(string)] = kv[i+1]
	}
	return event.Event{Type: typ, Fields: f, Live: typ == event.TextDelta || typ == event.TextEnd || typ == event.ToolStart}
}

// A run on a terminal: the waits are drawn with their elapsed seconds, one
// line per tool call with its arguments, duration and outcome, a failed
// call marked with its status and error, a failed model call and its
// retry; the model's text goes to stdout alone.
func TestTerminalShowsCallsAndWaits(t *testing.T) {
	term := openTerminal(t)
	if !Terminal(term.tty) {
		t.Fatal("a pty's tty end is not seen as a terminal")
	}
	var stdout bytes.Buffer
	v := New(&stdout, term.tty, Normal, true)
	start := time.Now()
	var clock sync.Mutex
	now := start
	v.now = func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }

	v.Emit(ev("task_start", "task_id", "tsk_1", "origin", "cli"))
	advance(3 * time.Second)
	term.waitFor(t, "waiting for the model 3s")

	v.Emit(ev("inference_retry", "attempt", int64(1), "error", "HTTP 503: overloaded", "wait_ms", int64(1500)))
	term.waitFor(t, "✗ model call failed (attempt 1): HTTP 503: overloaded; retrying in 1.5s")
	term.waitFor(t, "waiting to retry the model")

	v.Emit(ev(event.ToolStart, "tool", "file-go", "call_id", "c1", "input", `{"op": "write", "path": "notes/hello.md"}`))
	term.waitFor(t, `running file-go {"op":"write","path":"notes/hello.md"}`)
	v.Emit(ev("tool_call", "tool", "file-go", "call_id", "c1", "status", "passed", "duration_ms", int64(12)))
	term.waitFor(t, `✓ file-go {"op":"write","path":"notes/hello.md"} 12ms`)

	v.Emit(ev(event.ToolStart, "tool", "fiel-go", "call_id", "c2", "input", `{}`))
	v.Emit(ev("tool_call", "tool", "fiel-go", "call_id", "c2", "status", "error", "error", "unknown tool", "duration_ms", int64(0)))
	term.waitFor(t, "✗ fiel-go 0s error: unknown tool")

	v.Emit(ev(event.TextDelta, "task_id", "tsk_1", "text", "Done."))
	v.Emit(ev(event.TextEnd))
	v.Emit(ev("task_end", "task_id", "tsk_1", "exit_status", "ok"))
	v.Close()
	if got := stdout.String(); got != "Done.\n" {
		t.Fatalf("stdout = %q, want the model's text alone", got)
	}
	// The status line mur prints next starts on a clean line: the wait
	// was erased and the cursor shown again.
	_, _ = v.Stderr().Write([]byte("mur: ses_x status: ok\n"))
	term.waitFor(t, "mur: ses_x status: ok")
	shown := term.text()
	if i := strings.LastIndex(shown, "\x1b[?25h"); i < 0 || i > strings.Index(shown, "mur: ses_x status") {
		t.Fatalf("the cursor was not shown again before the status line: %q", shown)
	}
}

// Off a terminal the default view says nothing on stderr and draws no
// spinner; -v prints the lines (and a line per model call) without one;
// -q on a terminal shows the text only.
func TestLevels(t *testing.T) {
	run := func(v *View) {
		v.Emit(ev("task_start", "task_id", "tsk_1", "origin", "cli"))
		v.Emit(ev(event.ToolStart, "tool", "file-go", "call_id", "c1", "input", `{"path":"a"}`))
		v.Emit(ev("tool_call", "tool", "file-go", "call_id", "c1", "status", "failed", "duration_ms", int64(1500)))
		v.Emit(ev("inference", "model", "gpt-4o-mini", "turn", int64(1), "input_tokens", int64(40), "output_tokens", int64(9), "duration_ms", int64(80), "stop_reason", "end_turn"))
		v.Emit(ev(event.TextDelta, "task_id", "tsk_1", "text", "Answer"))
		v.Emit(ev("task_end", "task_id", "tsk_1", "exit_status", "ok", "turns", int64(1)))
		v.Close()
	}
	t.Run("default off a terminal", func(t *testing.T) {
		var out, errb bytes.Buffer
		run(New(&out, &errb, Normal, Terminal(&errb)))
		if errb.Len() != 0 || out.String() != "Answer\n" {
			t.Fatalf("stderr %q stdout %q", errb.String(), out.String())
		}
	})
	t.Run("verbose off a terminal", func(t *testing.T) {
		var out, errb bytes.Buffer
		run(New(&out, &errb, Verbose, false))
		want := "  ✗ file-go {\"path\":\"a\"} 1.5s failed\n" +
			"  · model gpt-4o-mini turn 1: 40 tokens in, 9 out, 80ms, end_turn\n" +
			"  · task tsk_1 ended ok after 1 turns\n"
		if errb.String() != want {
			t.Fatalf("stderr\n%q\nwant\n%q", errb.String(), want)
		}
	})
	t.Run("quiet on a terminal", func(t *testing.T) {
		term := openTerminal(t)
		var out bytes.Buffer
		v := New(&out, term.tty, Quiet, true)
		run(v)
		_, _ = v.Stderr().Write([]byte("status\n"))
		term.waitFor(t, "status")
		if got := term.text(); got != "status\r\n" {
			t.Fatalf("a quiet view wrote %q on the terminal", got)
		}
	})
}

// Arguments are compacted and cut to a line's share.
func TestShortArgs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{ "a" : 1 }`, `{"a":1}`},
		{`{}`, ``},
		{`not json` + "\n" + `at all`, `not json at all`},
		{`{"content":"` + strings.Repeat("x", 100) + `"}`, `{"content":"` + strings.Repeat("x", argsWidth-13) + `…`},
	} {
		if got := shortArgs(c.in); got != c.want {
			t.Errorf("shortArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A door task's answer goes to its caller: only the launch task's text
// (task_start origin cli) is printed on stdout.
func TestOnlyTheLaunchTaskTextIsPrinted(t *testing.T) {
	var out, errb bytes.Buffer
	v := New(&out, &errb, Normal, false)
	v.Emit(ev("task_start", "task_id", "tsk_door", "origin", "door"))
	v.Emit(ev(event.TextDelta, "task_id", "tsk_door", "text", "for the caller"))
	v.Emit(ev("task_start", "task_id", "tsk_cli", "origin", "cli"))
	v.Emit(ev(event.TextDelta, "task_id", "tsk_cli", "text", "for the terminal"))
	v.Close()
	if out.String() != "for the terminal\n" {
		t.Fatalf("stdout %q", out.String())
	}
}
