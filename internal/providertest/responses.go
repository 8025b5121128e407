package providertest

import (
	"net/http"
)

// The OpenAI Responses API (POST /v1/responses), the wire Codex speaks: a
// reply is a list of output items — a message with output_text parts, a
// function_call per tool call — and usage counts input_tokens (cached
// ones included, as input_tokens_details.cached_tokens) and
// output_tokens.

func responsesStatus(st Step) (status string, incomplete any) {
	switch stopOf(st) {
	case "max_tokens":
		return "incomplete", map[string]any{"reason": "max_output_tokens"}
	case "refusal":
		return "incomplete", map[string]any{"reason": "content_filter"}
	}
	return "completed", nil
}

func responsesItems(st Step) []map[string]any {
	var items []map[string]any
	if st.Text != "" {
		items = append(items, map[string]any{"type": "message", "id": "msg_double", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}}})
	}
	for _, c := range st.Calls {
		fc := map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name,
			"arguments": orEmpty(c.Input), "status": "completed"}
		if c.Namespace != "" {
			fc["namespace"] = c.Namespace
		}
		items = append(items, fc)
	}
	if items == nil {
		items = []map[string]any{}
	}
	return items
}

func responsesUsage(st Step) any {
	if st.NoUsage {
		return nil
	}
	return map[string]any{
		"input_tokens": st.InputTokens + st.CachedTokens, "output_tokens": st.OutputTokens,
		"total_tokens":          st.InputTokens + st.CachedTokens + st.OutputTokens,
		"input_tokens_details":  map[string]any{"cached_tokens": st.CachedTokens},
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
	}
}

func responsesReply(st Step, req map[string]any) map[string]any {
	status, incomplete := responsesStatus(st)
	return map[string]any{
		"id": "resp_double", "object": "response", "model": req["model"], "status": status,
		"incomplete_details": incomplete, "output": responsesItems(st), "usage": responsesUsage(st),
	}
}

// streamResponses answers st as a Responses API event stream: each output
// item added, its text or arguments in deltas, done, then
// response.completed (or response.incomplete) carrying the whole response
// with its usage.
func streamResponses(w http.ResponseWriter, st Step, req map[string]any) bool {
	w.Header().Set("Content-Type", "text/event-stream")
	s := &sse{w: w, limit: st.BreakAfter}
	seq := 0
	send := func(typ string, v map[string]any) bool {
		v["type"] = typ
		v["sequence_number"] = seq
		seq++
		return s.send(typ, v)
	}
	head := map[string]any{"id": "resp_double", "object": "response", "model": req["model"], "status": "in_progress", "output": []any{}}
	ok := send("response.created", map[string]any{"response": head})
	ok = ok && send("response.in_progress", map[string]any{"response": head})
	for i, item := range responsesItems(st) {
		switch item["type"] {
		case "message":
			ok = ok && send("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{
				"type": "message", "id": item["id"], "role": "assistant", "status": "in_progress", "content": []any{}}})
			ok = ok && send("response.content_part.added", map[string]any{"output_index": i, "item_id": item["id"], "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, c := range chunks(st.Text, 8) {
				ok = ok && send("response.output_text.delta", map[string]any{"output_index": i, "item_id": item["id"], "content_index": 0, "delta": c})
			}
			ok = ok && send("response.output_text.done", map[string]any{"output_index": i, "item_id": item["id"], "content_index": 0, "text": st.Text})
		case "function_call":
			added := map[string]any{"type": "function_call", "id": item["id"], "call_id": item["call_id"], "name": item["name"], "arguments": "", "status": "in_progress"}
			if ns, ok := item["namespace"]; ok {
				added["namespace"] = ns
			}
			ok = ok && send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			for _, p := range chunks(item["arguments"].(string), 8) {
				ok = ok && send("response.function_call_arguments.delta", map[string]any{"output_index": i, "item_id": item["id"], "delta": p})
			}
			ok = ok && send("response.function_call_arguments.done", map[string]any{"output_index": i, "item_id": item["id"], "arguments": item["arguments"]})
		}
		ok = ok && send("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	final := responsesReply(st, req)
	end := "response.completed"
	if final["status"] == "incomplete" {
		end = "response.incomplete"
	}
	return ok && send(end, map[string]any{"response": final})
}
