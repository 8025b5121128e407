//go:build wasip1

package infer

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/murmur/mur/sdk/go/chunks"
	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp"
)

// Run makes the component a driver for p: each murmur:tool/run call is
// served by Serve, sending through wasi:http and streaming text deltas
// through murmur:text/chunks. The instance's continuation state lives as
// long as the instance. Call it once, from the component's init.
func Run(p Provider) {
	debug.SetGCPercent(gcPercent)
	var conv Conversations
	tool.Run(func(in tool.Input) tool.Result {
		env := EnvFrom(os.Getenv, wasihttp.Send, chunks.Emit)
		return Serve(context.Background(), p, &conv, env, in)
	})
}

// gcPercent is the driver's GOGC. A linear memory never shrinks, so the
// instance keeps the highest its heap ever reached, for the whole session:
// under the default 100 a queue + sleep capsule's driver touched another
// 0.7 MB between its 100th and 1,000th task and needed 42 MB of linear
// memory for 600 calls; at 20 it touched under 0.1 MB more and needed
// 38 MB, for about 5 % more time per call (bench/RESULTS.md, door;
// TestDriverLinearMemoryBounded).
const gcPercent = 20
