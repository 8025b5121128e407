// Package infer is the shared body of the inference driver components
// murmur/driver-anthropic and murmur/driver-openai: it reads the runtime's
// request (docs/inference-format.md), translates it to the provider's wire
// shape, calls the provider through the credential gateway, streams text
// deltas to the host as they arrive, and answers with the contract's
// response or a failure whose metadata lets the runtime classify it.
//
// The package sends through a wasihttp.SendFunc rather than net/http:
// net/http's package init alone (default transport, HTTP/2, crypto/tls)
// would add megabytes to each driver component and to the capsule's
// resident memory. Tests send through a host *http.Client
// (nethttp.FromClient) against in-process and loopback servers; Run
// wires the components to wasihttp.Send and murmur:text/chunks.
package infer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp"
)

// The contract's wire types and names (docs/inference-format.md) are
// defined here once: the driver components decode them, and the runtime
// (internal/agent, by type alias) encodes them, so the two cannot drift.

// Format names the request format version; a driver refuses any other.
const Format = "murmur.inference/v1"

// Roles of a message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Block types.
const (
	BlockText       = "text"
	BlockToolUse    = "tool_use"
	BlockToolResult = "tool_result"
	BlockImage      = "image"
)

// Stop reasons, normalised by every driver.
const (
	StopEndTurn      = "end_turn"
	StopToolUse      = "tool_use"
	StopMaxTokens    = "max_tokens"
	StopStopSequence = "stop_sequence"
	StopRefusal      = "refusal"
)

// Reserved metadata keys of a driver's tool-result (spec 000 and
// docs/inference-format.md).
const (
	MetaContinuationID   = "continuation_id"
	MetaStateEffect      = "state_effect"
	MetaResourceID       = "resource_id"
	MetaInputTokens      = "input_tokens"
	MetaOutputTokens     = "output_tokens"
	MetaCachedTokens     = "cached_tokens"
	MetaCacheWriteTokens = "cache_write_tokens"
	MetaTransient        = "transient"
	MetaHTTPStatus       = "http_status"
	MetaRetryAfterMs     = "retry-after-ms"
	MetaRetryAfter       = "retry-after"
	MetaFailure          = "failure"
)

// Failure kinds a driver reports in the "failure" metadata key.
const (
	FailureCredential       = "credential_rejected"
	FailureConnectionBroken = "connection_broken"
	FailureConnection       = "connection_failed"
)

// Request is the JSON in tool-input.data of a driver call. Empty optional
// fields are omitted so the runtime sends only what it means.
type Request struct {
	Format    string          `json:"format"`
	Model     string          `json:"model"`
	System    string          `json:"system,omitempty"`
	Messages  []Message       `json:"messages"`
	Tools     []ToolDef       `json:"tools"`
	MaxTokens int64           `json:"max_tokens"`
	Config    json.RawMessage `json:"config,omitempty"`
	// ContinuationID is set when the driver holds the conversation: then
	// Messages holds only what was appended since it last acknowledged.
	ContinuationID string `json:"continuation_id,omitempty"`
	ContextID      string `json:"context_id,omitempty"`
}

// Message is one conversation message.
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// Block is one content block. A text block uses Text; a tool_use block ID,
// Name and Input; a tool_result block ToolUseID, Text and IsError; an
// image block MediaType and Data (base64 in the JSON), with ToolUseID
// naming the tool call that returned it, or none for an image the user's
// message carried.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	MediaType string          `json:"media_type,omitempty"`
	Data      []byte          `json:"data,omitempty"`
}

// imageTypes are the media types an image block may carry: the ones
// both providers read.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// checkImage refuses an image block a provider would refuse less clearly.
func checkImage(b Block) error {
	if !imageTypes[b.MediaType] {
		return fmt.Errorf("image block media_type %q is not image/png, image/jpeg, image/gif or image/webp", b.MediaType)
	}
	if len(b.Data) == 0 {
		return errors.New("image block has no data")
	}
	return nil
}

// ToolDef is one entry of the tool array the driver is handed.
type ToolDef struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	ProviderTool json.RawMessage `json:"provider_tool,omitempty"`
}

// Response is the JSON in tool-result.data of a passed driver call.
type Response struct {
	Text       string     `json:"text"`
	ToolCalls  []ToolCall `json:"tool_calls"`
	StopReason string     `json:"stop_reason"`
}

