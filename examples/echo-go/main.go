//go:build wasip1

// Command echo-go is the echo tool: it returns its input unchanged. It is
// the smallest murmur tool and a fixture for the host's round-trip tests.
package main

import "github.com/murmur/mur/sdk/go/tool"

func init() {
	tool.Run(func(in tool.Input) tool.Result {
		if in.Data == nil {
			return tool.Failed("echo needs input data")
		}
		return tool.Passed(*in.Data)
	})
}

func main() {}
