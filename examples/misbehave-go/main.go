//go:build wasip1

// Command misbehave-go is a tool that fails on request, the fixture for
// the host's fault handling: input "panic" panics (the instance traps),
// "exit" calls os.Exit(3), "spin" never returns (a deadline must stop
// it), "grow" allocates until memory runs out, anything else passes.
package main

import (
	"os"

	"github.com/murmur/mur/sdk/go/tool"
)

var sink [][]byte

func init() {
	tool.Run(func(in tool.Input) tool.Result {
		switch in.Text() {
		case "panic":
			panic("misbehave: asked to panic")
		case "exit":
			os.Exit(3)
		case "spin":
			for {
			}
		case "grow":
			for {
				sink = append(sink, make([]byte, 16<<20))
			}
		}
		return tool.Passed("behaved")
	})
}

func main() {}
