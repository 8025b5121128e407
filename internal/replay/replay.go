// Package replay re-runs a recorded session offline: the model's answers
// come from the session's trace.capture: content records (each inference
// line's response_sha names the driver's response, kept in blobs/), served
// on loopback in the provider's own wire shape to the capsule's real
// driver, and every record the new run writes is compared, as it is
// written, with the recording's. The first record that differs is the
// divergence: a tool that answers differently, a request that is not the
// bytes it was, a different outcome.
package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/infer"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/trace"
)

// Task is one recorded task, as replay runs it again.
type Task struct {
	ID     string
	Origin string
	Text   string
}

// Recording is a session read for replay.
type Recording struct {
	// Dir is the session's records directory.
	Dir       string
	SessionID string
	Capsule   string
	Driver    string
	Tasks     []Task
	// Answers are the provider's answers in the order the session asked
	// for them: each inference attempt that failed and each that passed.
	Answers []providertest.Step
	// Records are the recorded lines a replay must write again, in order
	// (Compared's event types).
	Records []trace.Line
}

// Compared are the event types a replay checks: every step of a task.
// Session-level records (session_start, retention, session_end) name the
// session's own folders and clock; task_end carries its outcome.
var Compared = map[string]bool{
	"task_start": true, "inference": true, "inference_retry": true, "spend_ceiling_reached": true,
	"tool_call": true, "tool_input_refused": true, "keep_working": true, "done_check": true,
	"task_failed": true, "task_reopened": true, "task_end": true,
}

// Volatile are the fields that differ from run to run whatever the
// session did: times, and the conversation context a replayed task is
// given afresh (a recorded one would continue the original's record).
var Volatile = map[string]bool{"duration_ms": true, "wait_ms": true, "context_id": true}

// Refusal is a recording replay cannot serve; its Diagnostic names the
// trace line and what to do.
type Refusal struct{ Diag diag.Diagnostic }

func (r *Refusal) Error() string { return r.Diag.String() }

func refuse(code diag.Code, path string, line int, field, format string, args ...any) error {
	return &Refusal{Diag: diag.New(code, diag.Pos{File: path, Line: line}, field, fmt.Sprintf(format, args...))}
}

// Load reads the session in records directory dir: its trace.jsonl and
// the blobs its inference lines name. A session captured below content, a
// missing or altered blob, a task that continued an earlier conversation
// and a driver replay cannot speak for are refusals (*Refusal).
func Load(dir string) (*Recording, error) {
	path := filepath.Join(dir, "trace.jsonl")
	lines, err := trace.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(lines) == 0 || lines[0].Event != "session_start" {
		return nil, refuse(diag.RunReplayRecords, path, 1, "", "the trace does not begin with session_start: give a session's records directory or its trace.jsonl")
	}
	st := lines[0]
	if c := st.String("capture"); c != string(trace.CaptureContent) {
		if c == "" {
			c = "none"
		}
		return nil, refuse(diag.RunReplayCapture, path, 1, "trace.capture",
			"session %s was recorded under trace.capture: %s, which keeps no model answers to serve; set trace.capture: content in the capsule's murmur.yaml and record the session again to replay it",
			st.String("session_id"), c)
	}
	r := &Recording{Dir: dir, SessionID: st.String("session_id"), Capsule: st.String("capsule"), Driver: st.String("driver")}
	blobs := filepath.Join(dir, "blobs")
	firstTurn := map[string]bool{}
	byID := map[string]int{}
	for i, l := range lines {
		n := i + 1
		switch l.Event {
		case "task_start":
			byID[l.String("task_id")] = len(r.Tasks)
			r.Tasks = append(r.Tasks, Task{ID: l.String("task_id"), Origin: l.String("origin")})
		case "inference_retry":
			r.Answers = append(r.Answers, failed(l))
		case "inference":
			id := l.String("task_id")
			if !firstTurn[id] {
				firstTurn[id] = true
				k, ok := byID[id]
				if !ok {
					return nil, refuse(diag.RunReplayRecords, path, n, "task_id", "inference for task %s, which has no task_start before it: the trace is not whole", id)
				}
				text, err := taskText(l, blobs, path, n)
				if err != nil {
					return nil, err
				}
				r.Tasks[k].Text = text
			}
			if _, bad := l.Fields["error"]; bad {
				r.Answers = append(r.Answers, failed(l))
				break
			}
			sha := l.String("response_sha")
			body, err := blob(blobs, sha, path, n, "response_sha")
			if err != nil {
				return nil, err
			}
			step, err := answer(l, body)
			if err != nil {
				return nil, refuse(diag.RunReplayRecords, path, n, "response_sha", "blob %s is not a driver response: %v", sha, err)
			}
			r.Answers = append(r.Answers, step)
		}
		if Compared[l.Event] {
			r.Records = append(r.Records, l)
		}
	}
	for _, t := range r.Tasks {
		if t.Text == "" {
			return nil, refuse(diag.RunReplayRecords, path, 0, "task_id", "task %s made no model call, so the recording does not hold its text", t.ID)
		}
	}
	return r, nil
}

