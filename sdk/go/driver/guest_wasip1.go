//go:build wasip1

package driver

import (
	"net/http"

	"github.com/murmur/mur/sdk/go/chunks"
	"github.com/murmur/mur/sdk/go/wasihttp"
)

func client() *http.Client        { return wasihttp.Client() }
func emitter() func(string) error { return chunks.Emit }
