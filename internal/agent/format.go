// Package agent is the agent loop under transport: http: it builds each
// inference request, sends it through a Driver, dispatches the tool calls
// the model makes through one Tool path, and enforces every limit of a
// task and a session — turn cap, output cap, spend ceilings, retries,
// keep_working, done_check and the deadline — writing each step to the
// session's event stream (and so to trace.jsonl).
//
// The JSON the runtime hands a driver, and the JSON it expects back, is the
// contract in docs/inference-format.md; the types in this file are it.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

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

// Message is one conversation message.
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// Block is one content block. A text block uses Text; a tool_use block ID,
// Name and Input; a tool_result block ToolUseID, Text and IsError.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// ToolDef is one entry of the tool array the driver is handed.
type ToolDef struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	ProviderTool json.RawMessage `json:"provider_tool,omitempty"`
	// Kind is where the tool comes from (tool, skill, shell, native,
	// runtime); MURMUR.md groups by it. It never reaches the driver.
	Kind string `json:"-"`
}

// Request is the JSON in tool-input.data of a driver call.
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

// ToolCall is one tool call in a response.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Response is the JSON in tool-result.data of a passed driver call.
type Response struct {
	Text       string     `json:"text"`
	ToolCalls  []ToolCall `json:"tool_calls"`
	StopReason string     `json:"stop_reason"`
}

// ErrResponse means a driver's passed result is not a valid response.
var ErrResponse = errors.New("malformed driver response")

// ParseResponse decodes and checks a driver response.
func ParseResponse(data []byte) (Response, error) {
	var r Response
	if err := json.Unmarshal(data, &r); err != nil {
		return Response{}, fmt.Errorf("%w: %w", ErrResponse, err)
	}
	switch r.StopReason {
	case StopEndTurn, StopToolUse, StopMaxTokens, StopStopSequence, StopRefusal:
	default:
		return Response{}, fmt.Errorf("%w: stop_reason %q is not one of end_turn, tool_use, max_tokens, stop_sequence, refusal", ErrResponse, r.StopReason)
	}
	for i, c := range r.ToolCalls {
		if c.ID == "" || c.Name == "" {
			return Response{}, fmt.Errorf("%w: tool_calls[%d] needs an id and a name", ErrResponse, i)
		}
		if len(c.Input) == 0 {
			r.ToolCalls[i].Input = json.RawMessage(`{}`)
		} else if !json.Valid(c.Input) {
			return Response{}, fmt.Errorf("%w: tool_calls[%d].input is not JSON", ErrResponse, i)
		}
	}
	return r, nil
}

// Status is murmur:tool/run's status.
type Status string

const (
	StatusPassed Status = "passed"
	StatusFailed Status = "failed"
	StatusError  Status = "error"
)

// Result is murmur:tool/run's tool-result, as tools and drivers return it.
type Result struct {
	Status    Status
	Summary   string
	Data      string
	DataPath  string
	Truncated bool
	Metadata  [][2]string
}

// Meta returns the first value of metadata key k, as spec 000 reads
// resource_id when a list carries it twice.
func (r Result) Meta(k string) (string, bool) {
	for _, kv := range r.Metadata {
		if kv[0] == k {
			return kv[1], true
		}
	}
	return "", false
}

// metaInt returns key k as an integer, or -1 when absent or not one.
func (r Result) metaInt(k string) int64 {
	v, ok := r.Meta(k)
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// Driver is one inference call: murmur:tool/run on a driver component
// with the Request JSON as tool-input.data. An error is a failure to
// dispatch (the component trapped or could not be reached), not a
// provider's answer, which comes back as a failed Result.
type Driver interface {
	Run(ctx context.Context, data []byte) (Result, error)
}

// DriverFunc adapts a function to Driver.
type DriverFunc func(ctx context.Context, data []byte) (Result, error)

// Run calls f.
func (f DriverFunc) Run(ctx context.Context, data []byte) (Result, error) { return f(ctx, data) }