// taskText is the text of the task a task's first inference line opened
// with: its one message. A first turn that carried more (an earlier
// conversation, under threaded or --resume) is refused: replay starts each
// task from an empty record.
func taskText(l trace.Line, blobs, path string, n int) (string, error) {
	var shas []string
	if _, err := l.Get("message_shas", &shas); err != nil || len(shas) == 0 {
		return "", refuse(diag.RunReplayRecords, path, n, "message_shas", "the task's first inference names no message: the trace is not whole")
	}
	if len(shas) > 1 {
		return "", refuse(diag.RunReplayRecords, path, n, "message_shas",
			"task %s started from a conversation of %d earlier messages (lifecycle.conversation: threaded, --context or --resume); mur replay replays tasks that start afresh",
			l.String("task_id"), len(shas)-1)
	}
	body, err := blob(blobs, shas[0], path, n, "message_shas")
	if err != nil {
		return "", err
	}
	var m infer.Message
	if err := json.Unmarshal(body, &m); err != nil || m.Role != "user" {
		return "", refuse(diag.RunReplayRecords, path, n, "message_shas", "blob %s is not the task's user message", shas[0])
	}
	var text []string
	for _, b := range m.Content {
		if b.Type != "text" {
			return "", refuse(diag.RunReplayRecords, path, n, "message_shas", "the task's message holds a %s block; mur replay replays text tasks", b.Type)
		}
		text = append(text, b.Text)
	}
	return strings.Join(text, ""), nil
}

// blob reads blobs/<sha> and checks its bytes are the ones the hash names.
func blob(dir, sha, path string, n int, field string) ([]byte, error) {
	if len(sha) != 64 || strings.Trim(sha, "0123456789abcdef") != "" {
		return nil, refuse(diag.RunReplayRecords, path, n, field, "%q is not a SHA-256: the trace is not whole", sha)
	}
	b, err := os.ReadFile(filepath.Join(dir, sha))
	if errors.Is(err, os.ErrNotExist) {
		return nil, refuse(diag.RunReplayRecords, path, n, field, "blob %s is missing from %s: the session's records are not whole", sha, dir)
	}
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != sha {
		return nil, refuse(diag.RunReplayRecords, path, n, field, "blob %s does not hold the bytes its name hashes: it was changed after the session", sha)
	}
	return b, nil
}

// answer is the provider's answer that makes the driver return body, with
// the usage the provider reported.
func answer(l trace.Line, body []byte) (providertest.Step, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var resp infer.Response
	if err := dec.Decode(&resp); err != nil {
		return providertest.Step{}, err
	}
	st := providertest.Step{Text: resp.Text, Stop: resp.StopReason}
	for _, c := range resp.ToolCalls {
		st.Calls = append(st.Calls, providertest.Call{ID: c.ID, Name: c.Name, Input: string(c.Input)})
	}
	_, in := l.Fields["input_tokens_actual"]
	_, out := l.Fields["output_tokens_actual"]
	if !in && !out {
		st.NoUsage = true
	}
	st.InputTokens = int(l.Int("input_tokens_actual"))
	st.OutputTokens = int(l.Int("output_tokens_actual"))
	st.CachedTokens = int(l.Int("cached_tokens"))
	return st, nil
}

// failed is the answer of an attempt that failed: the provider's status
// and error text, or a connection closed without an answer.
func failed(l trace.Line) providertest.Step {
	status := int(l.Int("http_status"))
	if status == 0 {
		return providertest.Step{Drop: true}
	}
	return providertest.Step{Status: status, Body: providertest.ErrorBody(l.String("error"))}
}

// Endpoint is the gateway endpoint under which the capsule's driver finds
// the provider's API at base: driver-openai appends /chat/completions to
// its endpoint and driver-anthropic /v1/messages, and the loopback server
// answers both shapes at /v1/.
func Endpoint(driver, base string) (string, error) {
	switch driver {
	case "murmur/driver-openai":
		return base + "/v1", nil
	case "murmur/driver-anthropic":
		return base, nil
	}
	return "", fmt.Errorf("driver %s: mur replay serves recorded answers in the wire shapes of murmur/driver-openai and murmur/driver-anthropic only", driver)
}
