//go:build wasip1

// Command driver-anthropic is the murmur/driver-anthropic inference driver
// component: the runtime's request (docs/inference-format.md) in, one
// provider call through the credential gateway, the response out, with
// text streamed to the host through murmur:text/chunks as it arrives. The
// translation lives in internal/infer, tested on the host.
package main

import (
	"context"
	"os"

	"github.com/murmur/mur/internal/infer"
	"github.com/murmur/mur/sdk/go/chunks"
	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp"
)

// conversations outlives a call: it is the instance's continuation state.
var conversations infer.Conversations

func init() {
	tool.Run(func(in tool.Input) tool.Result {
		env := infer.EnvFrom(os.Getenv, wasihttp.Client(), chunks.Emit)
		return infer.Serve(context.Background(), infer.Anthropic{}, &conversations, env, in)
	})
}

func main() {}
