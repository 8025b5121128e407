package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
)

// The rows of the spec's budget table.
func TestInstructionFileStatuses(t *testing.T) {
	wd := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o600)
	os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(wd, "OUT.md"))
	os.Symlink("nowhere.md", filepath.Join(wd, "DANGLING.md"))
	os.Mkdir(filepath.Join(wd, "DIR.md"), 0o700)
	syscall.Mkfifo(filepath.Join(wd, "FIFO.md"), 0o600)
	os.WriteFile(filepath.Join(wd, "BIN.md"), []byte{0xff, 0xfe}, 0o600)
	os.WriteFile(filepath.Join(wd, "BLANK.md"), []byte(" \n\t\n"), 0o600)
	os.WriteFile(filepath.Join(wd, "LOCKED.md"), []byte("x"), 0o000)
	big := strings.Repeat("a", 32767) + "é" + strings.Repeat("b", 100) // é straddles 32768
	os.WriteFile(filepath.Join(wd, "BIG.md"), []byte(big), 0o600)
	entries := []string{"OUT.md", "DANGLING.md", "DIR.md", "FIFO.md", "BIN.md", "BLANK.md", "BIG.md", "LOCKED.md"}
	p, err := (&Plan{Inference: &manifest.Inference{InstructionFiles: entries}}).ComposePrompt(wd)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{InstrOutside, InstrMissing, InstrNotAFile, InstrNotAFile, InstrNotUTF8, InstrEmpty, InstrRead, InstrUnreadable}
	if os.Geteuid() == 0 {
		want[7] = InstrRead // root reads a 0000 file
	}
	for i, w := range want {
		if p.Instructions[i].Status != w {
			t.Errorf("%s: status %q, want %q", entries[i], p.Instructions[i].Status, w)
		}
	}
	if !strings.Contains(p.Text, "[Instruction file: BIG.md, first 32767 of 32869 bytes]\n") {
		t.Fatalf("big header: %q", p.Text[:80])
	}
	if strings.Contains(p.Text, "secret") {
		t.Fatal("a file outside the work folder was read")
	}
}

func TestNoInstructionFilesNoBlocks(t *testing.T) {
	inline := "x"
	p, err := (&Plan{Inference: &manifest.Inference{SystemPrompt: &inline}}).ComposePrompt(t.TempDir())
	if err != nil || p.Text != "x" || p.Instructions != nil {
		t.Fatalf("%+v %v", p, err)
	}
	p, _ = (&Plan{Inference: &manifest.Inference{InstructionFiles: []string{}}}).ComposePrompt(t.TempDir())
	if p.Set || p.Instructions == nil {
		t.Fatalf("empty list: %+v", p)
	}
}

func TestClassifyOrder(t *testing.T) {
	meta := func(kv ...string) Result {
		r := Result{Status: StatusFailed, Summary: "x"}
		for i := 0; i < len(kv); i += 2 {
			r.Metadata = append(r.Metadata, [2]string{kv[i], kv[i+1]})
		}
		return r
	}
	tests := []struct {
		name              string
		res               Result
		transient, credit bool
	}{
		{"401 beats transient true", meta(MetaHTTPStatus, "401", MetaTransient, "true"), false, true},
		{"transient false beats 503", meta(MetaHTTPStatus, "503", MetaTransient, "false"), false, false},
		{"transient true on a 200 stream", meta(MetaTransient, "true"), true, false},
		{"broken connection", meta(MetaFailure, FailureConnectionBroken), true, false},
		{"refused connection", meta(MetaFailure, FailureConnection), false, false},
		{"408", meta(MetaHTTPStatus, "408"), true, false},
		{"429", meta(MetaHTTPStatus, "429"), true, false},
		{"500", meta(MetaHTTPStatus, "500"), true, false},
		{"505", meta(MetaHTTPStatus, "505"), false, false},
		{"404", meta(MetaHTTPStatus, "404"), false, false},
	}
	for _, tt := range tests {
		f := classify(tt.res, nil, time.Now())
		if f.transient != tt.transient || f.credential != tt.credit {
			t.Errorf("%s: transient %v credential %v", tt.name, f.transient, f.credential)
		}
	}
	if f := classify(Result{}, errors.New("trap"), time.Now()); f.transient {
		t.Error("a driver trap is not transient")
	}
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	d, ok := ParseRetryAfter("Sun, 29 Nov 2026 20:00:30 GMT", now)
	if !ok || d != 30*time.Second {
		t.Fatalf("%v %v", d, ok)
	}
	if _, ok := ParseRetryAfter("soon", now); ok {
		t.Fatal("garbage parsed")
	}
}

