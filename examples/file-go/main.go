//go:build wasip1

// Command file-go is a file tool: it reads, writes or lists files under its
// current directory (the filesystem scope its capsule grants) and declares
// each call's state_effect and resource_id in the result metadata, so
// redundant-call detection can reason about it. Input is JSON:
//
//	{"op": "read" | "write" | "list", "path": "notes/a.txt", "content": "..."}
package main

import (
	"encoding/json"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/murmur/mur/sdk/go/tool"
)

type request struct {
	Op      string `json:"op"`
	Path    string `json:"path"`
	Content string `json:"content"`
}

func init() { tool.Run(handle) }

func handle(in tool.Input) tool.Result {
	var req request
	if err := json.Unmarshal([]byte(in.Text()), &req); err != nil {
		return tool.Failed("input is not a JSON object with op and path: " + err.Error())
	}
	p := path.Clean("/" + req.Path)[1:] // confine to the scope: no "..", no absolute path
	if p == "" {
		p = "."
	}
	// Scoped by addressing scheme, so it cannot collide with another tool's
	// resource of the same name.
	rid := "file:" + p
	switch req.Op {
	case "read":
		b, err := os.ReadFile(p)
		if err != nil {
			return tool.Failed(err.Error()).Effect(tool.EffectRead, rid)
		}
		return tool.Passed(string(b)).Effect(tool.EffectRead, rid)
	case "write":
		if dir := path.Dir(p); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return tool.Failed(err.Error()).Effect(tool.EffectMutate, rid)
			}
		}
		if err := os.WriteFile(p, []byte(req.Content), 0o644); err != nil {
			return tool.Failed(err.Error()).Effect(tool.EffectMutate, rid)
		}
		return tool.Passed("wrote "+p).Effect(tool.EffectMutate, rid)
	case "list":
		entries, err := os.ReadDir(p)
		if err != nil {
			return tool.Failed(err.Error()).Effect(tool.EffectRead, rid)
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			names = append(names, n)
		}
		sort.Strings(names)
		return tool.Passed(strings.Join(names, "\n")).Effect(tool.EffectRead, rid)
	}
	return tool.Failed(`op must be "read", "write" or "list"`)
}

func main() {}
