//go:build wasip1

// Command summarize-go is a tool that asks the capsule's own model:
// it sends its input's text through murmur:runtime/inference run-inference
// (sdk/go/inference) — the capsule's driver, gateway, spend ceilings and
// trace, no model of its own — and returns the one-line summary.
package main

import (
	"encoding/json"

	"github.com/murmur/mur/sdk/go/inference"
	"github.com/murmur/mur/sdk/go/tool"
)

func init() {
	tool.Run(func(in tool.Input) tool.Result {
		var args struct {
			Text string `json:"text"`
		}
		if in.Data == nil || json.Unmarshal([]byte(*in.Data), &args) != nil || args.Text == "" {
			return tool.Failed(`summarize-go needs {"text": "..."}`)
		}
		system := "Summarise the user's text in one line."
		r, err := inference.Run(inference.Request{
			SystemPrompt: &system,
			Messages:     []inference.Message{{Role: "user", Content: args.Text}},
		})
		if err != nil {
			return tool.Failed("run-inference: " + err.Error())
		}
		return tool.Passed(r.Text)
	})
}

func main() {}
