package providertest

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/murmur/mur/internal/agent"
)

// errStreamBroken means the event stream ended before its final event.
var errStreamBroken = errors.New("the response stream broke before it finished")

// events reads server-sent events, calling f with each event's name and
// data; it stops when f reports done.
func events(r io.Reader, f func(name, data string) (done bool, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	var name string
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() > 0 {
				done, err := f(name, data.String())
				if err != nil || done {
					return err
				}
			}
			name = ""
			data.Reset()
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(line[len("data:"):], " "))
		}
	}
	if err := sc.Err(); err != nil {
		return errors.Join(errStreamBroken, err)
	}
	return errStreamBroken
}

// readAnthropicStream assembles a Messages API stream.
func (d *Driver) readAnthropicStream(r io.Reader) (response, [][2]string, error) {
	out := response{ToolCalls: []toolCall{}}
	type partial struct {
		call toolCall
		json strings.Builder
	}
	blocks := map[int]*partial{}
	var in, cached, cw, outTok int
	err := events(r, func(_ string, data string) (bool, error) {
		var ev struct {
			Type    string `json:"type"`
			Index   int    `json:"index"`
			Message struct {
				Usage struct {
					InputTokens  int `json:"input_tokens"`
					CacheRead    int `json:"cache_read_input_tokens"`
					CacheCreated int `json:"cache_creation_input_tokens"`
				} `json:"usage"`
			} `json:"message"`
			ContentBlock struct {
				Type string `json:"type"`
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage struct {
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return false, err
		}
		switch ev.Type {
		case "message_start":
			in, cached, cw = ev.Message.Usage.InputTokens, ev.Message.Usage.CacheRead, ev.Message.Usage.CacheCreated
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				blocks[ev.Index] = &partial{call: toolCall{ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}}
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				out.Text += ev.Delta.Text
				if d.OnText != nil {
					d.OnText(ev.Delta.Text)
				}
			case "input_json_delta":
				if b := blocks[ev.Index]; b != nil {
					b.json.WriteString(ev.Delta.PartialJSON)
				}
			}
		case "message_delta":
			out.StopReason = ev.Delta.StopReason
			outTok = ev.Usage.OutputTokens
		case "message_stop":
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return response{}, nil, err
	}
	idx := make([]int, 0, len(blocks))
	for i := range blocks {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		b := blocks[i]
		b.call.Input = json.RawMessage(orEmpty(b.json.String()))
		out.ToolCalls = append(out.ToolCalls, b.call)
	}
	meta := [][2]string{
		{agent.MetaInputTokens, strconv.Itoa(in)}, {agent.MetaOutputTokens, strconv.Itoa(outTok)},
		{agent.MetaCachedTokens, strconv.Itoa(cached)}, {agent.MetaCacheWriteTokens, strconv.Itoa(cw)},
	}
	return out, meta, nil
}

// readOpenAIStream assembles a Chat Completions chunk stream.
func (d *Driver) readOpenAIStream(r io.Reader) (response, [][2]string, error) {
	out := response{ToolCalls: []toolCall{}}
	type partial struct {
		id, name string
		args     strings.Builder
	}
	var calls []*partial
	var finish string
	var meta [][2]string
	err := events(r, func(_ string, data string) (bool, error) {
		if data == "[DONE]" {
			return true, nil
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				Prompt     int `json:"prompt_tokens"`
				Completion int `json:"completion_tokens"`
				Details    struct {
					Cached int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return false, err
		}
		if ch.Usage != nil {
			meta = [][2]string{
				{agent.MetaInputTokens, strconv.Itoa(ch.Usage.Prompt - ch.Usage.Details.Cached)},
				{agent.MetaOutputTokens, strconv.Itoa(ch.Usage.Completion)},
				{agent.MetaCachedTokens, strconv.Itoa(ch.Usage.Details.Cached)},
			}
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != "" {
				out.Text += c.Delta.Content
				if d.OnText != nil {
					d.OnText(c.Delta.Content)
				}
			}
			for _, tc := range c.Delta.ToolCalls {
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
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
		return false, nil
	})
	if err != nil {
		return response{}, nil, err
	}
	for _, p := range calls {
		in := json.RawMessage(orEmpty(p.args.String()))
		if !json.Valid(in) {
			in = json.RawMessage(`{}`)
		}
		out.ToolCalls = append(out.ToolCalls, toolCall{ID: p.id, Name: p.name, Input: in})
	}
	out.StopReason = openAIStop(finish)
	return out, meta, nil
}

// openAIStop normalises a finish_reason.
func openAIStop(finish string) string {
	switch finish {
	case "length":
		return agent.StopMaxTokens
	case "tool_calls", "function_call":
		return agent.StopToolUse
	case "content_filter":
		return agent.StopRefusal
	}
	return agent.StopEndTurn
}
