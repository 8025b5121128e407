// Package nethttp bridges sdk/go/wasihttp and net/http both ways: in a
// guest, Client and Transport put an *http.Client over wasi:http (and
// the package becomes http.DefaultTransport, since the standard one has
// no sockets to dial); on the host, FromClient turns an *http.Client
// into a wasihttp.SendFunc, so code written against SendFunc is tested
// against loopback servers.
//
// Importing it links net/http into the component, megabytes of code and
// memory image; a guest that sends a few requests of its own is smaller
// with wasihttp.Send alone.
package nethttp

import (
	"context"
	"net/http"
	"sort"

	"github.com/murmur/mur/sdk/go/wasihttp"
)

// FromClient sends each request through c (http.DefaultClient when nil).
// The response's fields come in name order, since http.Header keeps
// none.
func FromClient(c *http.Client) wasihttp.SendFunc {
	if c == nil {
		c = http.DefaultClient
	}
	return func(ctx context.Context, req *wasihttp.Request) (*wasihttp.Response, error) {
		hreq, err := http.NewRequestWithContext(ctx, req.Method, req.URL, req.Body)
		if err != nil {
			return nil, err
		}
		for _, kv := range req.Header {
			hreq.Header.Add(kv[0], kv[1])
		}
		resp, err := c.Do(hreq)
		if err != nil {
			return nil, err
		}
		return &wasihttp.Response{StatusCode: resp.StatusCode, Status: resp.Status, Header: fields(resp.Header), Body: resp.Body}, nil
	}
}

// fields flattens h in name order.
func fields(h http.Header) wasihttp.Header {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)
	var out wasihttp.Header
	for _, name := range names {
		for _, v := range h[name] {
			out = append(out, [2]string{name, v})
		}
	}
	return out
}
