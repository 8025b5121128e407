//go:build wasip1

package driver

import (
	"github.com/murmur/mur/sdk/go/chunks"
	"github.com/murmur/mur/sdk/go/wasihttp"
)

func sender() wasihttp.SendFunc   { return wasihttp.Send }
func emitter() func(string) error { return chunks.Emit }
