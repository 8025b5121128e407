package doorclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// sse renders events as the door's murmur.WatchSession sends them.
func sse(t testing.TB, events ...a2a.Event) string {
	var b strings.Builder
	b.WriteString(": keep-alive\n\n")
	for _, ev := range events {
		result, err := json.Marshal(a2a.StreamResponse{Event: ev})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": json.RawMessage(result)})
		b.WriteString("data: " + string(data) + "\n\n")
	}
	return b.String()
}

func TestFollowStream(t *testing.T) {
	at := func() time.Time { return time.Date(2026, 12, 1, 12, 3, 4, 0, time.UTC) }
	events := []a2a.Event{
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c", Artifact: &a2a.Artifact{ID: "a", Parts: a2a.ContentParts{a2a.NewTextPart("two\nlines")}}},
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("which file?"))}},
		&a2a.Task{ID: "t2", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateRejected}},
	}
	var out bytes.Buffer
	if err := Follow(strings.NewReader(sse(t, events...)), &out, false, at); err != nil {
		t.Fatal(err)
	}
	want := "12:03:04 task t1 working\n" +
		"12:03:04 task t1 artifact: two\\nlines\n" +
		"12:03:04 task t1 input-required: which file?\n" +
		"12:03:04 task t2 rejected\n"
	if out.String() != want {
		t.Errorf("human lines:\n%s\nwant:\n%s", out.String(), want)
	}

	out.Reset()
	if err := Follow(strings.NewReader(sse(t, events...)), &out, true, at); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(events) {
		t.Fatalf("--json printed %d lines, want %d:\n%s", len(lines), len(events), out.String())
	}
	for i, l := range lines {
		var sr a2a.StreamResponse
		if err := json.Unmarshal([]byte(l), &sr); err != nil {
			t.Fatalf("line %d is not a StreamResponse: %v: %s", i, err, l)
		}
	}
	if !strings.Contains(lines[1], `"artifactUpdate"`) {
		t.Errorf("line 2 = %s, want the artifact update", lines[1])
	}
}

func TestFollowStreamErrors(t *testing.T) {
	var rpc *Error
	err := Follow(strings.NewReader(`data: {"jsonrpc":"2.0","id":1,"error":{"code":-31403,"message":"no scope"}}`+"\n\n"), &bytes.Buffer{}, false, time.Now)
	if !errors.As(err, &rpc) || rpc.Code != -31403 {
		t.Errorf("error envelope: got %v, want the door's -31403", err)
	}
	if err := Follow(strings.NewReader("data: {not json\n\n"), &bytes.Buffer{}, false, time.Now); err == nil {
		t.Error("a data line that is not JSON was accepted")
	}
	if err := Follow(strings.NewReader(`data: {"jsonrpc":"2.0","id":1}`+"\n\n"), &bytes.Buffer{}, true, time.Now); err == nil {
		t.Error("--json: an event without a result was accepted")
	}
}

// FuzzFollowStream: whatever a door sends, mur watch returns (an error or
// nil) and never panics; each event it prints is one line.
func FuzzFollowStream(f *testing.F) {
	f.Add([]byte(sse(f, &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}})), false)
	f.Add([]byte(`data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"x","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}`+"\n"), true)
	f.Add([]byte("data: {\"result\":{\"statusUpdate\":null}}\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		var out bytes.Buffer
		_ = Follow(bytes.NewReader(data), &out, asJSON, time.Now)
		n := strings.Count(string(data), "data: ")
		if got := strings.Count(out.String(), "\n"); got > n {
			t.Fatalf("%d lines printed for %d events", got, n)
		}
	})
}
