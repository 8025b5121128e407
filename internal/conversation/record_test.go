package conversation

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/murmur/mur/internal/infer"
)

func text(role, s string) infer.Message {
	return infer.Message{Role: role, Content: []infer.Block{{Type: infer.BlockText, Text: s}}}
}

func appendN(t testing.TB, l *Log, n int, prefix string) {
	t.Helper()
	for i := range n {
		if _, err := l.Append(Entry{SessionID: "ses_x", TaskID: "tsk_x", Message: text(infer.RoleUser, fmt.Sprintf("%s%d", prefix, i))}); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(rec Record) []int64 {
	var out []int64
	for _, e := range rec.Entries {
		out = append(out, e.ID)
	}
	return out
}

// A record written by an owning capsule starts with a header naming it;
// each message is one line with an id counting from 1 and the context.
func TestAppendReadBack(t *testing.T) {
	s := Store{Dir: t.TempDir(), Capsule: "cap", Owns: true}
	l, err := s.Open("ctx_a")
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 3, "m")
	l.Close()
	rec, err := ReadFile(s.Path("ctx_a"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Header == nil || rec.Header.Capsule != "cap" || rec.Header.ContextID != "ctx_a" {
		t.Fatalf("header %+v", rec.Header)
	}
	if got := fmt.Sprint(ids(rec)); got != "[1 2 3]" {
		t.Fatalf("ids %s", got)
	}
	if e := rec.Entries[2]; e.ContextID != "ctx_a" || e.SessionID != "ses_x" || e.Message.Content[0].Text != "m2" || e.Time.IsZero() {
		t.Fatalf("entry %+v", e)
	}
	// A capsule without context.retain writes no header: the record is
	// unowned.
	u := Store{Dir: t.TempDir(), Capsule: "cap"}
	l, err = u.Open("ctx_b")
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 1, "m")
	l.Close()
	if rec, _ := ReadFile(u.Path("ctx_b")); rec.Header != nil || len(rec.Entries) != 1 {
		t.Fatalf("unowned record %+v", rec)
	}
}

// An image part (a tool's image, an A2A message's) is kept in the record
// with its media type, its call and its bytes, and read back as it was.
func TestImagePartsReadBack(t *testing.T) {
	s := Store{Dir: t.TempDir(), Capsule: "cap"}
	l, err := s.Open("ctx_i")
	if err != nil {
		t.Fatal(err)
	}
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	msg := infer.Message{Role: infer.RoleUser, Content: []infer.Block{
		{Type: infer.BlockToolResult, ToolUseID: "c1", Text: "a screenshot"},
		{Type: infer.BlockImage, ToolUseID: "c1", MediaType: "image/png", Data: png},
	}}
	if _, err := l.Append(Entry{Message: msg}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	rec, err := ReadFile(s.Path("ctx_i"))
	if err != nil {
		t.Fatal(err)
	}
	got := rec.Entries[0].Message.Content[1]
	if got.Type != infer.BlockImage || got.ToolUseID != "c1" || got.MediaType != "image/png" || !bytes.Equal(got.Data, png) {
		t.Fatalf("image part read back as %+v", got)
	}
}

// A last line without its newline is a write cut short: the reader leaves
// it out, and the next writer cuts it off before appending, so the record
// never holds two lines glued together.
func TestTornTailIsCut(t *testing.T) {
	s := Store{Dir: t.TempDir(), Capsule: "cap"}
	l, err := s.Open("ctx")
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 2, "m")
	l.Close()
	path := s.Path("ctx")
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"id":3,"ts":"2026-01-01T00:00:00Z","message":{"role":"us`)
	f.Close()
	rec, err := ReadFile(path)
	if err != nil || !rec.Torn || len(rec.Entries) != 2 {
		t.Fatalf("torn record read as %+v, %v", rec, err)
	}
	l, err = s.Open("ctx")
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 1, "after")
	l.Close()
	rec, err = ReadFile(path)
	if err != nil || rec.Torn || fmt.Sprint(ids(rec)) != "[1 2 3]" || rec.Entries[2].Message.Content[0].Text != "after0" {
		t.Fatalf("after the repair: %+v, %v", rec, err)
	}
}

// Bad lines anywhere but a torn tail are refused with their line number.
func TestReadRefusesDamage(t *testing.T) {
	for name, body := range map[string]string{
		"not json":          "{\"id\":1,\"message\":{\"role\":\"user\",\"content\":[]}}\nxx\n",
		"header later":      "{\"id\":1,\"message\":{\"role\":\"user\",\"content\":[]}}\n{\"kind\":\"header\",\"capsule\":\"c\"}\n",
		"ids go back":       "{\"id\":2,\"message\":{\"role\":\"user\",\"content\":[]}}\n{\"id\":2,\"message\":{\"role\":\"user\",\"content\":[]}}\n",
		"no message":        "{\"id\":1}\n",
		"bad role":          "{\"id\":1,\"message\":{\"role\":\"system\",\"content\":[]}}\n",
		"blank line":        "\n",
		"header no owner":   "{\"kind\":\"header\"}\n",
		"image not png":     "{\"id\":1,\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"aGVsbG8=\"}]}}\n",
		"image mislabelled": "{\"id\":1,\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/jpeg\",\"data\":\"iVBORw0KGgoAAAANSUhEUg==\"}]}}\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read(strings.NewReader(body))
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "line ") {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// Two writers of one record (two sessions continuing one context) never
// give two messages one id, and their lines never interleave.
func TestConcurrentWriters(t *testing.T) {
	s := Store{Dir: t.TempDir(), Capsule: "cap", Owns: true}
	var wg sync.WaitGroup
	for w := range 4 {
		l, err := s.Open("ctx")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer l.Close()
			appendN(t, l, 50, fmt.Sprintf("w%d-", w))
		}()
	}
	wg.Wait()
	rec, err := ReadFile(s.Path("ctx"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Entries) != 200 || rec.LastID() != 200 {
		t.Fatalf("%d entries, last id %d", len(rec.Entries), rec.LastID())
	}
}

// max_messages keeps the newest messages of a record this capsule owns,
// each with the id it always had, and the header records the drop; the
// next message follows the last id.
func TestTrim(t *testing.T) {
	s := Store{Dir: t.TempDir(), Capsule: "cap", Owns: true}
	l, _ := s.Open("ctx")
	appendN(t, l, 10, "m")
	n, err := l.Trim(4)
	if err != nil || n != 6 {
		t.Fatalf("trimmed %d, %v", n, err)
	}
	appendN(t, l, 1, "new")
	l.Close()
	rec, _ := ReadFile(s.Path("ctx"))
	if got := fmt.Sprint(ids(rec)); got != "[7 8 9 10 11]" {
		t.Fatalf("ids %s", got)
	}
	if h := rec.Header; h.Dropped != 6 || h.DroppedThrough != 6 || h.TrimmedAt.IsZero() || h.Capsule != "cap" {
		t.Fatalf("header %+v", h)
	}
	if rec.Entries[0].Message.Content[0].Text != "m6" {
		t.Fatalf("first kept %+v", rec.Entries[0])
	}
}

// Another capsule's record and an unowned one are never trimmed by
// retention; an owning capsule that opens an unowned record adopts it, and
// its policy applies from then on.
func TestOwnership(t *testing.T) {
	dir := t.TempDir()
	other := Store{Dir: dir, Capsule: "other", Owns: true}
	l, _ := other.Open("theirs")
	appendN(t, l, 5, "m")
	l.Close()
	plain := Store{Dir: dir, Capsule: "plain"}
	l, _ = plain.Open("loose")
	appendN(t, l, 5, "m")
	l.Close()

	mine := Store{Dir: dir, Capsule: "mine", Owns: true}
	l, _ = mine.Open("theirs")
	if n, err := l.Trim(1); n != 0 || err != nil {
		t.Fatalf("trimmed another capsule's record: %d, %v", n, err)
	}
	l.Close()
	if rec, _ := ReadFile(mine.Path("theirs")); rec.Header.Capsule != "other" || len(rec.Entries) != 5 {
		t.Fatalf("another capsule's record changed: %+v", rec)
	}
	l, _ = mine.Open("loose")
	if n, err := l.Trim(2); n != 3 || err != nil {
		t.Fatalf("adopted record trimmed %d, %v", n, err)
	}
	l.Close()
	if rec, _ := ReadFile(mine.Path("loose")); rec.Header == nil || rec.Header.Capsule != "mine" || fmt.Sprint(ids(rec)) != "[4 5]" {
		t.Fatalf("adopted record %+v", rec)
	}
}

// max_age removes whole context directories this capsule owns whose
// record was last written too long ago, never the launch's own context,
// an unowned record or another capsule's.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	mine := Store{Dir: dir, Capsule: "mine", Owns: true}
	old := time.Now().Add(-48 * time.Hour)
	for _, c := range []struct {
		store Store
		ctx   string
		age   time.Time
	}{
		{mine, "old", old}, {mine, "keep", old}, {mine, "fresh", time.Now()},
		{Store{Dir: dir, Capsule: "other", Owns: true}, "theirs", old},
		{Store{Dir: dir, Capsule: "mine"}, "unowned", old},
	} {
		l, err := c.store.Open(c.ctx)
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, l, 1, "m")
		l.Close()
		os.Chtimes(c.store.Path(c.ctx), c.age, c.age)
	}
	rm, err := mine.Sweep(24*time.Hour, "keep", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(rm) != 1 || rm[0].ContextID != "old" || rm[0].Dir != filepath.Join(dir, "old") {
		t.Fatalf("removed %+v", rm)
	}
	for _, c := range []string{"keep", "fresh", "theirs", "unowned"} {
		if _, err := os.Stat(mine.Path(c)); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "old")); !os.IsNotExist(err) {
		t.Fatalf("old context directory still there: %v", err)
	}
}

// A context id a client chose is never a path.
func TestDirName(t *testing.T) {
	for id, want := range map[string]string{"ctx_01ab": "ctx_01ab", "a.b-c": "a.b-c"} {
		if got := DirName(id); got != want {
			t.Errorf("%q: %q", id, got)
		}
	}
	for _, id := range []string{"../x", "a/b", ".hidden", "", "_x", strings.Repeat("a", 200)} {
		got := DirName(id)
		if !strings.HasPrefix(got, "_") || strings.ContainsAny(got, "/.") || len(got) != 41 {
			t.Errorf("%q: %q", id, got)
		}
	}
	if DirName("../x") == DirName("../y") {
		t.Fatal("two ids share a directory")
	}
}

// A resume point is the last task's context, and the detached commands
// that have no completion.
func TestReadResumePoint(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"event":"session_start","ts":"2026-01-01T00:00:00Z"}`,
		`{"event":"task_start","ts":"2026-01-01T00:00:01Z","task_id":"t1","context_id":"ctx_1"}`,
		`{"event":"shell_detached","ts":"2026-01-01T00:00:02Z","work_id":"wrk_a","binary":"/bin/sleep","command":"sleep 100"}`,
		`{"event":"shell_detached","ts":"2026-01-01T00:00:03Z","work_id":"wrk_b","binary":"/bin/true","command":"true"}`,
		`{"event":"shell_completed","ts":"2026-01-01T00:00:04Z","work_id":"wrk_b"}`,
		`{"event":"shell_detached","ts":"2026-01-01T00:00:05Z","work_id":"wrk_c","binary":"/bin/sh","command":"sh x"}`,
		`{"event":"shell_abandoned","ts":"2026-01-01T00:00:06Z","work_id":"wrk_c","state":"finished_during_teardown","exit_code":0}`,
		`{"event":"task_start","ts":"2026-01-01T00:00:07Z","task_id":"t2","context_id":"ctx_2"}`,
		`{"event":"task_end","ts":"2026-01-01T00:00:0`,
	}
	os.WriteFile(filepath.Join(dir, "trace.jsonl"), []byte(strings.Join(lines, "\n")), 0o600)
	p, err := ReadResumePoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.ContextID != "ctx_2" || len(p.Lost) != 1 || p.Lost[0].WorkID != "wrk_a" || p.Lost[0].Command != "sleep 100" ||
		!p.Lost[0].Detached.Equal(time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC)) {
		t.Fatalf("resume point %+v", p)
	}
	os.WriteFile(filepath.Join(dir, "trace.jsonl"), []byte(lines[0]+"\n"), 0o600)
	if _, err := ReadResumePoint(dir); !errors.Is(err, ErrNothingToResume) {
		t.Fatalf("a session without a task: %v", err)
	}
}