// A driver that opts into continuation is sent only the new messages.
func TestContinuationProtocol(t *testing.T) {
	var reqs []Request
	replies := []Result{
		passed(`{"text":"","tool_calls":[{"id":"c1","name":"skill1","input":{}}],"stop_reason":"tool_use"}`, MetaContinuationID, "conv-1"),
		passed(`{"text":"","tool_calls":[{"id":"c2","name":"skill1","input":{}}],"stop_reason":"tool_use"}`),
		passed(`{"text":"done","tool_calls":[],"stop_reason":"end_turn"}`),
	}
	drv := DriverFunc(func(_ context.Context, data []byte) (Result, error) {
		var r Request
		json.Unmarshal(data, &r)
		reqs = append(reqs, r)
		res := replies[0]
		replies = replies[1:]
		return res, nil
	})
	l := testLoop(t, 100, []Tool{NewSkill("skill1", "s", "body")}, Runtime{Driver: drv, Events: &event.Stream{}}, nil)
	out := l.RunTask(context.Background(), Task{ID: "t1", ContextID: "ctx-1", Text: "go"})
	if out.Status != ExitOK || len(reqs) != 3 {
		t.Fatalf("%+v %d", out, len(reqs))
	}
	if reqs[0].ContinuationID != "" || len(reqs[0].Messages) != 1 {
		t.Fatalf("first request %+v", reqs[0])
	}
	// Second: only the tool result appended since the driver's ack.
	if reqs[1].ContinuationID != "conv-1" || len(reqs[1].Messages) != 1 || reqs[1].Messages[0].Content[0].Type != BlockToolResult {
		t.Fatalf("second request %+v", reqs[1])
	}
	// The second reply dropped the key: the third is a full resend.
	if reqs[2].ContinuationID != "" || len(reqs[2].Messages) != 5 {
		t.Fatalf("third request has %d messages, id %q", len(reqs[2].Messages), reqs[2].ContinuationID)
	}
}

func TestContinuationNeverCrossesContexts(t *testing.T) {
	var last Request
	drv := DriverFunc(func(_ context.Context, data []byte) (Result, error) {
		json.Unmarshal(data, &last)
		return passed(`{"text":"ok","stop_reason":"end_turn"}`, MetaContinuationID, "c"), nil
	})
	l := testLoop(t, 100, nil, Runtime{Driver: drv}, nil)
	l.RunTask(context.Background(), Task{ID: "t1", ContextID: "ctx-a", Text: "one"})
	l.RunTask(context.Background(), Task{ID: "t2", ContextID: "ctx-b", Text: "two"})
	if last.ContinuationID != "" {
		t.Fatal("a continuation was reused for another context")
	}
}

func passed(data string, meta ...string) Result {
	r := Result{Status: StatusPassed, Data: data}
	for i := 0; i+1 < len(meta); i += 2 {
		r.Metadata = append(r.Metadata, [2]string{meta[i], meta[i+1]})
	}
	return r
}

// A capped turn's call without an id or a name is left out rather than
// failing the turn: the cap may cut a call before either arrived, and a
// capped turn's calls are dropped unrun anyway. Any other turn still
// fails on it.
func TestParseResponseCappedNamelessCall(t *testing.T) {
	r, err := ParseResponse([]byte(`{"text":"Writ","tool_calls":[{"id":"c1","name":"write"},{"id":"c2","name":""}],"stop_reason":"max_tokens"}`))
	if err != nil || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "write" {
		t.Fatalf("capped: %+v %v", r, err)
	}
	if _, err := ParseResponse([]byte(`{"tool_calls":[{"id":"c2","name":""}],"stop_reason":"tool_use"}`)); !errors.Is(err, ErrResponse) {
		t.Fatalf("uncapped nameless call: %v", err)
	}
}

func FuzzParseResponse(f *testing.F) {
	f.Add([]byte(`{"text":"hi","tool_calls":[{"id":"1","name":"x","input":{"a":1}}],"stop_reason":"tool_use"}`))
	f.Add([]byte(`{"stop_reason":"max_tokens"}`))
	f.Add([]byte(`{"stop_reason":"end_turn","tool_calls":[{"id":"","name":"x"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseResponse(b)
		if err != nil {
			if !errors.Is(err, ErrResponse) {
				t.Fatalf("error kind: %v", err)
			}
			return
		}
		for _, c := range r.ToolCalls {
			if c.ID == "" || c.Name == "" || !json.Valid(c.Input) {
				t.Fatalf("accepted a bad call %+v", c)
			}
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	f.Add("120")
	f.Add("Sun, 29 Nov 2026 20:00:30 GMT")
	f.Add("-1")
	f.Add("1.5")
	now := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if d, ok := ParseRetryAfter(s, now); ok && d < 0 {
			t.Fatalf("negative wait %v", d)
		}
		if d, ok := ParseRetryAfterMs(s); ok && d < 0 {
			t.Fatalf("negative wait %v", d)
		}
	})
}

func TestRetriedChargeFollowsTheFailure(t *testing.T) {
	tests := []struct {
		name string
		meta [][2]string
		free bool
	}{
		{"503 the driver also calls transient", [][2]string{{MetaHTTPStatus, "503"}, {MetaTransient, "true"}}, true},
		{"broken connection", [][2]string{{MetaFailure, FailureConnectionBroken}}, true},
		{"stream broke after 200", [][2]string{{MetaTransient, "true"}}, false},
	}
	for _, tt := range tests {
		f := classify(Result{Status: StatusFailed, Metadata: tt.meta}, nil, time.Now())
		if !f.transient || f.brokeOrStatus != tt.free {
			t.Errorf("%s: transient %v free %v", tt.name, f.transient, f.brokeOrStatus)
		}
	}
}
