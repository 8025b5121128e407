// Package progress shows a mur run to the person watching it: the model's
// text on stdout as it streams, and on stderr one line per tool call (tool,
// short arguments, duration, outcome, failures marked) and a live wait —
// the model, a tool, a retry, the capsule starting — with its elapsed
// seconds. It is one more subscriber of the session's event stream
// (capsule.Options.Watch); it adds no stream of its own.
//
// On a terminal the waits are drawn by github.com/briandowns/spinner; when
// stderr is not a terminal the view prints nothing on stderr unless
// verbose, and never a spinner.
package progress

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/briandowns/spinner"
	"golang.org/x/term"

	"github.com/murmur/mur/internal/event"
)

// Level is how much the view says on stderr.
type Level int

// Levels: -q, the default, -v.
const (
	// Quiet shows the model's text only.
	Quiet Level = iota
	// Normal adds tool calls, failures and waits when stderr is a
	// terminal; off a terminal it shows what Quiet does.
	Normal
	// Verbose adds one line per model call and per other record, on a
	// terminal or not.
	Verbose
)

// argsWidth is how many characters of a tool call's arguments a line
// shows; the trace keeps the call whole.
const argsWidth = 60

// View is one run's view. Its Emit is a event.Sink; Stderr wraps stderr so
// that what else mur prints there (warnings, the status line) never lands
// inside a spinner's line.
type View struct {
	out   io.Writer
	err   io.Writer
	lines bool // tool lines and failures go to stderr
	verb  bool
	sp    *spinner.Spinner // nil off a terminal or when quiet
	now   func() time.Time

	mu      sync.Mutex
	midLine bool              // the model's text ended without a newline
	launch  string            // the launch task's id (origin cli)
	args    map[string]string // call_id → short arguments, from tool_start
	wait    atomic.Pointer[waitState]
}

type waitState struct {
	label string
	since time.Time
}

// New is a view writing the model's text to stdout and its lines to
// stderr. tty says whether stderr is a terminal; Terminal tells.
func New(stdout, stderr io.Writer, level Level, tty bool) *View {
	v := &View{out: stdout, err: stderr, now: time.Now, args: map[string]string{}}
	v.verb = level >= Verbose
	v.lines = v.verb || (level == Normal && tty)
	if tty && level >= Normal {
		f, _ := stderr.(*os.File)
		v.sp = spinner.New(spinner.CharSets[14], 100*time.Millisecond, spinner.WithWriterFile(f))
		v.sp.PreUpdate = func(s *spinner.Spinner) {
			if w := v.wait.Load(); w != nil {
				s.Suffix = fmt.Sprintf(" %s %ds", w.label, int(v.now().Sub(w.since).Seconds()))
			}
		}
	}
	return v
}

// Terminal reports whether w is a terminal.
func Terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Wait shows label and its elapsed seconds until the next line, text or
// Wait; off a terminal it shows nothing.
func (v *View) Wait(label string) {
	if v.sp == nil {
		return
	}
	v.wait.Store(&waitState{label: label, since: v.now()})
	v.sp.Start()
}

// Stop ends the wait in progress, erasing its line.
func (v *View) Stop() {
	if v.sp != nil {
		v.sp.Stop()
	}
}

// Close ends the view: the wait is erased and the text's line ended, so
// the status line Close prints starts at the left.
func (v *View) Close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.Stop()
	v.endText()
}

// Stderr is stderr for everything else mur prints during the run: each
// write first erases the wait in progress and ends the model's line; the
// next event draws the next wait.
func (v *View) Stderr() io.Writer { return stderrWriter{v} }

type stderrWriter struct{ v *View }

func (w stderrWriter) Write(b []byte) (int, error) {
	v := w.v
	v.mu.Lock()
	defer v.mu.Unlock()
	v.Stop()
	v.endText()
	return v.err.Write(b)
}

