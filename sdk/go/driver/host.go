//go:build !wasip1

package driver

import "net/http"

// On the host a Call's client is the standard one and nothing follows the
// stream: handlers can be tested in-process against a loopback server.
func client() *http.Client        { return http.DefaultClient }
func emitter() func(string) error { return nil }
