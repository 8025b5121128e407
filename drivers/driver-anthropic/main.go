//go:build wasip1

// Command driver-anthropic is the murmur/driver-anthropic inference driver
// component: the runtime's request (docs/inference-format.md) in, one
// provider call through the credential gateway, the response out, with
// text streamed to the host through murmur:text/chunks as it arrives. The
// translation and the wiring live in internal/infer, tested on the host.
package main

import "github.com/murmur/mur/internal/infer"

func init() { infer.Run(infer.Anthropic{}) }

func main() {}