// FuzzRead: any bytes are refused as malformed or read into a record that
// writes back to a record reading the same.
func FuzzRead(f *testing.F) {
	f.Add([]byte("{\"kind\":\"header\",\"capsule\":\"c\",\"context_id\":\"x\",\"created\":\"2026-01-01T00:00:00Z\"}\n{\"id\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"context_id\":\"x\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n"))
	f.Add([]byte("{\"id\":3,\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"c\",\"name\":\"t\",\"input\":{}}]}}\n{\"id\":"))
	f.Add([]byte("{\"id\":1,\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"see\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgoAAAANSUhEUg==\"}]}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := Read(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		var out []byte
		if rec.Header != nil {
			hb, err := marshalHeader(*rec.Header)
			if err != nil {
				t.Fatal(err)
			}
			out = hb
		}
		for _, e := range rec.Entries {
			eb, err := marshalEntry(e)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, eb...)
		}
		again, err := Read(bytes.NewReader(out))
		if err != nil || again.Torn || len(again.Entries) != len(rec.Entries) || (again.Header == nil) != (rec.Header == nil) {
			t.Fatalf("written back, read as %+v, %v (from %+v)", again, err, rec)
		}
		if again.LastID() != rec.LastID() {
			t.Fatalf("last id %d, was %d", again.LastID(), rec.LastID())
		}
	})
}

