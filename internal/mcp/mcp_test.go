package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/agent/wasmtool"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/wasm/cm"
)

// echoTools serves the component package's echo fixture, a real
// tool-world component, as the tool "echo" (input {"text": string},
// required). The session's own dispatch path is tested through mur mcp
// (cmd/mur/testdata/script/mcp_*.txtar); here the tools stand for it.
type echoTools struct {
	tool agent.Tool
	mu   sync.Mutex
	// calls are the calls made, in order; overlap counts calls that ran
	// while another did.
	calls   []agent.ToolCall
	running int
	overlap int
	// hold keeps each call running this long.
	hold time.Duration
}

func newEchoTools(tb testing.TB) *echoTools {
	tb.Helper()
	rt, err := component.New(cm.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rt.Close() })
	src, err := os.ReadFile("../component/testdata/echo-tool.wat")
	if err != nil {
		tb.Fatal(err)
	}
	c, err := rt.CompileText(string(src))
	if err != nil {
		tb.Fatal(err)
	}
	inst, err := rt.Instantiate(context.Background(), c, component.Options{Name: "test/echo"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { inst.Close() })
	run, err := inst.Tool()
	if err != nil {
		tb.Fatal(err)
	}
	return &echoTools{tool: wasmtool.Tool{R: run, D: agent.ToolDef{Name: "echo", Description: "Echo its input.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}}}
}

func (e *echoTools) ToolDefs() []agent.ToolDef { return []agent.ToolDef{e.tool.Def()} }

func (e *echoTools) CallTool(ctx context.Context, c agent.ToolCall) (string, bool) {
	e.mu.Lock()
	e.calls = append(e.calls, c)
	if e.running > 0 {
		e.overlap++
	}
	e.running++
	e.mu.Unlock()
	defer func() { e.mu.Lock(); e.running--; e.mu.Unlock() }()
	if e.hold > 0 {
		// Widen the window an overlapping call would fall into.
		time.Sleep(e.hold)
	}
	if c.Name != "echo" {
		return c.Name + ": no such tool", true
	}
	if len(agent.MissingRequired(e.tool.Def().InputSchema, c.Input)) > 0 {
		return "missing", true
	}
	res, err := e.tool.Call(ctx, c.Input)
	if err != nil {
		return err.Error(), true
	}
	return res.Data, res.Status != agent.StatusPassed
}

// stdioConn is a raw client of ServeStdio: it writes lines and reads
// replies.
type stdioConn struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func serveStdio(t *testing.T, s *Server) *stdioConn {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioConn{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	c.out.Buffer(nil, 8<<20)
	go func() {
		c.done <- s.ServeStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

func (c *stdioConn) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// reply reads the next reply; a connection the server dropped ends it
// at once, one that stays silent after 30 s.
func (c *stdioConn) reply() map[string]any {
	c.t.Helper()
	got := make(chan bool, 1)
	go func() { got <- c.out.Scan() }()
	select {
	case ok := <-got:
		if !ok {
			c.t.Fatalf("no reply, the connection ended: %v", c.out.Err())
		}
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no reply in 30 s")
	}
	var m map[string]any
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("reply %q is not JSON: %v", c.out.Text(), err)
	}
	return m
}

// errorOf returns the reply's error code and message, failing when it
// has none.
func errorOf(t *testing.T, m map[string]any) (float64, string) {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("reply %v has no error", m)
	}
	return e["code"].(float64), e["message"].(string)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestStdioBadInput: malformed lines, a line over the limit, a message
// that is JSON but not JSON-RPC, an unknown tool and arguments that are
// not an object are each answered with their code, and the same
// connection then lists and calls tools as before.
func TestStdioBadInput(t *testing.T) {
	tools := newEchoTools(t)
	c := serveStdio(t, NewServer(tools, Options{MaxMessageBytes: 4096}))
	c.send(initialize)
	if r := c.reply(); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	cases := []struct {
		name, line string
		code       float64
		diag       string
		id         any
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":2,"method":`, codeParseError, "E-MCP-002", nil},
		{"not JSON-RPC", `{"hello":"world","id":3}`, codeInvalidRequest, "E-MCP-002", 3.0},
		{"wrong version", `{"jsonrpc":"1.0","id":"x","method":"tools/list"}`, codeInvalidRequest, "E-MCP-002", "x"},
		{"empty batch", `[]`, codeInvalidRequest, "E-MCP-002", nil},
		{"oversize", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("a", 5000) + `"}}}`, codeInvalidRequest, "E-MCP-003", nil},
		{"unknown tool", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nosuch","arguments":{}}}`, codeInvalidParams, "E-MCP-004", 5.0},
		{"arguments not an object", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":"text"}}`, codeInvalidParams, "E-MCP-005", 6.0},
	}
	for _, tc := range cases {
		c.send(tc.line)
		r := c.reply()
		code, msg := errorOf(t, r)
		if code != tc.code || !strings.HasPrefix(msg, tc.diag+": ") {
			t.Errorf("%s: error %v %q, want %v %s", tc.name, code, msg, tc.code, tc.diag)
		}
		if r["id"] != tc.id {
			t.Errorf("%s: id %v, want %v", tc.name, r["id"], tc.id)
		}
		if _, ok := r["id"]; !ok {
			t.Errorf("%s: reply has no id member (null when unknown)", tc.name)
		}
	}

	// Missing a required field: a tool result with isError and the code.
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	r := c.reply()
	res, _ := r["result"].(map[string]any)
	if res == nil || res["isError"] != true || res["_meta"].(map[string]any)[MetaCode] != "E-MCP-005" {
		t.Errorf("missing required: %v", r)
	}

	// The session is intact: the tool list and a good call.
	c.send(`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`)
	if r := c.reply(); !strings.Contains(fmt.Sprint(r["result"]), "echo") {
		t.Fatalf("tools/list after bad input: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
	r = c.reply()
	if got := fmt.Sprint(r["result"]); !strings.Contains(got, `still here`) || strings.Contains(got, "isError:true") {
		t.Fatalf("call after bad input: %v", r)
	}
	// The unknown tool reached the dispatch path (which records it); the
	// oversize and non-object calls did not.
	var names []string
	for _, c := range tools.calls {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "nosuch,echo,echo" {
		t.Errorf("calls dispatched: %s, want nosuch,echo,echo", got)
	}
	c.in.Close()
	if err := <-c.done; err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
}

// TestHTTPBadInput: no token, a wrong token, an oversize body and a
// malformed one are refused with their status and code; the SDK's client
// with the token then lists and calls.
func TestHTTPBadInput(t *testing.T) {
	s := NewServer(newEchoTools(t), Options{MaxMessageBytes: 4096})
	hs := httptest.NewServer(s.Handler("s3cret"))
	defer hs.Close()
	url := hs.URL + Path
	post := func(token, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	cases := []struct {
		name, token, body string
		status            int
		diag              string
	}{
		{"no token", "", initialize, 401, "E-MCP-001"},
		{"wrong token", "guess", initialize, 401, "E-MCP-001"},
		{"oversize", "s3cret", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`, 413, "E-MCP-003"},
		{"malformed", "s3cret", `{"jsonrpc":`, 400, "E-MCP-002"},
	}
	for _, tc := range cases {
		status, body := post(tc.token, tc.body)
		if status != tc.status || !strings.Contains(body, `"message":"`+tc.diag+": ") {
			t.Errorf("%s: %d %s, want %d and %s", tc.name, status, body, tc.status, tc.diag)
		}
	}

	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport("s3cret")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over http"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "over http") {
		t.Fatalf("call: %+v %v", res, err)
	}
}

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestLoopback: the loopback server listens on 127.0.0.1 with a fresh
// 64-hex-digit token, serves the SDK's client, runs concurrent calls one
// at a time, and refuses connections after Close.
func TestLoopback(t *testing.T) {
	tools := newEchoTools(t)
	tools.hold = 5 * time.Millisecond
	l, err := ServeLoopback(tools, Options{Name: "cap", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(l.URL, "http://127.0.0.1:") || !strings.HasSuffix(l.URL, Path) || len(l.Token) != 64 {
		t.Fatalf("URL %q token %q", l.URL, l.Token)
	}
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: l.URL, HTTPClient: &http.Client{Transport: bearerTransport(l.Token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ServerInfo; got.Name != "cap" || got.Version != "1" {
		t.Errorf("server info %+v", got)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprint(i)}})
			if err != nil || res.IsError {
				t.Errorf("call %d: %+v %v", i, res, err)
			}
		}()
	}
	wg.Wait()
	if tools.overlap != 0 || len(tools.calls) != 8 {
		t.Errorf("%d calls, %d overlapping; want 8, none", len(tools.calls), tools.overlap)
	}
	seen := map[string]bool{}
	for _, c := range tools.calls {
		seen[c.ID] = true
	}
	if len(seen) != 8 {
		t.Errorf("call ids not unique: %v", seen)
	}
	cs.Close()
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	if _, err := c.Post(l.URL, "application/json", strings.NewReader(initialize)); err == nil {
		t.Fatal("the server answered after Close")
	}
}