// ToolCall is one tool call in a response.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Config is inference.driver.config as both drivers read it. Keys a
// driver does not know are ignored: the block is the operator's, and the
// runtime reads some of its own from it.
type Config struct {
	// Stream asks the provider for server-sent events (default true);
	// false suits a compatible server without streaming.
	Stream *bool `json:"stream"`
	// Continuation opts in to spec 000's stateful continuation (default
	// false): the driver keeps the conversation in its instance and the
	// runtime sends only what was appended.
	Continuation  bool     `json:"continuation"`
	Temperature   *float64 `json:"temperature"`
	TopP          *float64 `json:"top_p"`
	StopSequences []string `json:"stop_sequences"`
	// MaxTokensField names the OpenAI request field the output cap goes
	// in: max_completion_tokens (default) or max_tokens for servers that
	// predate it.
	MaxTokensField string `json:"max_tokens_field"`
}

func (c Config) stream() bool { return c.Stream == nil || *c.Stream }

// Env is what a driver call is given by its component.
type Env struct {
	// Endpoint is the gateway address (MURMUR_INFERENCE_ENDPOINT, else
	// MURMUR_GATEWAY_ENDPOINT), without a trailing slash.
	Endpoint string
	// Model is MURMUR_INFERENCE_MODEL, used when the request names none.
	Model string
	// ArtifactConfig is MURMUR_ARTIFACT_CONFIG: the driver's own entry's
	// config block as compact JSON; "" when absent.
	ArtifactConfig string
	// Send sends the provider request: wasihttp.Send in the component,
	// a host client (nethttp.FromClient) in tests.
	Send wasihttp.SendFunc
	// Emit hands a text delta to murmur:text/chunks; nil drops deltas.
	Emit func(string) error
}

// EnvFrom builds an Env from a getenv function.
func EnvFrom(getenv func(string) string, send wasihttp.SendFunc, emit func(string) error) Env {
	ep := getenv("MURMUR_INFERENCE_ENDPOINT")
	if ep == "" {
		ep = getenv("MURMUR_GATEWAY_ENDPOINT")
	}
	return Env{
		Endpoint:       strings.TrimRight(ep, "/"),
		Model:          getenv("MURMUR_INFERENCE_MODEL"),
		ArtifactConfig: getenv("MURMUR_ARTIFACT_CONFIG"),
		Send:           send,
		Emit:           emit,
	}
}

// Provider is one wire shape: how a request is sent and its answer read.
type Provider interface {
	// Name is the driver's name, for messages.
	Name() string
	// NewRequest builds the provider HTTP request for req.
	NewRequest(env Env, req Request, cfg Config, stream bool) (*wasihttp.Request, error)
	// Decode reads a complete (non-streamed) 2xx body.
	Decode(body []byte) (Response, [][2]string, error)
	// DecodeStream reads an event stream, handing each text delta to
	// emit as it arrives.
	DecodeStream(body io.Reader, emit func(string)) (Response, [][2]string, error)
	// Transient reports whether an error body with this status is worth
	// retrying beyond what the status says (Anthropic's overloaded_error).
	Transient(status int, body []byte) bool
}

// errMalformed marks a provider answer the driver cannot read.
var errMalformed = errors.New("malformed provider response")

// errStreamBroken marks an event stream that ended before its last event.
var errStreamBroken = errors.New("the provider's event stream broke before it finished")

// streamError is an error event inside a 200 stream (Anthropic's
// overloaded_error, an OpenAI-compatible server's error chunk).
type streamError struct {
	kind      string
	msg       string
	transient bool
}

func (e *streamError) Error() string {
	if e.kind == "" {
		return e.msg
	}
	return e.kind + ": " + e.msg
}

