package infer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/murmur/mur/sdk/go/driver"
	"github.com/murmur/mur/sdk/go/wasihttp"
)

// AnthropicVersion is the Messages API version header the driver speaks.
const AnthropicVersion = "2023-06-01"

// computerBeta is the beta the computer-use tool type needs.
const computerBeta = "computer-use-2025-01-24"

// Anthropic speaks the Messages API: POST {endpoint}/v1/messages.
type Anthropic struct{}

// Name implements Provider.
func (Anthropic) Name() string { return "driver-anthropic" }

// artifactConfig is the driver's own artifacts[].config block
// (MURMUR_ARTIFACT_CONFIG): settings that belong to this provider alone.
type artifactConfig struct {
	// PromptCache is "enabled" to place cache_control breakpoints.
	PromptCache string `json:"prompt_cache"`
	// PromptCacheTTL is "5m" (the provider's default) or "1h".
	PromptCacheTTL string `json:"prompt_cache_ttl"`
}

func parseArtifactConfig(s string) (artifactConfig, error) {
	var ac artifactConfig
	if s == "" {
		return ac, nil
	}
	if err := json.Unmarshal([]byte(s), &ac); err != nil {
		return ac, fmt.Errorf("MURMUR_ARTIFACT_CONFIG: %w", err)
	}
	switch ac.PromptCache {
	case "", "enabled", "disabled":
	default:
		return ac, fmt.Errorf("MURMUR_ARTIFACT_CONFIG: prompt_cache %q is not enabled or disabled", ac.PromptCache)
	}
	switch ac.PromptCacheTTL {
	case "", "5m", "1h":
	default:
		return ac, fmt.Errorf("MURMUR_ARTIFACT_CONFIG: prompt_cache_ttl %q is not 5m or 1h", ac.PromptCacheTTL)
	}
	return ac, nil
}

// resultFor is the tool_result block for call id among content; nil for
// none (an image the user's own message carried).
func resultFor(content []map[string]any, id string) map[string]any {
	if id == "" {
		return nil
	}
	for _, c := range content {
		if c["type"] == "tool_result" && c["tool_use_id"] == id {
			return c
		}
	}
	return nil
}

// NewRequest implements Provider.
func (a Anthropic) NewRequest(env Env, req Request, cfg Config, stream bool) (*wasihttp.Request, error) {
	ac, err := parseArtifactConfig(env.ArtifactConfig)
	if err != nil {
		return nil, err
	}
	body, beta, err := anthropicBody(req, cfg, ac, stream)
	if err != nil {
		return nil, err
	}
	hreq, err := postJSON(env.Endpoint+"/v1/messages", body, stream)
	if err != nil {
		return nil, err
	}
	hreq.Header = append(hreq.Header, [2]string{"anthropic-version", AnthropicVersion})
	if beta != "" {
		hreq.Header = append(hreq.Header, [2]string{"anthropic-beta", beta})
	}
	return hreq, nil
}