// Emit implements event.Sink.
func (v *View) Emit(e event.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	str := func(k string) string { s, _ := e.Fields[k].(string); return s }
	switch e.Type {
	case "session_start":
		v.Stop()
	case "task_start":
		if str("origin") == "cli" {
			v.launch = str("task_id")
		}
		v.wait1("waiting for the model")
	case event.TextDelta:
		v.Stop()
		// Only the launch task's text is mur run's to print; a door
		// task's answer goes to its caller.
		if text := str("text"); text != "" && str("task_id") == v.launch {
			io.WriteString(v.out, text)
			v.midLine = !strings.HasSuffix(text, "\n")
		}
	case event.TextEnd:
		v.endText()
		v.wait1("waiting for the model")
	case "inference":
		v.Stop()
		if msg := str("error"); msg != "" {
			v.line("✗ model call failed: %s", oneLine(msg))
		} else if v.verb {
			v.line("· model %s turn %v: %v tokens in, %v out, %vms, %s", str("model"), e.Fields["turn"], e.Fields["input_tokens"], e.Fields["output_tokens"], e.Fields["duration_ms"], str("stop_reason"))
		}
	case "inference_retry":
		v.line("✗ model call failed (attempt %v): %s; retrying in %.1fs", e.Fields["attempt"], oneLine(str("error")), float64(toInt(e.Fields["wait_ms"]))/1000)
		v.wait1("waiting to retry the model")
	case event.ToolStart:
		args := shortArgs(str("input"))
		v.args[str("call_id")] = args
		v.wait1(strings.TrimSpace("running " + str("tool") + " " + args))
	case "tool_call":
		v.toolLine(e)
		v.wait1("waiting for the model")
	case "spend_ceiling_reached":
		v.line("✗ spend ceiling reached: %s %v", str("limit"), e.Fields["ceiling"])
	case "deadline_notice":
		v.line("! the session's deadline is %v s away", e.Fields["seconds_left"])
	case "task_failed":
		v.line("✗ task failed: %s", oneLine(str("reason")))
	case "task_end":
		v.Stop()
		v.endText()
		if v.verb {
			v.line("· task %s ended %s after %v turns", str("task_id"), str("exit_status"), e.Fields["turns"])
		}
	default:
		if v.verb && !e.Live {
			v.line("· %s", e.Type)
		}
	}
}

// toolLine is a tool call's line: ✓ or ✗, tool, short arguments,
// duration, and for a failure its status and error.
func (v *View) toolLine(e event.Event) {
	tool, _ := e.Fields["tool"].(string)
	id, _ := e.Fields["call_id"].(string)
	status, _ := e.Fields["status"].(string)
	args := v.args[id]
	delete(v.args, id)
	mark, tail := "✓", ""
	if status != "passed" {
		mark, tail = "✗", " "+status
		if msg, _ := e.Fields["error"].(string); msg != "" {
			tail += ": " + oneLine(msg)
		}
	}
	if args != "" {
		args = " " + args
	}
	v.line("%s %s%s %s%s", mark, tool, args, time.Duration(toInt(e.Fields["duration_ms"]))*time.Millisecond, tail)
}

// wait1 is Wait under v.mu.
func (v *View) wait1(label string) {
	if v.lines {
		v.Wait(label)
	}
}

// line prints one line on stderr, below the model's text, with the wait
// erased first.
func (v *View) line(format string, a ...any) {
	if !v.lines {
		return
	}
	v.Stop()
	v.endText()
	fmt.Fprintf(v.err, "  "+format+"\n", a...)
}

func (v *View) endText() {
	if v.midLine {
		io.WriteString(v.out, "\n")
		v.midLine = false
	}
}

// shortArgs is a call's arguments as compact JSON on one line, cut to
// argsWidth characters.
func shortArgs(input string) string {
	var b bytes.Buffer
	s := oneLine(input)
	if json.Compact(&b, []byte(input)) == nil {
		s = b.String()
	}
	if s == "{}" || s == "null" {
		return ""
	}
	if utf8.RuneCountInString(s) > argsWidth {
		r := []rune(s)
		s = string(r[:argsWidth-1]) + "…"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func toInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}
