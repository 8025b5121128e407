// Package mcp serves a capsule session's tools over the Model Context
// Protocol, with the official Go SDK (github.com/modelcontextprotocol/go-sdk):
// the loopback tool server a process-transport harness calls
// (ServeLoopback: streamable HTTP on 127.0.0.1 with a per-session bearer
// token), and mur mcp's stdio and HTTP fronts (Server.ServeStdio,
// Server.Handler).
//
// The server owns no tool: every tools/call goes to Tools.CallTool, which
// a capsule session implements with its one dispatch path (the same input
// check, grants, sandbox, limits and tool_call record as a call the model
// makes). What this package adds is the protocol's edge: each inbound
// message is admitted first (size, JSON-RPC shape), the token is checked
// on HTTP, and a call that names no tool or has arguments that are not an
// object is refused with a coded JSON-RPC error (diag E-MCP-00x) while the
// connection stays up.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/images"
)

// Tools is what the server serves: a session's tool list and its one
// dispatch path. capsule.Session implements it.
type Tools interface {
	// ToolDefs is the tool list, as the model is offered it.
	ToolDefs() []agent.ToolDef
	// CallTool runs one call through the session's dispatch path, which
	// records it, and returns what the model would read back and whether
	// the call failed; a name the session does not have is a failed call
	// (recorded as such).
	CallTool(ctx context.Context, call agent.ToolCall) (text string, isError bool)
}

// ImageTools is Tools whose calls also return the images a tool attached
// to its result; a Tools that implements it has them served as MCP image
// items. capsule.Session implements it.
type ImageTools interface {
	Tools
	CallToolImages(ctx context.Context, call agent.ToolCall) (text string, isError bool, imgs []images.Image)
}

// DefaultMaxMessageBytes bounds one inbound message, tool arguments
// included: far above any tool input a model writes, far below what would
// strain the session's memory.
const DefaultMaxMessageBytes = 1 << 20

// Options configure a Server.
type Options struct {
	// Name and Version are the server's implementation info (the capsule's
	// name and version); empty is "mur".
	Name, Version string
	// MaxMessageBytes bounds one inbound message; 0 is
	// DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Images are the context.images limits; the zero value is the spec's
	// defaults (a capsule that declares context.images is refused at
	// launch by this build, so the defaults are what every running
	// capsule has).
	Images images.Limits
}

// MetaCode is the _meta key of a tool result the server refused before
// the tool ran (missing required arguments): its diag code. The result's
// text is the refusal the model would read.
const MetaCode = "murmur/code"

// Server serves one session's tools to any number of MCP clients. Calls
// run one at a time, as the model's calls do, whichever client makes them.
type Server struct {
	tools   Tools
	defs    map[string]agent.ToolDef
	sdk     *sdk.Server
	limit   int
	images  images.Limits
	callSeq atomic.Int64

	mu     sync.Mutex // held while a call runs
	closed bool
}

// ErrClosed is a call's error after Close.
var ErrClosed = errors.New("the tool server is closed")

// NewServer builds the server for tools: one MCP tool per tool definition,
// offered with the definition's description and input schema.
func NewServer(tools Tools, o Options) *Server {
	if o.Name == "" {
		o.Name = "mur"
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.Images == (images.Limits{}) {
		o.Images, _ = images.Resolve(nil)
	}
	s := &Server{tools: tools, defs: map[string]agent.ToolDef{}, limit: o.MaxMessageBytes, images: o.Images}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: o.Name, Version: o.Version}, &sdk.ServerOptions{
		// Tools only: no logging, prompts or resources are offered.
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	for _, d := range tools.ToolDefs() {
		s.defs[d.Name] = d
		s.sdk.AddTool(&sdk.Tool{Name: d.Name, Description: d.Description, InputSchema: inputSchema(d.InputSchema)}, s.handle)
	}
	s.sdk.AddReceivingMiddleware(s.refuseCalls)
	return s
}

// inputSchema is a definition's schema as the SDK takes it. MCP requires
// an object schema at the root; a tool whose schema is not one (W-RUN-004
// at launch) is offered as taking any object, and its own checks decide.
func inputSchema(raw json.RawMessage) json.RawMessage {
	var root struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(raw, &root) != nil || root.Type != "object" {
		return json.RawMessage(`{"type":"object"}`)
	}
	return raw
}

// refuseCalls answers, before the SDK's own tools/call handling, a call
// that names no served tool or whose arguments are not a JSON object: a
// coded -32602 error. The unknown name still goes through the dispatch
// path, so the session's trace records the attempt.
func (s *Server) refuseCalls(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		name := call.Params.Name
		if _, known := s.defs[name]; !known {
			s.dispatch(ctx, name, json.RawMessage(`{}`))
			return nil, rpcError(codeInvalidParams, diag.MCPUnknownTool,
				fmt.Sprintf("no tool is named %q: this call did not run; tools/list names the tools this capsule serves", name))
		}
		if args := call.Params.Arguments; len(args) > 0 && string(args) != "null" && !isObject(args) {
			return nil, rpcError(codeInvalidParams, diag.MCPArguments,
				fmt.Sprintf("%s: arguments must be a JSON object: this call did not run; pass the fields of the tool's inputSchema as an object", name))
		}
		return next(ctx, method, req)
	}
}

// handle runs one tools/call through the session's dispatch path.
func (s *Server) handle(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	name, input := req.Params.Name, req.Params.Arguments
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage(`{}`)
	}
	text, isError, imgs, err := s.dispatch(ctx, name, input)
	if err != nil {
		return nil, err
	}
	out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isError}
	// Each image follows the text as an image item, under context.images,
	// max_per_turn counted per tool call; a refused one becomes a line
	// saying which and why.
	turn := images.NewTurn(s.images)
	for _, img := range imgs {
		if err := turn.Admit(img); err != nil {
			out.Content = append(out.Content, &sdk.TextContent{Text: err.Error()})
			continue
		}
		out.Content = append(out.Content, &sdk.ImageContent{Data: img.Data, MIMEType: img.MediaType})
	}
	if missing := agent.MissingRequired(s.defs[name].InputSchema, input); len(missing) > 0 {
		out.Meta = sdk.Meta{MetaCode: string(diag.MCPArguments)}
	}
	return out, nil
}

// dispatch makes one call, after the one before it has ended.
func (s *Server) dispatch(ctx context.Context, name string, input json.RawMessage) (text string, isError bool, imgs []images.Image, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", true, nil, ErrClosed
	}
	id := "mcp_" + strconv.FormatInt(s.callSeq.Add(1), 10)
	call := agent.ToolCall{ID: id, Name: name, Input: input}
	if it, ok := s.tools.(ImageTools); ok {
		text, isError, imgs = it.CallToolImages(ctx, call)
		return text, isError, imgs, nil
	}
	text, isError = s.tools.CallTool(ctx, call)
	return text, isError, nil, nil
}

// Close waits for the call in progress and refuses every later one, so
// the session can close under no running tool.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

func isObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}