// anthropicBody builds the Messages API body, returning the beta header
// value the body needs ("" for none).
func anthropicBody(req Request, cfg Config, ac artifactConfig, stream bool) (map[string]any, string, error) {
	var cache map[string]any
	if ac.PromptCache == "enabled" {
		cache = map[string]any{"type": "ephemeral"}
		if ac.PromptCacheTTL == "1h" {
			cache["ttl"] = "1h"
		}
	}
	msgs := make([]map[string]any, 0, len(req.Messages))
	for _, m := range req.Messages {
		content := make([]map[string]any, 0, len(m.Content))
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				// The API refuses empty text blocks.
				if b.Text != "" {
					content = append(content, map[string]any{"type": "text", "text": b.Text})
				}
			case "tool_use":
				content = append(content, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": objectOrEmpty(b.Input)})
			case "tool_result":
				tr := map[string]any{"type": "tool_result", "tool_use_id": b.ToolUseID, "content": b.Text}
				if b.IsError {
					tr["is_error"] = true
				}
				content = append(content, tr)
			case BlockImage:
				if err := checkImage(b); err != nil {
					return nil, "", err
				}
				img := map[string]any{"type": "image", "source": map[string]any{
					"type": "base64", "media_type": b.MediaType, "data": base64.StdEncoding.EncodeToString(b.Data)}}
				// A tool's image goes inside its tool_result, whose
				// content then becomes a list of blocks.
				if tr := resultFor(content, b.ToolUseID); tr != nil {
					if s, ok := tr["content"].(string); ok {
						blocks := []map[string]any{}
						if s != "" {
							blocks = append(blocks, map[string]any{"type": "text", "text": s})
						}
						tr["content"] = blocks
					}
					tr["content"] = append(tr["content"].([]map[string]any), img)
					continue
				}
				content = append(content, img)
			default:
				return nil, "", fmt.Errorf("message content block type %q is not text, tool_use, tool_result or image", b.Type)
			}
		}
		if len(content) == 0 {
			continue
		}
		msgs = append(msgs, map[string]any{"role": m.Role, "content": content})
	}
	beta := ""
	tools := make([]map[string]any, 0, len(req.Tools))
	for _, t := range req.Tools {
		if pt, ok := computerTool(t); ok {
			tools = append(tools, pt)
			beta = computerBeta
			continue
		}
		tools = append(tools, map[string]any{"name": t.Name, "description": t.Description, "input_schema": objectOrEmpty(t.InputSchema)})
	}
	body := map[string]any{"model": req.Model, "max_tokens": req.MaxTokens, "messages": msgs}
	if req.System != "" {
		if cache != nil {
			body["system"] = []map[string]any{{"type": "text", "text": req.System, "cache_control": cache}}
		} else {
			body["system"] = req.System
		}
	}
	if len(tools) > 0 {
		if cache != nil {
			tools[len(tools)-1]["cache_control"] = cache
		}
		body["tools"] = tools
	}
	// The last block of the conversation is the moving breakpoint: each
	// call reads everything before it from the cache.
	if cache != nil && len(msgs) > 0 {
		last := msgs[len(msgs)-1]["content"].([]map[string]any)
		last[len(last)-1]["cache_control"] = cache
	}
	if cfg.Temperature != nil {
		body["temperature"] = *cfg.Temperature
	}
	if cfg.TopP != nil {
		body["top_p"] = *cfg.TopP
	}
	if len(cfg.StopSequences) > 0 {
		body["stop_sequences"] = cfg.StopSequences
	}
	if stream {
		body["stream"] = true
	}
	return body, beta, nil
}

// computerTool maps a provider_tool of kind computer to Anthropic's own
// computer-use tool.
func computerTool(t ToolDef) (map[string]any, bool) {
	if len(t.ProviderTool) == 0 {
		return nil, false
	}
	var pt struct {
		Kind   string `json:"kind"`
		Width  int    `json:"display_width"`
		Height int    `json:"display_height"`
	}
	if json.Unmarshal(t.ProviderTool, &pt) != nil || pt.Kind != "computer" {
		return nil, false
	}
	return map[string]any{"type": "computer_20250124", "name": t.Name, "display_width_px": pt.Width, "display_height_px": pt.Height}, true
}

// objectOrEmpty is raw, or {} when raw is absent.
func objectOrEmpty(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`)
	}
	return raw
}

// anthropicStop normalises a Messages API stop_reason.
func anthropicStop(s string) (string, error) {
	switch s {
	case StopEndTurn, StopToolUse, StopMaxTokens, StopStopSequence, StopRefusal:
		return s, nil
	case "pause_turn":
		// A server tool paused a long turn; the runtime continues it
		// like any finished turn.
		return StopEndTurn, nil
	case "model_context_window_exceeded":
		// The provider cut the answer at the window: a cut is max_tokens.
		return StopMaxTokens, nil
	}
	return "", fmt.Errorf("%w: stop_reason %q", errMalformed, s)
}

type anthropicUsage struct {
	InputTokens  *int `json:"input_tokens"`
	OutputTokens *int `json:"output_tokens"`
	CacheRead    *int `json:"cache_read_input_tokens"`
	CacheWrite   *int `json:"cache_creation_input_tokens"`
}

// merge takes every count u reports over the ones already held (a
// message_delta's cumulative usage replaces message_start's).
func (u *anthropicUsage) merge(o *anthropicUsage) {
	if o == nil {
		return
	}
	for _, p := range [][2]**int{{&u.InputTokens, &o.InputTokens}, {&u.OutputTokens, &o.OutputTokens}, {&u.CacheRead, &o.CacheRead}, {&u.CacheWrite, &o.CacheWrite}} {
		if *p[1] != nil {
			*p[0] = *p[1]
		}
	}
}

func (u anthropicUsage) meta() [][2]string {
	if u.InputTokens == nil || u.OutputTokens == nil {
		return nil
	}
	v := func(p *int) string {
		if p == nil {
			return "0"
		}
		return strconv.Itoa(*p)
	}
	return [][2]string{
		{MetaInputTokens, v(u.InputTokens)}, {MetaOutputTokens, v(u.OutputTokens)},
		{MetaCachedTokens, v(u.CacheRead)}, {MetaCacheWriteTokens, v(u.CacheWrite)},
	}
}

// Decode implements Provider.
func (Anthropic) Decode(body []byte) (Response, [][2]string, error) {
	var m struct {
		Type    string `json:"type"`
		Content []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		StopReason string          `json:"stop_reason"`
		Usage      *anthropicUsage `json:"usage"`
		Error      *apiError       `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return Response{}, nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if m.Type == "error" && m.Error != nil {
		return Response{}, nil, m.Error.anthropic()
	}
	var out Response
	for _, c := range m.Content {
		switch c.Type {
		case "text":
			out.Text += c.Text
		case "tool_use":
			out.ToolCalls = append(out.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Input: objectOrEmpty(c.Input)})
		}
	}
	stop, err := anthropicStop(m.StopReason)
	if err != nil {
		return Response{}, nil, err
	}
	out.StopReason = stop
	var u anthropicUsage
	u.merge(m.Usage)
	return out, u.meta(), nil
}

