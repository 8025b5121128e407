//go:build wasip1

package nethttp

import (
	"net/http"
	"strconv"

	"github.com/murmur/mur/sdk/go/wasihttp"
)

func init() {
	// net/http's own transport has no sockets in a wasip1 guest.
	http.DefaultTransport = &Transport{}
}

// Client returns an http.Client whose requests go through wasi:http.
func Client() *http.Client { return &http.Client{Transport: &Transport{}} }

// Transport sends each request with wasihttp.Send. It has no connection
// pool and no timeouts of its own: the host owns both.
type Transport struct{}

// RoundTrip implements http.RoundTripper.
func (*Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	u := *req.URL
	if req.Host != "" {
		u.Host = req.Host
	}
	header := fields(req.Header)
	if req.ContentLength > 0 && req.Header.Get("Content-Length") == "" {
		header = append(header, [2]string{"content-length", strconv.FormatInt(req.ContentLength, 10)})
	}
	resp, err := wasihttp.Send(req.Context(), &wasihttp.Request{Method: req.Method, URL: u.String(), Header: header, Body: req.Body})
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for _, kv := range resp.Header {
		h.Add(kv[0], kv[1])
	}
	return &http.Response{
		Status:        resp.Status,
		StatusCode:    resp.StatusCode,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          resp.Body,
		ContentLength: contentLength(h),
		Request:       req,
	}, nil
}

func contentLength(h http.Header) int64 {
	if v := h.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return -1
}
