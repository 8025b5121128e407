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

	"github.com/murmur/mur/internal/images"
	"github.com/murmur/mur/internal/infer"
)

// The contract's names and wire types are defined once, in internal/infer,
// which the driver components compile; these aliases keep the loop's
// spelling.

// Format names the request format version; a driver refuses any other.
const Format = infer.Format

// Roles of a message.
const (
	RoleUser      = infer.RoleUser
	RoleAssistant = infer.RoleAssistant
)

// Block types.
const (
	BlockText       = infer.BlockText
	BlockToolUse    = infer.BlockToolUse
	BlockToolResult = infer.BlockToolResult
	BlockImage      = infer.BlockImage
)

// Stop reasons, normalised by every driver.
const (
	StopEndTurn      = infer.StopEndTurn
	StopToolUse      = infer.StopToolUse
	StopMaxTokens    = infer.StopMaxTokens
	StopStopSequence = infer.StopStopSequence
	StopRefusal      = infer.StopRefusal
)

// Reserved metadata keys of a driver's tool-result.
const (
	MetaContinuationID   = infer.MetaContinuationID
	MetaStateEffect      = infer.MetaStateEffect
	MetaResourceID       = infer.MetaResourceID
	MetaInputTokens      = infer.MetaInputTokens
	MetaOutputTokens     = infer.MetaOutputTokens
	MetaCachedTokens     = infer.MetaCachedTokens
	MetaCacheWriteTokens = infer.MetaCacheWriteTokens
	MetaTransient        = infer.MetaTransient
	MetaHTTPStatus       = infer.MetaHTTPStatus
	MetaRetryAfterMs     = infer.MetaRetryAfterMs
	MetaRetryAfter       = infer.MetaRetryAfter
	MetaFailure          = infer.MetaFailure
)

// Failure kinds a driver reports in the "failure" metadata key.
const (
	FailureCredential       = infer.FailureCredential
	FailureConnectionBroken = infer.FailureConnectionBroken
	FailureConnection       = infer.FailureConnection
)

type (
	// Message is one conversation message.
	Message = infer.Message
	// Block is one content block.
	Block = infer.Block
	// Request is the JSON in tool-input.data of a driver call. The loop
	// leaves Tools nil and splices in the session's tool array, marshalled
	// once (marshalRequest).
	Request = infer.Request
	// ToolCall is one tool call in a response.
	ToolCall = infer.ToolCall
	// Response is the JSON in tool-result.data of a passed driver call.
	Response = infer.Response
)

// ToolDef is one entry of the tool array the driver is handed: the
// contract's infer.ToolDef plus Kind, which is the runtime's own and never
// reaches the driver. It is not an alias because the contract type has no
// place for Kind; its JSON is infer.ToolDef's, which a test holds.
type ToolDef struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	ProviderTool json.RawMessage `json:"provider_tool,omitempty"`
	// Kind is where the tool comes from (tool, skill, shell, native,
	// runtime); MURMUR.md groups by it.
	Kind string `json:"-"`
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
	if r.StopReason == StopMaxTokens {
		// A capped turn's calls are dropped unrun (spec 004, When a turn
		// hits the cap); one the cap cut before its id or name arrived is
		// no reason to fail the task, and cannot be named in the note.
		kept := r.ToolCalls[:0]
		for _, c := range r.ToolCalls {
			if c.ID != "" && c.Name != "" {
				kept = append(kept, c)
			}
		}
		r.ToolCalls = kept
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
	// Images are the images the tool attached, after its text; Data
	// names each one too, for a transport that carries no image bytes.
	Images []images.Image
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
