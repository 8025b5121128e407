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

func main() {
	sandbox.Main() // returns at once unless this process is a sandbox init
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