// apiError is the error object of an error body or event.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// anthropic is the error an in-stream error event stands for:
// overloaded_error and api_error are the provider's transient kinds.
func (e *apiError) anthropic() error {
	return &streamError{kind: e.Type, msg: e.Message, transient: e.Type == "overloaded_error" || e.Type == "api_error" || e.Type == "rate_limit_error"}
}

// Transient implements Provider: an overloaded_error body is transient
// whatever its status.
func (Anthropic) Transient(_ int, body []byte) bool {
	var e struct {
		Error apiError `json:"error"`
	}
	return json.Unmarshal(body, &e) == nil && e.Error.Type == "overloaded_error"
}

// DecodeStream implements Provider: message_start, content_block_start,
// content_block_delta (text_delta, input_json_delta), content_block_stop,
// message_delta, message_stop, ping and error events.
func (Anthropic) DecodeStream(body io.Reader, emit func(string)) (Response, [][2]string, error) {
	type block struct {
		call ToolCall
		json strings.Builder
	}
	blocks := map[int]*block{}
	var out Response
	var usage anthropicUsage
	var text strings.Builder
	stopRaw := ""
	for ev, err := range driver.Events(body) {
		if err != nil {
			return Response{}, nil, fmt.Errorf("%w: %w", errStreamBroken, err)
		}
		var e struct {
			Type    string `json:"type"`
			Index   int    `json:"index"`
			Message struct {
				Usage *anthropicUsage `json:"usage"`
			} `json:"message"`
			ContentBlock struct {
				Type  string          `json:"type"`
				ID    string          `json:"id"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage *anthropicUsage `json:"usage"`
			Error *apiError       `json:"error"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return Response{}, nil, fmt.Errorf("%w: event %s: %v", errMalformed, ev.Type, err)
		}
		switch e.Type {
		case "message_start":
			usage.merge(e.Message.Usage)
		case "content_block_start":
			if e.ContentBlock.Type == "tool_use" {
				blocks[e.Index] = &block{call: ToolCall{ID: e.ContentBlock.ID, Name: e.ContentBlock.Name}}
			}
		case "content_block_delta":
			switch e.Delta.Type {
			case "text_delta":
				text.WriteString(e.Delta.Text)
				emit(e.Delta.Text)
			case "input_json_delta":
				if b := blocks[e.Index]; b != nil {
					b.json.WriteString(e.Delta.PartialJSON)
				}
			}
		case "message_delta":
			if e.Delta.StopReason != "" {
				stopRaw = e.Delta.StopReason
			}
			usage.merge(e.Usage)
		case "error":
			if e.Error == nil {
				e.Error = &apiError{Type: "error", Message: ev.Data}
			}
			return Response{}, nil, e.Error.anthropic()
		case "message_stop":
			out.Text = text.String()
			// The stop reason is read first: a cut at the cap can leave a
			// tool_use block's input unfinished, which is not a malformed
			// answer.
			stop, err := anthropicStop(stopRaw)
			if err != nil {
				return Response{}, nil, err
			}
			out.StopReason = stop
			idx := make([]int, 0, len(blocks))
			for i := range blocks {
				idx = append(idx, i)
			}
			sort.Ints(idx)
			for _, i := range idx {
				b := blocks[i]
				in := json.RawMessage(b.json.String())
				if len(bytes.TrimSpace(in)) == 0 {
					in = json.RawMessage(`{}`)
				}
				valid := json.Valid(in)
				b.call.Input = in
				if stop == StopMaxTokens {
					call, ok := cutCall(b.call, valid)
					if ok {
						out.ToolCalls = append(out.ToolCalls, call)
					}
					continue
				}
				if !valid {
					return Response{}, nil, fmt.Errorf("%w: tool_use %s input is not JSON", errMalformed, b.call.ID)
				}
				out.ToolCalls = append(out.ToolCalls, b.call)
			}
			return out, usage.meta(), nil
		}
	}
	return Response{}, nil, errStreamBroken
}
