package capsule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule/capsuletest"
	"github.com/murmur/mur/internal/conversation"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/trace"
)

// convDriver answers every call "answer N" and keeps the messages each
// request carried.
type convDriver struct {
	mu   sync.Mutex
	sent [][]agent.Message
}

func (d *convDriver) Run(_ context.Context, in []byte) (agent.Result, error) {
	var req struct {
		Messages []agent.Message `json:"messages"`
	}
	if err := json.Unmarshal(in, &req); err != nil {
		return agent.Result{}, err
	}
	d.mu.Lock()
	d.sent = append(d.sent, req.Messages)
	n := len(d.sent)
	d.mu.Unlock()
	return agent.Result{Status: agent.StatusPassed, Data: fmt.Sprintf(`{"text":"answer %d","stop_reason":"end_turn"}`, n),
		Metadata: [][2]string{{agent.MetaInputTokens, "1"}, {agent.MetaOutputTokens, "1"}}}, nil
}

// texts is each message as role:text.
func texts(msgs []agent.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role+":"+m.Content[0].Text)
	}
	return strings.Join(out, " | ")
}

func convSession(t *testing.T, home, proj string, drv agent.Driver, cv Conversation, stderr *bytes.Buffer) *Session {
	t.Helper()
	cc, inst := capsuletest.Capsule(t, capsuletest.Spec{OutputCap: 100, Window: 10000})
	p := Parts{
		Capsule: cc, Installed: inst,
		ManifestDir: proj, MurmurHome: home, Driver: drv, Conversation: cv,
	}
	if stderr != nil {
		p.Stderr = stderr
	}
	s, err := OpenParts(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func traceOf(t *testing.T, s *Session, typ string) []trace.Line {
	t.Helper()
	lines, err := trace.ReadFile(s.Dirs().Trace())
	if err != nil {
		t.Fatal(err)
	}
	return trace.Filter(lines, typ)
}

// lifecycle.conversation: threaded — a task with a contextId starts from
// the whole record of that context, messages an earlier session wrote
// included, and writes out/result_<taskId>.txt; stateless records the same
// messages but starts every task empty.
func TestThreadedAcrossSessions(t *testing.T) {
	for _, threaded := range []bool{true, false} {
		t.Run(fmt.Sprintf("threaded=%v", threaded), func(t *testing.T) {
			home, proj := t.TempDir(), t.TempDir()
			pol := conversation.Policy{Record: true, Threaded: threaded, Load: threaded,
				Store: conversation.Store{Dir: conversation.StoreDir(home, "cap"), Capsule: "cap"}}
			drv := &convDriver{}
			a := convSession(t, home, proj, drv, Conversation{Policy: pol}, nil)
			oa := a.RunTask(context.Background(), Task{ContextID: "ctx_t", Text: "first"})
			if err := a.Close(oa); err != nil {
				t.Fatal(err)
			}
			b := convSession(t, home, proj, drv, Conversation{Policy: pol}, nil)
			ob := b.RunTask(context.Background(), Task{ContextID: "ctx_t", Text: "second"})
			// A task of another context starts from nothing.
			b.RunTask(context.Background(), Task{Text: "elsewhere"})
			if err := b.Close(ob); err != nil {
				t.Fatal(err)
			}
			want := "user:second"
			if threaded {
				want = "user:first | assistant:answer 1 | user:second"
			}
			if got := texts(drv.sent[1]); got != want {
				t.Fatalf("the resumed turn sent %q, want %q", got, want)
			}
			if got := texts(drv.sent[2]); got != "user:elsewhere" {
				t.Fatalf("another context's task sent %q", got)
			}
			rec, err := conversation.ReadFile(pol.Store.Path("ctx_t"))
			if err != nil || len(rec.Entries) != 4 || rec.Entries[3].SessionID != b.ID() || rec.Entries[0].SessionID != a.ID() {
				t.Fatalf("record %+v, %v", rec, err)
			}
			starts := traceOf(t, b, "task_start")
			if h := starts[0].Int("history_messages"); (h == 2) != threaded {
				t.Fatalf("task_start history_messages %d", h)
			}
			if c := starts[1].String("context_id"); !strings.HasPrefix(c, conversation.ContextPrefix) {
				t.Fatalf("a task without a context got %q", c)
			}
			res, err := os.ReadFile(filepath.Join(b.Dirs().Out(), "result_"+ob.TaskID+".txt"))
			if threaded && (err != nil || string(res) != "answer 2") {
				t.Fatalf("out/result_<taskId>.txt: %q, %v", res, err)
			}
			if !threaded && err == nil {
				t.Fatal("a stateless capsule wrote a per-task result")
			}
		})
	}
}

// context.record: off writes nothing under ~/.murmur/conversations and
// loads nothing, threaded or not.
func TestRecordOff(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	pol := conversation.Policy{Threaded: true, Load: true, Store: conversation.Store{Dir: conversation.StoreDir(home, "cap"), Capsule: "cap"}}
	drv := &convDriver{}
	for range 2 {
		s := convSession(t, home, proj, drv, Conversation{Policy: pol}, nil)
		s.Close(s.RunTask(context.Background(), Task{ContextID: "ctx", Text: "hi"}))
	}
	if texts(drv.sent[1]) != "user:hi" {
		t.Fatalf("record: off loaded %q", texts(drv.sent[1]))
	}
	if _, err := os.Stat(filepath.Join(home, "conversations")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("record: off created %v", err)
	}
}

// mur run --resume SESSION: the launch task continues the context of the
// session's last task, under stateless too; every command that session
// moved to the background without a completion is reported once as lost,
// in the trace and on stderr. What cannot be resumed is refused E-RUN-901.
func TestResume(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	c := &manifest.Capsule{Name: "cap"}
	pol, err := conversation.PolicyFor(c, home)
	if err != nil {
		t.Fatal(err)
	}
	drv := &convDriver{}
	a := convSession(t, home, proj, drv, Conversation{Policy: pol}, nil)
	oa := a.RunTask(context.Background(), Task{Text: "remember 42"})
	// What the shell layer writes when a command moves to the background.
	a.events.Emit(event.Event{Type: "shell_detached", Fields: map[string]any{"work_id": "wrk_1", "binary": "/usr/bin/sleep", "command": "sleep 600", "log": "logs/wrk_1.log"}})
	a.Close(oa)

	cv, err := conversationFor(c, home, proj, Options{Resume: a.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if cv.Policy.Threaded || !cv.Policy.Load || cv.Policy.LaunchContext == "" || len(cv.Resumed.Lost) != 1 {
		t.Fatalf("resume policy %+v", cv)
	}
	var stderr bytes.Buffer
	cc, inst := capsuletest.Capsule(t, capsuletest.Spec{OutputCap: 100, Window: 10000})
	b, err := OpenParts(context.Background(), Parts{
		Capsule: cc, Installed: inst,
		ManifestDir: proj, MurmurHome: home, Driver: drv, Conversation: cv, Stderr: &stderr, LaunchTask: "what number?",
	})
	if err != nil {
		t.Fatal(err)
	}
	b.Close(b.RunLaunchTask(context.Background(), nil))
	if got := texts(drv.sent[1]); got != "user:remember 42 | assistant:answer 1 | user:what number?" {
		t.Fatalf("the resumed turn sent %q", got)
	}
	res := traceOf(t, b, "resume")
	var lost []conversation.Lost
	res[0].Get("lost", &lost)
	if len(res) != 1 || res[0].String("from_session") != a.ID() || len(lost) != 1 || lost[0].WorkID != "wrk_1" || lost[0].Command != "sleep 600" {
		t.Fatalf("resume record %+v", res)
	}
	if n := strings.Count(stderr.String(), "lost work wrk_1: sleep 600 (/usr/bin/sleep)"); n != 1 {
		t.Fatalf("stderr reports the loss %d times:\n%s", n, stderr.String())
	}

	for name, o := range map[string]Options{
		"unknown session": {Resume: "ses_01m8rxvr4je008d2gnahjyfz28"},
		"not an id":       {Resume: "../x"},
		"both flags":      {Resume: a.ID(), ContextID: "ctx"},
	} {
		_, err := conversationFor(c, home, proj, o)
		var ds diag.ListError
		if !errors.As(err, &ds) || len(ds) != 1 || ds[0].Code != diag.RunResume {
			t.Errorf("%s: %v", name, err)
		}
	}
	off := &manifest.Capsule{Name: "cap", Context: &manifest.Context{Record: "off"}}
	if _, err := conversationFor(off, home, proj, Options{Resume: a.ID()}); err == nil || !strings.Contains(err.Error(), string(diag.RunResume)) {
		t.Errorf("record: off: %v", err)
	}
	// A session that ran no task has no conversation to continue.
	empty, _ := session.Create(session.Layout{MurmurHome: home, ManifestDir: proj})
	os.WriteFile(empty.Trace(), []byte(`{"event":"session_start","ts":"2026-12-01T10:00:00Z"}`+"\n"), 0o600)
	empty.Release()
	if _, err := conversationFor(c, home, proj, Options{Resume: empty.ID}); err == nil || !strings.Contains(err.Error(), "ran no task") {
		t.Errorf("a session without a task: %v", err)
	}
}

// A launch whose --context record is damaged is refused before any task
// runs (E-RUN-902).
func TestDamagedLaunchRecord(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	pol := conversation.Policy{Record: true, Store: conversation.Store{Dir: conversation.StoreDir(home, "cap"), Capsule: "cap"}, LaunchContext: "ctx"}
	os.MkdirAll(filepath.Dir(pol.Store.Path("ctx")), 0o700)
	os.WriteFile(pol.Store.Path("ctx"), []byte("not json\n"), 0o600)
	cc, inst := capsuletest.Capsule(t, capsuletest.Spec{OutputCap: 100, Window: 10000})
	_, err := OpenParts(context.Background(), Parts{
		Capsule: cc, Installed: inst,
		ManifestDir: proj, MurmurHome: home, Driver: &convDriver{}, Conversation: Conversation{Policy: pol},
	})
	var ds diag.ListError
	if !errors.As(err, &ds) || ds[0].Code != diag.RunConversationRecord || !strings.Contains(ds[0].Msg, "line 1") {
		t.Fatalf("got %v", err)
	}
}
