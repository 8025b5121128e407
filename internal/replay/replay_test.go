package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/trace"
)

// session writes a records directory: trace lines (with {MSG} and {RESP}
// standing for the blobs' hashes) and the blobs.
func session(t *testing.T, msg, resp string, lines ...string) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "blobs"), 0o755)
	put := func(b string) string {
		sum := sha256.Sum256([]byte(b))
		h := hex.EncodeToString(sum[:])
		os.WriteFile(filepath.Join(dir, "blobs", h), []byte(b), 0o644)
		return h
	}
	m, r := put(msg), put(resp)
	text := strings.NewReplacer("{MSG}", m, "{RESP}", r).Replace(strings.Join(lines, "\n") + "\n")
	os.WriteFile(filepath.Join(dir, "trace.jsonl"), []byte(text), 0o644)
	return dir
}

const (
	start   = `{"event":"session_start","ts":"2026-12-01T10:00:00Z","capsule":"c","capture":"content","driver":"murmur/driver-openai","session_id":"ses_a"}`
	task    = `{"event":"task_start","ts":"2026-12-01T10:00:00Z","task_id":"tsk_1","origin":"cli","context_id":"ctx_a"}`
	infer1  = `{"event":"inference","ts":"2026-12-01T10:00:01Z","task_id":"tsk_1","turn":1,"duration_ms":5,"message_shas":["{MSG}"],"response_sha":"{RESP}","input_tokens_actual":40,"output_tokens_actual":9,"stop_reason":"tool_use"}`
	call1   = `{"event":"tool_call","ts":"2026-12-01T10:00:01Z","task_id":"tsk_1","turn":1,"tool":"t","call_id":"c1","status":"passed","output":"42","duration_ms":3}`
	taskEnd = `{"event":"task_end","ts":"2026-12-01T10:00:02Z","task_id":"tsk_1","exit_status":"ok","turns":1}`
	userMsg = `{"role":"user","content":[{"type":"text","text":"Do it."}]}`
	resp    = `{"text":"On it.","tool_calls":[{"id":"c1","name":"t","input":{"a":1}}],"stop_reason":"tool_use"}`
)

func TestLoad(t *testing.T) {
	r, err := Load(session(t, userMsg, resp, start, task, infer1, call1, taskEnd))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tasks) != 1 || r.Tasks[0] != (Task{ID: "tsk_1", Origin: "cli", Text: "Do it."}) {
		t.Errorf("tasks = %+v", r.Tasks)
	}
	if len(r.Answers) != 1 {
		t.Fatalf("answers = %+v", r.Answers)
	}
	a := r.Answers[0]
	if a.Text != "On it." || a.Stop != "tool_use" || len(a.Calls) != 1 || a.Calls[0].Input != `{"a":1}` || a.InputTokens != 40 || a.OutputTokens != 9 || a.NoUsage {
		t.Errorf("answer = %+v", a)
	}
	if len(r.Records) != 4 {
		t.Errorf("records = %d, want task_start, inference, tool_call, task_end", len(r.Records))
	}
}

func code(t *testing.T, err error) diag.Code {
	t.Helper()
	var ref *Refusal
	if !errors.As(err, &ref) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	return ref.Diag.Code
}

func TestLoadRefuses(t *testing.T) {
	meta := strings.Replace(start, `"content"`, `"meta"`, 1)
	if c := code(t, load(t, session(t, userMsg, resp, meta, task, infer1))); c != diag.RunReplayCapture {
		t.Errorf("meta: %s", c)
	}
	// A blob changed after the session.
	dir := session(t, userMsg, resp, start, task, infer1)
	ents, _ := os.ReadDir(filepath.Join(dir, "blobs"))
	for _, e := range ents {
		os.WriteFile(filepath.Join(dir, "blobs", e.Name()), []byte("{}"), 0o644)
	}
	_, err := Load(dir)
	if c := code(t, err); c != diag.RunReplayRecords || !strings.Contains(err.Error(), "does not hold the bytes") {
		t.Errorf("tampered: %v", err)
	}
	// A task that continued a conversation.
	two := strings.Replace(infer1, `["{MSG}"]`, `["{MSG}","{MSG}"]`, 1)
	_, err = Load(session(t, userMsg, resp, start, task, two))
	if c := code(t, err); c != diag.RunReplayRecords || !strings.Contains(err.Error(), "1 earlier messages") {
		t.Errorf("history: %v", err)
	}
}

func load(t *testing.T, dir string) error {
	_, err := Load(dir)
	return err
}

// replayed feeds the checker the recording's lines as a replay would
// emit them, with edit applied to the line at index i.
func replayed(t *testing.T, c *Checker, lines []string, i int, edit func(string) string) {
	t.Helper()
	for k, l := range lines[1:] {
		if k+1 == i {
			l = edit(l)
		}
		var e event.Event
		p, err := trace.ParseLine([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		e.Type, e.Fields = p.Event, map[string]any{}
		for f, raw := range p.Fields {
			e.Fields[f] = raw
		}
		c.Emit(e)
	}
}

func TestChecker(t *testing.T) {
	lines := []string{start, task, infer1, call1, taskEnd}
	dir := session(t, userMsg, resp, lines...)
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "trace.jsonl"))
	rec := strings.Split(strings.TrimSpace(string(raw)), "\n")

	// The same records, with other durations and context: no divergence.
	c := NewChecker(r, t.TempDir())
	replayed(t, c, rec, 1, func(l string) string { return strings.Replace(l, `"ctx_a"`, `"ctx_b"`, 1) })
	if d, n := c.Result(); d != nil || n != 4 {
		t.Errorf("same run: %v, %d matched", d, n)
	}

	// A tool that answers differently: the tool_call's output, and the
	// run is stopped.
	c = NewChecker(r, t.TempDir())
	stopped := 0
	c.OnDiverge = func() { stopped++ }
	replayed(t, c, rec, 3, func(l string) string { return strings.Replace(l, `"42"`, `"41"`, 1) })
	d, n := c.Result()
	if d == nil || d.At != 2 || d.Event != "tool_call" || d.Field != "output" || d.Recorded != `"42"` || d.Replayed != `"41"` || n != 2 || stopped != 1 {
		t.Errorf("changed tool: %+v, %d matched, stopped %d", d, n, stopped)
	}

	// A replay that ends early, and one that goes on.
	c = NewChecker(r, t.TempDir())
	replayed(t, c, rec[:4], 0, nil)
	if d, _ := c.Result(); d == nil || d.Event != "task_end" || d.Replayed != "(the replay ended here)" {
		t.Errorf("short replay: %+v", d)
	}
	c = NewChecker(r, t.TempDir())
	replayed(t, c, append(rec, rec[3]), 0, nil)
	if d, _ := c.Result(); d == nil || d.At != 4 || d.Recorded != "(the recording ends here)" {
		t.Errorf("long replay: %+v", d)
	}
	// A request whose message differs names the message.
	other := sha(`{"role":"user","content":[{"type":"text","text":"Do that."}]}`)
	c = NewChecker(r, t.TempDir())
	replayed(t, c, rec, 2, func(l string) string {
		return strings.Replace(l, msgSHA(t, r), other, 1)
	})
	if d, _ := c.Result(); d == nil || d.Field != "message_shas" || !strings.Contains(d.Detail, "message 1 of the request differs") {
		t.Errorf("changed request: %+v", d)
	}
}

func msgSHA(t *testing.T, r *Recording) string {
	var shas []string
	if _, err := r.Records[1].Get("message_shas", &shas); err != nil || len(shas) != 1 {
		t.Fatalf("message_shas: %v", err)
	}
	return shas[0]
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
