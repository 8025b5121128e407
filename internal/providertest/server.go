// Package providertest holds doubles for model providers: a scripted HTTP
// server on loopback that answers in the Anthropic Messages, OpenAI Chat
// Completions and OpenAI Responses wire shapes, and a Go driver that implements the runtime's
// inference contract (docs/inference-format.md) by speaking real HTTP to
// it. Tests drive the agent loop through both, so every turn crosses a
// real socket.
package providertest

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Call is a tool call a scripted reply makes.
type Call struct {
	ID    string
	Name  string
	Input string // JSON object
	// Namespace is a Responses API function call's namespace (a tool of an
	// MCP server, as Codex offers it); the other wire shapes ignore it.
	Namespace string
}

// Step is one scripted answer. A Step with Status set answers with that
// HTTP status and Body; one with Drop closes the connection without an
// answer; otherwise it is a completion.
type Step struct {
	Text  string
	Calls []Call
	// Stop is the normalised stop reason: end_turn (default, or tool_use
	// when Calls is set), max_tokens, stop_sequence, refusal. The server
	// writes each provider's own word for it.
	Stop string
	// Usage; NoUsage leaves it out of the response.
	InputTokens, OutputTokens, CachedTokens int
	NoUsage                                 bool

	Status int
	Body   string
	Header map[string]string

	Drop  bool
	Delay time.Duration
	// BreakAfter, on a streamed answer, closes the connection after that
	// many events: the stream breaks after the provider answered 200.
	BreakAfter int
}

// Request is one request the server received.
type Request struct {
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Server is a scripted provider on 127.0.0.1.
type Server struct {
	URL string

	mu       sync.Mutex
	script   []Step
	requests []Request
	srv      *http.Server
	ln       net.Listener
}

// Start serves script on a loopback port until the test ends.
func Start(t testing.TB, script ...Step) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), script: script, ln: ln}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// Push appends steps to the script.
func (s *Server) Push(steps ...Step) {
	s.mu.Lock()
	s.script = append(s.script, steps...)
	s.mu.Unlock()
}

// Requests returns every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining is the number of unanswered steps.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// ServeHTTP answers the next step of the script.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	json.Unmarshal(raw, &body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw})
	if len(s.script) == 0 {
		s.mu.Unlock()
		http.Error(w, `{"error":{"type":"script_exhausted","message":"the provider double has no more scripted steps"}}`, http.StatusInternalServerError)
		return
	}
	st := s.script[0]
	s.script = s.script[1:]
	s.mu.Unlock()

	if st.Delay > 0 {
		select {
		case <-time.After(st.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if st.Drop {
		hj, ok := w.(http.Hijacker)
		if ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	for k, v := range st.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if st.Status != 0 {
		w.WriteHeader(st.Status)
		io.WriteString(w, st.Body)
		return
	}
	if stream, _ := body["stream"].(bool); stream {
		var complete bool
		switch r.URL.Path {
		case "/v1/messages":
			complete = streamAnthropic(w, st, body)
		case "/v1/chat/completions":
			complete = streamOpenAI(w, st, body)
		case "/v1/responses":
			complete = streamResponses(w, st, body)
		}
		if !complete {
			// Cut the connection mid-stream, as a dying upstream does.
			panic(http.ErrAbortHandler)
		}
		return
	}
	var out any
	switch r.URL.Path {
	case "/v1/messages":
		out = anthropicReply(st, body)
	case "/v1/chat/completions":
		out = openAIReply(st, body)
	case "/v1/responses":
		out = responsesReply(st, body)
	default:
		http.Error(w, `{"error":{"message":"unknown path"}}`, http.StatusNotFound)
		return
	}
	json.NewEncoder(w).Encode(out)
}

func stopOf(st Step) string {
	switch {
	case st.Stop != "":
		return st.Stop
	case len(st.Calls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func anthropicReply(st Step, req map[string]any) map[string]any {
	var content []map[string]any
	if st.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": st.Text})
	}
	for _, c := range st.Calls {
		// A whole Messages answer carries input as a parsed object: an
		// input the script cut short (a call cut at the output cap, which
		// streams as unfinished JSON) goes as the empty object.
		in := orEmpty(c.Input)
		if !json.Valid([]byte(in)) {
			in = "{}"
		}
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(in)})
	}
	if content == nil {
		content = []map[string]any{}
	}
	m := map[string]any{
		"id": "msg_double", "type": "message", "role": "assistant", "model": req["model"],
		"content": content, "stop_reason": stopOf(st),
	}
	if !st.NoUsage {
		m["usage"] = map[string]any{"input_tokens": st.InputTokens, "output_tokens": st.OutputTokens, "cache_read_input_tokens": st.CachedTokens}
	}
	return m
}

func openAIReply(st Step, req map[string]any) map[string]any {
	finish := map[string]string{"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "stop_sequence": "stop", "refusal": "content_filter"}[stopOf(st)]
	msg := map[string]any{"role": "assistant", "content": nil}
	if st.Text != "" {
		msg["content"] = st.Text
	}
	var calls []map[string]any
	for _, c := range st.Calls {
		calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": orEmpty(c.Input)}})
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	m := map[string]any{
		"id": "chatcmpl-double", "object": "chat.completion", "model": req["model"],
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
	}
	if !st.NoUsage {
		m["usage"] = map[string]any{
			"prompt_tokens": st.InputTokens + st.CachedTokens, "completion_tokens": st.OutputTokens,
			"prompt_tokens_details": map[string]any{"cached_tokens": st.CachedTokens},
		}
	}
	return m
}

func orEmpty(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

// ErrorBody is a provider-shaped error body with message msg.
func ErrorBody(msg string) string {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}})
	return string(b)
}
