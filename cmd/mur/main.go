// Command mur is the Murmur capsule runtime.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/sandbox"
)

func main() { os.Exit(run()) }

// run is the whole mur process; the CLI test harness runs it as its mur
// command, so scripts see the same signal handling as the binary.
func run() int {
	sandbox.Main() // returns at once unless this process is a sandbox init
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}
