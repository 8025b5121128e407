//go:build wasip1

package infer

import (
	"context"
	"os"

	"github.com/murmur/mur/sdk/go/chunks"
	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp"
)

// Run makes the component a driver for p: each murmur:tool/run call is
// served by Serve, sending through wasi:http and streaming text deltas
// through murmur:text/chunks. The instance's continuation state lives as
// long as the instance. Call it once, from the component's init.
func Run(p Provider) {
	var conv Conversations
	tool.Run(func(in tool.Input) tool.Result {
		env := EnvFrom(os.Getenv, wasihttp.Send, chunks.Emit)
		return Serve(context.Background(), p, &conv, env, in)
	})
}
