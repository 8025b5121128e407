//go:build !wasip1

package driver

import (
	"net/http"

	"github.com/murmur/mur/sdk/go/wasihttp"
	"github.com/murmur/mur/sdk/go/wasihttp/nethttp"
)

// On the host a Call sends through the standard client and nothing
// follows the stream: handlers can be tested in-process against a
// loopback server.
func sender() wasihttp.SendFunc   { return nethttp.FromClient(http.DefaultClient) }
func emitter() func(string) error { return nil }
