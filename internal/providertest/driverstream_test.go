package providertest

import (
	"strings"
	"testing"
)

func FuzzStreams(f *testing.F) {
	f.Add("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"b\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":2,\"id\":\"x\"}]}}]}\n\ndata: [DONE]\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		d := &Driver{}
		if out, _, err := d.readAnthropicStream(strings.NewReader(s)); err == nil {
			for _, c := range out.ToolCalls {
				if len(c.Input) == 0 {
					t.Fatal("tool call without input")
				}
			}
		}
		d.readOpenAIStream(strings.NewReader(s))
	})
}

func TestStreamCutIsAnError(t *testing.T) {
	d := &Driver{}
	if _, _, err := d.readAnthropicStream(strings.NewReader("event: message_start\ndata: {\"type\":\"message_start\"}\n\n")); err == nil {
		t.Fatal("a stream without message_stop was accepted")
	}
	if _, _, err := d.readOpenAIStream(strings.NewReader("data: {\"choices\":[]}\n\n")); err == nil {
		t.Fatal("a stream without [DONE] was accepted")
	}
}
