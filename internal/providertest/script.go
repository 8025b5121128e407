package providertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// ScriptStep is one Step as a JSON script file spells it, the format
// tools/providerd reads and the CLI scripts start the double from:
//
//	{"text": "...", "calls": [{"id": "c1", "name": "tool", "input": "{...}"}],
//	 "stop": "max_tokens", "input_tokens": 10, "output_tokens": 5}
//	{"status": 429, "body": "...", "header": {"retry-after": "1"}}
//	{"drop": true}            the connection closes before any answer
//	{"text": "...", "break_after": 3}   a stream cut after 3 events
type ScriptStep struct {
	Text         string            `json:"text"`
	Calls        []ScriptCall      `json:"calls"`
	Stop         string            `json:"stop"`
	InputTokens  int               `json:"input_tokens"`
	OutputTokens int               `json:"output_tokens"`
	CachedTokens int               `json:"cached_tokens"`
	NoUsage      bool              `json:"no_usage"`
	Status       int               `json:"status"`
	Body         string            `json:"body"`
	Header       map[string]string `json:"header"`
	Drop         bool              `json:"drop"`
	DelayMS      int               `json:"delay_ms"`
	BreakAfter   int               `json:"break_after"`
}

// ScriptCall is a tool call of a ScriptStep.
type ScriptCall struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Input string `json:"input"`
	// Namespace is a Responses API function call's namespace (a tool of an
	// MCP server, as Codex offers it); the other wire shapes ignore it.
	Namespace string `json:"namespace"`
}

// ParseScript reads a JSON array of ScriptSteps. Unknown keys and
// trailing data are refused, so a misspelt field fails the test that
// wrote it rather than being ignored.
func ParseScript(b []byte) ([]Step, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var raw []ScriptStep
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("provider script: %w", err)
	}
	// Anything after the array is a script cut and pasted wrong, not
	// something to drop unread.
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("provider script: data after the array of steps")
	}
	steps := make([]Step, len(raw))
	for i, s := range raw {
		st := Step{Text: s.Text, Stop: s.Stop, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
			CachedTokens: s.CachedTokens, NoUsage: s.NoUsage, Status: s.Status, Body: s.Body, Header: s.Header,
			Drop: s.Drop, Delay: time.Duration(s.DelayMS) * time.Millisecond, BreakAfter: s.BreakAfter}
		for _, c := range s.Calls {
			st.Calls = append(st.Calls, Call(c))
		}
		steps[i] = st
	}
	return steps, nil
}

// Serve serves script on a free 127.0.0.1 port until Close; it is Start
// for callers without a testing.TB (a testscript command, a tool).
func Serve(script ...Step) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), script: script, ln: ln}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops a server Serve started, cutting any request in flight.
func (s *Server) Close() error {
	return s.srv.Close()
}