// Serve answers one driver call: the request in in's data, the answer as
// the tool-result.
func Serve(ctx context.Context, p Provider, conv *Conversations, env Env, in tool.Input) tool.Result {
	var req Request
	if err := json.Unmarshal([]byte(in.Text()), &req); err != nil {
		return failed(fmt.Sprintf("%s: the inference request is not JSON: %v", p.Name(), err), false)
	}
	if req.Format != Format {
		return failed(fmt.Sprintf("%s: unsupported inference format %q; this driver speaks %s", p.Name(), req.Format, Format), false)
	}
	var cfg Config
	if len(req.Config) > 0 && string(req.Config) != "null" {
		if err := json.Unmarshal(req.Config, &cfg); err != nil {
			return failed(fmt.Sprintf("%s: inference.driver.config: %v", p.Name(), err), false)
		}
	}
	if req.Model == "" {
		req.Model = env.Model
	}
	if env.Endpoint == "" {
		return failed(p.Name()+": MURMUR_INFERENCE_ENDPOINT is not set: declare a gateway: block on the driver's artifacts: entry", false)
	}
	if env.Send == nil {
		return failed(p.Name()+": the driver has no way to send a request (Env.Send is nil)", false)
	}

	// With continuation, the runtime sends only what was appended since
	// the id this instance handed out; the instance holds the rest.
	full := req.Messages
	if req.ContinuationID != "" {
		prev, ok := conv.Get(req.ContinuationID, req.ContextID)
		if !ok {
			return failed(fmt.Sprintf("%s: continuation_id %q is not held by this driver instance; resend the full conversation", p.Name(), req.ContinuationID), false)
		}
		full = append(append([]Message(nil), prev...), req.Messages...)
	}
	req.Messages = full

	stream := cfg.stream()
	hreq, err := p.NewRequest(env, req, cfg, stream)
	if err != nil {
		return failed(fmt.Sprintf("%s: building the provider request: %v", p.Name(), err), false)
	}
	resp, err := env.Send(ctx, hreq)
	if err != nil {
		return connFailure(p.Name(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return httpFailure(p, resp)
	}

	var out Response
	var meta [][2]string
	if stream && isEventStream(resp.Header.Get("content-type")) {
		out, meta, err = p.DecodeStream(resp.Body, func(s string) {
			if env.Emit != nil && s != "" {
				// A closed stream only means nobody follows the call; the
				// turn still completes.
				_ = env.Emit(s)
			}
		})
	} else {
		var body []byte
		body, err = readAll(resp.Body)
		if err != nil {
			return withMeta(failed(fmt.Sprintf("%s: reading the provider's response: %v", p.Name(), err), true), MetaFailure, FailureConnectionBroken)
		}
		out, meta, err = p.Decode(body)
		if err == nil && env.Emit != nil && out.Text != "" {
			_ = env.Emit(out.Text)
		}
	}
	if err != nil {
		var se *streamError
		switch {
		case errors.As(err, &se):
			return failed(p.Name()+": "+se.Error(), se.transient)
		case errors.Is(err, errMalformed):
			return failed(fmt.Sprintf("%s: %v", p.Name(), err), false)
		default:
			// The provider answered 200 and the stream then broke: only
			// the driver can tell, so it says transient itself. It is not
			// connection_broken, which spec 004 keeps for a connection
			// that broke before a response arrived and charges nothing
			// for; an answer that had begun is charged.
			return failed(fmt.Sprintf("%s: %v", p.Name(), err), true)
		}
	}
	if out.ToolCalls == nil {
		out.ToolCalls = []ToolCall{}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return failed(fmt.Sprintf("%s: encoding the response: %v", p.Name(), err), false)
	}
	r := tool.Passed(string(data))
	if cfg.Continuation {
		// The history this instance holds is the runtime's: a turn cut at
		// the cap keeps its text only, its calls dropped unrun, so none
		// stands unanswered in the next request (spec 004, When a turn
		// hits the cap).
		held := out
		if held.StopReason == StopMaxTokens {
			held.ToolCalls = nil
		}
		id := conv.Put(req.ContextID, append(full, assistantMessage(held)))
		r = r.With(MetaContinuationID, id)
	}
	for _, kv := range meta {
		r = r.With(kv[0], kv[1])
	}
	return r
}

// assistantMessage is the model's answer as the next turn's history holds it.
func assistantMessage(r Response) Message {
	m := Message{Role: RoleAssistant}
	if r.Text != "" {
		m.Content = append(m.Content, Block{Type: BlockText, Text: r.Text})
	}
	for _, c := range r.ToolCalls {
		m.Content = append(m.Content, Block{Type: BlockToolUse, ID: c.ID, Name: c.Name, Input: c.Input})
	}
	return m
}

// postJSON builds a provider POST of body as JSON, asking for an event
// stream when stream is set.
func postJSON(url string, body any, stream bool) (*wasihttp.Request, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	hreq := &wasihttp.Request{Method: "POST", URL: url, Header: wasihttp.Header{{"content-type", "application/json"}}, Body: bytes.NewReader(b)}
	if stream {
		hreq.Header = append(hreq.Header, [2]string{"accept", "text/event-stream"})
	}
	return hreq, nil
}

func isEventStream(ct string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "text/event-stream")
}

func failed(msg string, transient bool) tool.Result {
	return tool.Failed(msg).With(MetaTransient, fmt.Sprint(transient))
}

func withMeta(r tool.Result, k, v string) tool.Result { return r.With(k, v) }
