// Package doorclient is the client side of a capsule's door as mur's own
// commands use it (mur ps, mur watch, mur stop): one A2A 1.0 JSON-RPC call,
// its reply, and the murmur.WatchSession stream printed as a person reads
// it. It stands apart from internal/door (the server) so what it parses of
// a door's answers, which mur does not control, is fuzzed in a small
// binary.
package doorclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Error is a JSON-RPC error the door answered.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("the door answered %d: %s", e.Code, e.Message) }

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// Request builds an A2A 1.0 JSON-RPC call.
func Request(ctx context.Context, url, token, method string, params any) (*http.Request, error) {
	if params == nil {
		params = map[string]any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(url, "/")+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req, nil
}

// Call makes one unary call and decodes its result into out.
func Call(ctx context.Context, url, token, method string, params, out any) error {
	req, err := Request(ctx, url, token, method, params)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return DecodeReply(resp, out)
}

func DecodeReply(resp *http.Response, out any) error {
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	var r reply
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("the door answered HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if r.Error != nil {
		return r.Error
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(r.Result, out)
}

// StateWord spells an A2A task state as spec 000 does: TASK_STATE_INPUT_REQUIRED
// is input-required.
func StateWord(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

// Follow copies a WatchSession SSE stream to w, one line per event,
// until the stream ends; an error envelope or an event mur cannot read
// ends it with an error.
func Follow(r io.Reader, w io.Writer, asJSON bool, now func() time.Time) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var r reply
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			return fmt.Errorf("the door sent an event that is not JSON-RPC: %w", err)
		}
		if r.Error != nil {
			return r.Error
		}
		if asJSON {
			var compact bytes.Buffer
			if err := json.Compact(&compact, r.Result); err != nil {
				return fmt.Errorf("the door sent an event without a result: %w", err)
			}
			fmt.Fprintf(w, "%s\n", compact.Bytes())
			continue
		}
		var sr a2a.StreamResponse
		if err := json.Unmarshal(r.Result, &sr); err != nil {
			return fmt.Errorf("the door sent an event mur cannot read: %w", err)
		}
		fmt.Fprintln(w, eventLine(now(), sr.Event))
	}
	if err := sc.Err(); err != nil && err != io.ErrUnexpectedEOF {
		return err
	}
	return nil
}

// eventLine is one event as a person reads it.
func eventLine(now time.Time, ev a2a.Event) string {
	stamp := now.Format("15:04:05")
	switch e := ev.(type) {
	case *a2a.Task:
		return fmt.Sprintf("%s task %s %s%s", stamp, e.ID, StateWord(e.Status.State), messageText(e.Status.Message))
	case *a2a.TaskStatusUpdateEvent:
		return fmt.Sprintf("%s task %s %s%s", stamp, e.TaskID, StateWord(e.Status.State), messageText(e.Status.Message))
	case *a2a.TaskArtifactUpdateEvent:
		text := ""
		if e.Artifact != nil {
			text = partsText(e.Artifact.Parts)
		}
		return fmt.Sprintf("%s task %s artifact: %s", stamp, e.TaskID, flatLine(text))
	case *a2a.Message:
		return fmt.Sprintf("%s message %s: %s", stamp, e.Role, flatLine(partsText(e.Parts)))
	}
	return fmt.Sprintf("%s event %T", stamp, ev)
}

func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	if s := partsText(m.Parts); s != "" {
		return ": " + flatLine(s)
	}
	return ""
}

func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

// flatLine keeps an event on one line: a model's newlines are shown as \n.
func flatLine(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }
