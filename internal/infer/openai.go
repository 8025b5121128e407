package infer

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/murmur/mur/sdk/go/driver"
	"github.com/murmur/mur/sdk/go/wasihttp"
)

// OpenAI speaks Chat Completions: POST {endpoint}/chat/completions, where
// the endpoint carries the API's version path (https://api.openai.com/v1,
// http://localhost:11434/v1 for Ollama, a vLLM server's /v1).
type OpenAI struct{}

// Name implements Provider.
func (OpenAI) Name() string { return "driver-openai" }

// NewRequest implements Provider.
func (OpenAI) NewRequest(env Env, req Request, cfg Config, stream bool) (*wasihttp.Request, error) {
	body, err := openAIBody(req, cfg, stream)
	if err != nil {
		return nil, err
	}
	return postJSON(env.Endpoint+"/chat/completions", body, stream)
}

func openAIBody(req Request, cfg Config, stream bool) (map[string]any, error) {
	msgs := make([]map[string]any, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": req.System})
	}
	for _, m := range req.Messages {
		var text strings.Builder
		var calls []map[string]any
		var results []map[string]any
		// parts are the message's text and images in order, its content
		// when it carries an image.
		var parts []map[string]any
		images := false
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				text.WriteString(b.Text)
				if b.Text != "" {
					parts = append(parts, map[string]any{"type": "text", "text": b.Text})
				}
			case BlockImage:
				if err := checkImage(b); err != nil {
					return nil, err
				}
				// A tool message carries text only, so a tool's image
				// follows in a user message, named by its call.
				if b.ToolUseID != "" {
					parts = append(parts, map[string]any{"type": "text", "text": "[image from tool call " + b.ToolUseID + "]"})
				}
				parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL(b)}})
				images = true
			case "tool_use":
				calls = append(calls, map[string]any{"id": b.ID, "type": "function",
					"function": map[string]any{"name": b.Name, "arguments": string(objectOrEmpty(b.Input))}})
			case "tool_result":
				// Chat Completions has no error flag on a tool message;
				// the text says it.
				content := b.Text
				if b.IsError && content == "" {
					content = "error"
				}
				results = append(results, map[string]any{"role": "tool", "tool_call_id": b.ToolUseID, "content": content})
			default:
				return nil, fmt.Errorf("message content block type %q is not text, tool_use, tool_result or image", b.Type)
			}
		}
		// Tool messages must directly follow the assistant message that
		// made the calls, so they go before any text of the same turn.
		msgs = append(msgs, results...)
		if images {
			msgs = append(msgs, map[string]any{"role": RoleUser, "content": parts})
			if calls == nil {
				continue
			}
			text.Reset()
		}
		if text.Len() == 0 && calls == nil {
			continue
		}
		msg := map[string]any{"role": m.Role}
		if text.Len() > 0 {
			msg["content"] = text.String()
		} else {
			msg["content"] = nil
		}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		msgs = append(msgs, msg)
	}
	tools := make([]map[string]any, 0, len(req.Tools))
	for _, t := range req.Tools {
		// Chat Completions defines no computer tool: a provider tool goes
		// as the function its input_schema describes.
		tools = append(tools, map[string]any{"type": "function", "function": map[string]any{
			"name": t.Name, "description": t.Description, "parameters": objectOrEmpty(t.InputSchema)}})
	}
	field := cfg.MaxTokensField
	switch field {
	case "":
		field = "max_completion_tokens"
	case "max_completion_tokens", "max_tokens":
	default:
		return nil, fmt.Errorf("inference.driver.config.max_tokens_field %q is not max_completion_tokens or max_tokens", field)
	}
	body := map[string]any{"model": req.Model, "messages": msgs, field: req.MaxTokens}
	if len(tools) > 0 {
		body["tools"] = tools
	}
	if cfg.Temperature != nil {
		body["temperature"] = *cfg.Temperature
	}
	if cfg.TopP != nil {
		body["top_p"] = *cfg.TopP
	}
	if len(cfg.StopSequences) > 0 {
		body["stop"] = cfg.StopSequences
	}
	if stream {
		body["stream"] = true
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	return body, nil
}

// dataURL is an image block as a data: URL, the form Chat Completions'
// image_url parts take inline bytes in.
func dataURL(b Block) string {
	return "data:" + b.MediaType + ";base64," + base64.StdEncoding.EncodeToString(b.Data)
}

// openAIStop normalises a finish_reason; a response with tool calls is
// tool_use whatever the server said (some compatible servers say stop).
func openAIStop(finish string, calls int) (string, error) {
	switch finish {
	case "length":
		return StopMaxTokens, nil
	case "content_filter":
		return StopRefusal, nil
	case "tool_calls", "function_call":
		return StopToolUse, nil
	case "stop", "", "eos":
		if calls > 0 {
			return StopToolUse, nil
		}
		return StopEndTurn, nil
	}
	return "", fmt.Errorf("%w: finish_reason %q", errMalformed, finish)
}

type openAIUsage struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Details    *struct {
		Cached int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// meta reports usage; prompt_tokens includes the cached part, which the
// contract reports apart.
func (u *openAIUsage) meta() [][2]string {
	if u == nil {
		return nil
	}
	cached := 0
	if u.Details != nil {
		cached = u.Details.Cached
	}
	return [][2]string{
		{MetaInputTokens, strconv.Itoa(max(u.Prompt-cached, 0))},
		{MetaOutputTokens, strconv.Itoa(u.Completion)},
		{MetaCachedTokens, strconv.Itoa(cached)},
	}
}

type openAIToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// toolInput reads a call's arguments: a JSON object as a string.
func toolInput(id, args string) (json.RawMessage, error) {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage(`{}`), nil
	}
	if !json.Valid([]byte(args)) {
		return nil, fmt.Errorf("%w: tool call %s arguments are not JSON", errMalformed, id)
	}
	return json.RawMessage(args), nil
}

// openAICall is one tool call of an answer whose normalised stop reason
// is stop; ok is false for a call a cut at the cap left without a name.
func openAICall(id, name, args, stop string) (ToolCall, bool, error) {
	in, err := toolInput(id, args)
	if stop == StopMaxTokens {
		c, ok := cutCall(ToolCall{ID: id, Name: name, Input: in}, err == nil)
		return c, ok, nil
	}
	if err != nil {
		return ToolCall{}, false, err
	}
	return ToolCall{ID: id, Name: name, Input: in}, true, nil
}

// Decode implements Provider.
func (OpenAI) Decode(body []byte) (Response, [][2]string, error) {
	var m struct {
		Choices []struct {
			Message struct {
				Content   *string          `json:"content"`
				Refusal   *string          `json:"refusal"`
				ToolCalls []openAIToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *openAIUsage `json:"usage"`
		Error *apiError    `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return Response{}, nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if m.Error != nil {
		return Response{}, nil, &streamError{kind: m.Error.Type, msg: m.Error.Message}
	}
	if len(m.Choices) == 0 {
		return Response{}, nil, fmt.Errorf("%w: no choices", errMalformed)
	}
	c := m.Choices[0]
	var out Response
	if c.Message.Content != nil {
		out.Text = *c.Message.Content
	}
	// The stop reason is read first: a cut at the cap can leave a call's
	// arguments unfinished, which is not a malformed answer.
	stop, err := openAIStop(c.FinishReason, len(c.Message.ToolCalls))
	if err != nil {
		return Response{}, nil, err
	}
	for _, tc := range c.Message.ToolCalls {
		call, ok, err := openAICall(tc.ID, tc.Function.Name, tc.Function.Arguments, stop)
		if err != nil {
			return Response{}, nil, err
		}
		if ok {
			out.ToolCalls = append(out.ToolCalls, call)
		}
	}
	if c.Message.Refusal != nil && *c.Message.Refusal != "" {
		if out.Text == "" {
			out.Text = *c.Message.Refusal
		}
		stop = StopRefusal
	}
	out.StopReason = stop
	return out, m.Usage.meta(), nil
}

// Transient implements Provider: Chat Completions says everything with
// the status.
func (OpenAI) Transient(int, []byte) bool { return false }

// DecodeStream implements Provider: chat.completion.chunk events, a final
// usage chunk (stream_options.include_usage) and data: [DONE].
func (OpenAI) DecodeStream(body io.Reader, emit func(string)) (Response, [][2]string, error) {
	type partial struct {
		id, name string
		args     strings.Builder
	}
	var calls []*partial
	var text, refusal strings.Builder
	var usage *openAIUsage
	finish := ""
	finished := false
	done := func() (Response, [][2]string, error) {
		out := Response{Text: text.String()}
		// The stop reason is read first: a cut at the cap can leave a
		// call's arguments unfinished, which is not a malformed answer.
		stop, err := openAIStop(finish, len(calls))
		if err != nil {
			return Response{}, nil, err
		}
		for i, p := range calls {
			if p.id == "" {
				// Some compatible servers leave ids out; the
				// contract needs one, unique within the response.
				p.id = "call_" + strconv.Itoa(i)
			}
			call, ok, err := openAICall(p.id, p.name, p.args.String(), stop)
			if err != nil {
				return Response{}, nil, err
			}
			if ok {
				out.ToolCalls = append(out.ToolCalls, call)
			}
		}
		if refusal.Len() > 0 {
			if out.Text == "" {
				out.Text = refusal.String()
			}
			stop = StopRefusal
		}
		out.StopReason = stop
		return out, usage.meta(), nil
	}
	for ev, err := range driver.Events(body) {
		if err != nil {
			return Response{}, nil, fmt.Errorf("%w: %w", errStreamBroken, err)
		}
		if strings.TrimSpace(ev.Data) == "[DONE]" {
			return done()
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content   *string          `json:"content"`
					Refusal   *string          `json:"refusal"`
					ToolCalls []openAIToolCall `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *openAIUsage `json:"usage"`
			Error *apiError    `json:"error"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &ch); err != nil {
			return Response{}, nil, fmt.Errorf("%w: chunk: %v", errMalformed, err)
		}
		if ch.Error != nil {
			// An error after a 200: the server gave up mid-answer.
			return Response{}, nil, &streamError{kind: ch.Error.Type, msg: ch.Error.Message, transient: true}
		}
		if ch.Usage != nil {
			usage = ch.Usage
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != nil && *c.Delta.Content != "" {
				text.WriteString(*c.Delta.Content)
				emit(*c.Delta.Content)
			}
			if c.Delta.Refusal != nil {
				refusal.WriteString(*c.Delta.Refusal)
			}
			for _, tc := range c.Delta.ToolCalls {
				if tc.Index < 0 || tc.Index > 1024 {
					return Response{}, nil, fmt.Errorf("%w: tool call index %d", errMalformed, tc.Index)
				}
				for len(calls) <= tc.Index {
					calls = append(calls, &partial{})
				}
				p := calls[tc.Index]
				if tc.ID != "" {
					p.id = tc.ID
				}
				if tc.Function.Name != "" {
					p.name = tc.Function.Name
				}
				p.args.WriteString(tc.Function.Arguments)
			}
			if c.FinishReason != nil && *c.FinishReason != "" {
				finish = *c.FinishReason
				finished = true
			}
		}
	}
	// Some compatible servers end the stream after the finish chunk
	// without [DONE]; without a finish the stream broke.
	if finished {
		return done()
	}
	return Response{}, nil, errStreamBroken
}
