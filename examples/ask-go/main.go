//go:build wasip1

// Command ask-go is a tool that stops to ask: it calls
// murmur:task/task.request-input with its input as the prompt, streams a
// progress line through murmur:text/chunks, and returns the reply.
package main

import (
	"github.com/murmur/mur/sdk/go/chunks"
	"github.com/murmur/mur/sdk/go/task"
	"github.com/murmur/mur/sdk/go/tool"
)

func init() {
	tool.Run(func(in tool.Input) tool.Result {
		prompt := in.Text()
		if prompt == "" {
			prompt = "How should I proceed?"
		}
		// A closed stream only means nobody is watching; the question
		// still goes out.
		_ = chunks.Emit("asking: " + prompt + "\n")
		reply := task.RequestInput(prompt)
		return tool.Passed(reply)
	})
}

func main() {}
