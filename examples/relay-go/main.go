//go:build wasip1

// Command relay-go is a tool that calls another tool of its capsule
// through murmur:tool-registry/invoke and returns what that tool returned.
// Input is JSON:
//
//	{"tool": "file-go", "input": {"op": "list", "path": "."}}
package main

import (
	"encoding/json"

	"github.com/murmur/mur/sdk/go/tool"
)

type request struct {
	Tool  string          `json:"tool"`
	Input json.RawMessage `json:"input"`
}

func init() { tool.Run(handle) }

func handle(in tool.Input) tool.Result {
	var req request
	if err := json.Unmarshal([]byte(in.Text()), &req); err != nil || req.Tool == "" {
		return tool.Failed(`input is not a JSON object with "tool" and "input"`)
	}
	data := string(req.Input)
	if data == "" {
		data = "{}"
	}
	r, err := tool.Invoke(req.Tool, tool.Input{Data: &data})
	if err != nil {
		return tool.Errorf("%v", err)
	}
	return r
}

func main() {}
