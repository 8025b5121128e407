package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"

	"github.com/murmur/mur/internal/agent"
)

// Wire shapes a Driver speaks.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
)

// Driver implements the inference contract in Go, as the driver components
// do in WASM: it decodes the request JSON with its own types (so the
// contract, not shared structs, is what is tested), calls the provider
// over HTTP and encodes the provider's answer as a tool-result.
type Driver struct {
	Wire     string // Anthropic or OpenAI
	Endpoint string
	APIKey   string
	Client   *http.Client
	// Stream asks the provider for a server-sent event stream, as the
	// real drivers do; OnText then receives each text delta (the host's
	// murmur:text/chunks).
	Stream bool
	OnText func(string)
}

// request is the contract's request as a driver reads it.
type request struct {
	Format         string          `json:"format"`
	Model          string          `json:"model"`
	System         string          `json:"system"`
	Messages       []message       `json:"messages"`
	Tools          []tool          `json:"tools"`
	MaxTokens      int64           `json:"max_tokens"`
	Config         json.RawMessage `json:"config"`
	ContinuationID string          `json:"continuation_id"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Run implements agent.Driver.
func (d *Driver) Run(ctx context.Context, data []byte) (agent.Result, error) {
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		return failed("the inference request is not JSON: "+err.Error(), nil), nil
	}
	if req.Format != agent.Format {
		return failed(fmt.Sprintf("unsupported inference format %q", req.Format), nil), nil
	}
	var body any
	path := "/v1/messages"
	switch d.Wire {
	case Anthropic:
		body = toAnthropic(req)
	case OpenAI:
		body, path = toOpenAI(req), "/v1/chat/completions"
	default:
		return agent.Result{}, fmt.Errorf("driver double: unknown wire %q", d.Wire)
	}
	if d.Stream {
		m := body.(map[string]any)
		m["stream"] = true
		if d.Wire == OpenAI {
			m["stream_options"] = map[string]any{"include_usage": true}
		}
	}
	b, _ := json.Marshal(body)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Endpoint+path, bytes.NewReader(b))
	if err != nil {
		return agent.Result{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if d.Wire == Anthropic {
		hreq.Header.Set("x-api-key", d.APIKey)
		hreq.Header.Set("anthropic-version", "2023-06-01")
	} else {
		hreq.Header.Set("Authorization", "Bearer "+d.APIKey)
	}
	client := d.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return connFailure(err), nil
	}
	defer resp.Body.Close()
	if d.Stream && resp.StatusCode/100 == 2 {
		var out response
		var meta [][2]string
		if d.Wire == Anthropic {
			out, meta, err = d.readAnthropicStream(resp.Body)
		} else {
			out, meta, err = d.readOpenAIStream(resp.Body)
		}
		if err != nil {
			// The provider answered 200 and the stream then broke: only
			// the driver knows this, so it says transient itself.
			return failed(err.Error(), [][2]string{{agent.MetaTransient, "true"}}), nil
		}
		data, _ := json.Marshal(out)
		return agent.Result{Status: agent.StatusPassed, Data: string(data), Metadata: meta}, nil
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		// The response was incomplete.
		return failed("reading the response: "+err.Error(), [][2]string{{agent.MetaFailure, agent.FailureConnectionBroken}}), nil
	}
	if resp.StatusCode/100 != 2 {
		meta := [][2]string{{agent.MetaHTTPStatus, strconv.Itoa(resp.StatusCode)}}
		if resp.StatusCode == http.StatusUnauthorized {
			meta = append(meta, [2]string{agent.MetaFailure, agent.FailureCredential})
		}
		for _, h := range []string{agent.MetaRetryAfterMs, agent.MetaRetryAfter} {
			if v := resp.Header.Get(h); v != "" {
				meta = append(meta, [2]string{h, v})
			}
		}
		return failed(errorMessage(raw), meta), nil
	}
	var out response
	var meta [][2]string
	if d.Wire == Anthropic {
		out, meta, err = fromAnthropic(raw)
	} else {
		out, meta, err = fromOpenAI(raw)
	}
	if err != nil {
		return failed("the provider's response is malformed: "+err.Error(), [][2]string{{agent.MetaTransient, "false"}}), nil
	}
	data, _ = json.Marshal(out)
	return agent.Result{Status: agent.StatusPassed, Data: string(data), Metadata: meta}, nil
}

func failed(msg string, meta [][2]string) agent.Result {
	return agent.Result{Status: agent.StatusFailed, Summary: msg, Metadata: meta}
}

// connFailure sorts a transport error: a refused connection or a name or
// TLS failure never reached the provider; anything else broke mid-call.
func connFailure(err error) agent.Result {
	kind := agent.FailureConnectionBroken
	var dnsErr *net.DNSError
	var opErr *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dnsErr) || (errors.As(err, &opErr) && opErr.Op == "dial") {
		kind = agent.FailureConnection
	}
	return failed(err.Error(), [][2]string{{agent.MetaFailure, kind}})
}

func errorMessage(raw []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	if len(raw) > 200 {
		raw = raw[:200]
	}
	return string(raw)
}

// response is the contract's response.
type response struct {
	Text       string     `json:"text"`
	ToolCalls  []toolCall `json:"tool_calls"`
	StopReason string     `json:"stop_reason"`
}

type toolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

func toAnthropic(r request) map[string]any {
	msgs := make([]map[string]any, 0, len(r.Messages))
	for _, m := range r.Messages {
		var content []map[string]any
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				if b.Text != "" {
					content = append(content, map[string]any{"type": "text", "text": b.Text})
				}
			case "tool_use":
				content = append(content, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": b.Input})
			case "tool_result":
				content = append(content, map[string]any{"type": "tool_result", "tool_use_id": b.ToolUseID, "content": b.Text, "is_error": b.IsError})
			}
		}
		msgs = append(msgs, map[string]any{"role": m.Role, "content": content})
	}
	tools := make([]map[string]any, 0, len(r.Tools))
	for _, t := range r.Tools {
		tools = append(tools, map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.InputSchema})
	}
	body := map[string]any{"model": r.Model, "max_tokens": r.MaxTokens, "messages": msgs}
	if len(tools) > 0 {
		body["tools"] = tools
	}
	if r.System != "" {
		body["system"] = r.System
	}
	return body
}

func fromAnthropic(raw []byte) (response, [][2]string, error) {
	var m struct {
		Content []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      *struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
			CacheRead    int `json:"cache_read_input_tokens"`
			CacheWrite   int `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return response{}, nil, err
	}
	out := response{StopReason: m.StopReason, ToolCalls: []toolCall{}}
	if out.StopReason == "pause_turn" {
		out.StopReason = "end_turn"
	}
	for _, c := range m.Content {
		switch c.Type {
		case "text":
			out.Text += c.Text
		case "tool_use":
			out.ToolCalls = append(out.ToolCalls, toolCall{ID: c.ID, Name: c.Name, Input: c.Input})
		}
	}
	var meta [][2]string
	if m.Usage != nil {
		meta = append(meta,
			[2]string{agent.MetaInputTokens, strconv.Itoa(m.Usage.InputTokens)},
			[2]string{agent.MetaOutputTokens, strconv.Itoa(m.Usage.OutputTokens)},
			[2]string{agent.MetaCachedTokens, strconv.Itoa(m.Usage.CacheRead)},
			[2]string{agent.MetaCacheWriteTokens, strconv.Itoa(m.Usage.CacheWrite)})
	}
	return out, meta, nil
}