// A keeper gives a loading task its context's whole record, less a last
// tool call whose results were never written; a stateless task gets no
// history but its messages are recorded all the same; record: off keeps
// nothing.
func TestKeeper(t *testing.T) {
	dir := t.TempDir()
	store := Store{Dir: dir, Capsule: "cap"}
	k := NewKeeper(Policy{Record: true, Store: store, Load: true})
	hist, log, err := k.Begin("ctx", "ses_1", "tsk_1")
	if err != nil || len(hist) != 0 {
		t.Fatalf("%v %v", hist, err)
	}
	log.Append(text(infer.RoleUser, "q1"))
	log.Append(text(infer.RoleAssistant, "a1"))
	log.Append(text(infer.RoleUser, "q2"))
	log.Append(infer.Message{Role: infer.RoleAssistant, Content: []infer.Block{{Type: infer.BlockToolUse, ID: "c", Name: "t"}}})
	if log.Err() != nil || log.Appended() != 4 {
		t.Fatal(log.Err(), log.Appended())
	}
	hist, _, err = k.Begin("ctx", "ses_1", "tsk_2")
	if err != nil || len(hist) != 3 || hist[2].Content[0].Text != "q2" {
		t.Fatalf("history %+v, %v", hist, err)
	}
	k.Close()

	stateless := NewKeeper(Policy{Record: true, Store: store})
	hist, log, _ = stateless.Begin("ctx", "ses_2", "tsk_3")
	log.Append(text(infer.RoleUser, "q3"))
	stateless.Close()
	if rec, _ := ReadFile(store.Path("ctx")); len(hist) != 0 || len(rec.Entries) != 5 || rec.Entries[4].SessionID != "ses_2" {
		t.Fatalf("stateless: history %d, record %+v", len(hist), rec)
	}

	off := NewKeeper(Policy{Store: Store{Dir: filepath.Join(dir, "off"), Capsule: "cap"}, Load: true})
	hist, log, err = off.Begin("ctx", "ses_3", "tsk_4")
	if hist != nil || log != nil || err != nil {
		t.Fatal("record: off opened a record")
	}
	if _, err := os.Stat(filepath.Join(dir, "off")); !os.IsNotExist(err) {
		t.Fatal("record: off created the store")
	}
}

// At launch, context.retain cuts the launch context's record to its
// newest max_messages and removes the capsule's other records past
// max_age, never the launch context's however old.
func TestKeeperLaunch(t *testing.T) {
	store := Store{Dir: t.TempDir(), Capsule: "cap", Owns: true}
	old := time.Now().Add(-72 * time.Hour)
	for _, c := range []string{"launch", "stale"} {
		l, _ := store.Open(c)
		appendN(t, l, 6, "m")
		l.Close()
		os.Chtimes(store.Path(c), old, old)
	}
	k := NewKeeper(Policy{Record: true, Store: store, MaxMessages: 2, MaxAge: 24 * time.Hour, LaunchContext: "launch"})
	r, err := k.Launch(time.Now())
	k.Close()
	if err != nil || r.Trimmed != 4 || len(r.Removed) != 1 || r.Removed[0].ContextID != "stale" {
		t.Fatalf("retention %+v, %v", r, err)
	}
	if rec, _ := ReadFile(store.Path("launch")); fmt.Sprint(ids(rec)) != "[5 6]" {
		t.Fatalf("launch record %v", ids(rec))
	}
}
