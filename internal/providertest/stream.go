package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// sse writes server-sent events, stopping (and breaking the connection)
// after limit events when limit > 0, as a provider whose stream dies after
// it answered 200.
type sse struct {
	w     http.ResponseWriter
	n     int
	limit int
}

// send writes one event; it reports false once the stream is cut.
func (s *sse) send(name string, v any) bool {
	if s.limit > 0 && s.n >= s.limit {
		return false
	}
	s.n++
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	return true
}

// chunks splits s into pieces of at most n bytes on rune boundaries, so a
// client sees text arrive in several deltas.
func chunks(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

// streamAnthropic answers st as a Messages API event stream.
func streamAnthropic(w http.ResponseWriter, st Step, req map[string]any) bool {
	w.Header().Set("Content-Type", "text/event-stream")
	s := &sse{w: w, limit: st.BreakAfter}
	ok := s.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_double", "type": "message", "role": "assistant", "model": req["model"], "content": []any{},
		"stop_reason": nil, "usage": map[string]any{"input_tokens": st.InputTokens, "output_tokens": 1, "cache_read_input_tokens": st.CachedTokens}}})
	idx := 0
	if st.Text != "" && ok {
		ok = s.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, c := range chunks(st.Text, 8) {
			ok = ok && s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": c}})
		}
		ok = ok && s.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for _, c := range st.Calls {
		ok = ok && s.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, p := range chunks(orEmpty(c.Input), 8) {
			ok = ok && s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		ok = ok && s.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	ok = ok && s.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stopOf(st), "stop_sequence": nil}, "usage": map[string]any{"output_tokens": st.OutputTokens}})
	return ok && s.send("message_stop", map[string]any{"type": "message_stop"})
}

// streamOpenAI answers st as a Chat Completions chunk stream.
func streamOpenAI(w http.ResponseWriter, st Step, req map[string]any) bool {
	w.Header().Set("Content-Type", "text/event-stream")
	s := &sse{w: w, limit: st.BreakAfter}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-double", "object": "chat.completion.chunk", "model": req["model"],
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	ok := s.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, c := range chunks(st.Text, 8) {
		ok = ok && s.send("", chunk(map[string]any{"content": c}, nil))
	}
	for i, c := range st.Calls {
		ok = ok && s.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil))
		for _, p := range chunks(orEmpty(c.Input), 8) {
			ok = ok && s.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil))
		}
	}
	finish := map[string]string{"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "stop_sequence": "stop", "refusal": "content_filter"}[stopOf(st)]
	ok = ok && s.send("", chunk(map[string]any{}, finish))
	if opts, _ := req["stream_options"].(map[string]any); opts["include_usage"] == true && !st.NoUsage {
		ok = ok && s.send("", map[string]any{"id": "chatcmpl-double", "object": "chat.completion.chunk", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": st.InputTokens + st.CachedTokens, "completion_tokens": st.OutputTokens,
				"prompt_tokens_details": map[string]any{"cached_tokens": st.CachedTokens}}})
	}
	if ok {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
	return ok
}