func toOpenAI(r request) map[string]any {
	var msgs []map[string]any
	if r.System != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": r.System})
	}
	for _, m := range r.Messages {
		var text string
		var calls []map[string]any
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				text += b.Text
			case "tool_use":
				calls = append(calls, map[string]any{"id": b.ID, "type": "function", "function": map[string]any{"name": b.Name, "arguments": string(b.Input)}})
			case "tool_result":
				msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": b.ToolUseID, "content": b.Text})
			}
		}
		if text == "" && calls == nil {
			continue
		}
		msg := map[string]any{"role": m.Role, "content": text}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		msgs = append(msgs, msg)
	}
	tools := make([]map[string]any, 0, len(r.Tools))
	for _, t := range r.Tools {
		tools = append(tools, map[string]any{"type": "function", "function": map[string]any{"name": t.Name, "description": t.Description, "parameters": t.InputSchema}})
	}
	body := map[string]any{"model": r.Model, "max_tokens": r.MaxTokens, "messages": msgs}
	if len(tools) > 0 {
		body["tools"] = tools
	}
	return body
}

func fromOpenAI(raw []byte) (response, [][2]string, error) {
	var m struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
			Details    struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return response{}, nil, err
	}
	if len(m.Choices) == 0 {
		return response{}, nil, errors.New("no choices")
	}
	c := m.Choices[0]
	out := response{ToolCalls: []toolCall{}}
	if c.Message.Content != nil {
		out.Text = *c.Message.Content
	}
	for _, tc := range c.Message.ToolCalls {
		in := json.RawMessage(tc.Function.Arguments)
		if !json.Valid(in) {
			in = json.RawMessage(`{}`)
		}
		out.ToolCalls = append(out.ToolCalls, toolCall{ID: tc.ID, Name: tc.Function.Name, Input: in})
	}
	out.StopReason = openAIStop(c.FinishReason)
	var meta [][2]string
	if m.Usage != nil {
		// OpenAI's prompt_tokens includes the cached part; the contract
		// reports them apart, as the charge adds them back.
		meta = append(meta,
			[2]string{agent.MetaInputTokens, strconv.Itoa(m.Usage.Prompt - m.Usage.Details.Cached)},
			[2]string{agent.MetaOutputTokens, strconv.Itoa(m.Usage.Completion)},
			[2]string{agent.MetaCachedTokens, strconv.Itoa(m.Usage.Details.Cached)})
	}
	return out, meta, nil
}
