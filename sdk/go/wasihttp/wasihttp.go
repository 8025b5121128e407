// Package wasihttp is the guest's network path: one request at a time
// over wasi:http/outgoing-handler@0.2.12, the only way a murmur component
// reaches the network. The host checks every request against the
// capsule's grants (capabilities.network.allow, the credential gateway at
// 127.0.0.1:9), so a guest sends plain requests and never holds a key:
//
//	resp, err := wasihttp.Send(ctx, &wasihttp.Request{
//		Method: "POST",
//		URL:    os.Getenv("MURMUR_INFERENCE_ENDPOINT") + "/v1/messages",
//		Header: wasihttp.Header{{"content-type", "application/json"}},
//		Body:   bytes.NewReader(body),
//	})
//
// The response body streams: each Read is one blocking read of the
// response's input stream, so server-sent events arrive as they are sent.
//
// The package does not import net/http: its package init alone (the
// default transport, HTTP/2, crypto/tls) would add megabytes to every
// component and to its memory image. A guest that wants an *http.Client
// imports sdk/go/wasihttp/nethttp. Send exists only in a wasip1 guest.
package wasihttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Request is one outgoing request.
type Request struct {
	// Method is the request method; "" is GET.
	Method string
	// URL is the absolute http or https URL; its host is the authority.
	URL string
	// Header is the request's fields in the order they are sent.
	// Hop-by-hop fields and Host are dropped: the host owns the
	// connection and refuses them.
	Header Header
	// Body is streamed as the request body; nil sends none. A body with
	// a Len method (bytes.Reader, strings.Reader, bytes.Buffer) gets a
	// content-length field unless Header has one.
	Body io.Reader
}

// Response is the answer's head and its streaming body.
type Response struct {
	// StatusCode is the status, e.g. 200.
	StatusCode int
	// Status is the status line as net/http spells it, e.g. "200 OK":
	// wasi:http carries no reason phrase, so the text is the standard
	// one.
	Status string
	// Header is the response's fields in the host's order, names
	// lower-case.
	Header Header
	// Body streams the response body; the caller closes it.
	Body io.ReadCloser
}

// SendFunc sends one request: Send in a guest, and on the host an
// *http.Client through nethttp.FromClient, so code written against it is
// tested on the host against loopback servers.
type SendFunc func(ctx context.Context, req *Request) (*Response, error)

// Header is a message's fields in order: (name, value) pairs.
type Header [][2]string

// Get returns the first value of name, matched without regard to case,
// or "".
func (h Header) Get(name string) string {
	for _, kv := range h {
		if strings.EqualFold(kv[0], name) {
			return kv[1]
		}
	}
	return ""
}

// ErrRequest is wrapped by every error the host reports for a request: the
// text names the wasi:http error-code.
var ErrRequest = errors.New("wasi:http request failed")

// errorCodes are wasi:http/types error-code's cases in WIT order (the
// order is the ABI).
var errorCodes = []string{
	"DNS-timeout", "DNS-error", "destination-not-found", "destination-unavailable",
	"destination-IP-prohibited", "destination-IP-unroutable", "connection-refused",
	"connection-terminated", "connection-timeout", "connection-read-timeout",
	"connection-write-timeout", "connection-limit-reached", "TLS-protocol-error",
	"TLS-certificate-error", "TLS-alert-received", "HTTP-request-denied",
	"HTTP-request-length-required", "HTTP-request-body-size", "HTTP-request-method-invalid",
	"HTTP-request-URI-invalid", "HTTP-request-URI-too-long", "HTTP-request-header-section-size",
	"HTTP-request-header-size", "HTTP-request-trailer-section-size", "HTTP-request-trailer-size",
	"HTTP-response-incomplete", "HTTP-response-header-section-size", "HTTP-response-header-size",
	"HTTP-response-body-size", "HTTP-response-trailer-section-size", "HTTP-response-trailer-size",
	"HTTP-response-transfer-coding", "HTTP-response-content-coding", "HTTP-response-timeout",
	"HTTP-upgrade-failed", "HTTP-protocol-error", "loop-detected", "configuration-error",
	"internal-error",
}

// codeError returns the error for error-code case disc.
func codeError(op string, disc uint8) error {
	name := fmt.Sprintf("error-code(%d)", disc)
	if int(disc) < len(errorCodes) {
		name = errorCodes[disc]
	}
	return fmt.Errorf("%w: %s: %s", ErrRequest, op, name)
}

// methods are wasi:http/types method's unit cases in WIT order; any other
// method travels as other(string), case 9.
var methods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}

const methodOther = 9

// methodCase returns the method variant's case and, for other, its text.
func methodCase(m string) (uint32, string) {
	if m == "" {
		m = "GET"
	}
	for i, known := range methods {
		if m == known {
			return uint32(i), ""
		}
	}
	return methodOther, m
}

// Scheme cases: HTTP, HTTPS, other(string).
const (
	schemeHTTP = iota
	schemeHTTPS
	schemeOther
)

func schemeCase(s string) (uint32, string) {
	switch strings.ToLower(s) {
	case "http":
		return schemeHTTP, ""
	case "https":
		return schemeHTTPS, ""
	}
	return schemeOther, s
}

// splitURL cuts an absolute URL into what wasi:http sets apart: the
// scheme, the authority (without user information, which is never sent)
// and the path with query ("/" when empty); the fragment is dropped. It
// does by hand what net/url does, which would link net/netip as well.
func splitURL(raw string) (scheme, authority, pathQuery string, err error) {
	scheme, rest, found := strings.Cut(raw, "://")
	if !found || scheme == "" || strings.ContainsAny(scheme, "/?#") {
		return "", "", "", fmt.Errorf("%w: URL %q is not absolute", ErrRequest, raw)
	}
	rest, _, _ = strings.Cut(rest, "#")
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority, pathQuery = rest[:end], rest[end:]
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	if authority == "" {
		return "", "", "", fmt.Errorf("%w: URL %q has no host", ErrRequest, raw)
	}
	if strings.ContainsAny(raw, " \t\r\n\x00") {
		return "", "", "", fmt.Errorf("%w: URL %q holds a space or control character", ErrRequest, raw)
	}
	if pathQuery == "" || pathQuery[0] == '?' {
		pathQuery = "/" + pathQuery
	}
	return scheme, authority, pathQuery, nil
}

// hopByHop headers are the connection's, not the request's: the host owns
// the connection and refuses them as forbidden. Names are lower-case.
var hopByHop = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true, "transfer-encoding": true,
	"upgrade": true, "host": true, "te": true, "trailer": true, "http2-settings": true,
}

// fieldList is the request's fields as sent: names lower-case, order
// kept, hop-by-hop fields dropped, and a content-length added when the
// body's length is known and h has none.
func fieldList(h Header, body io.Reader) [][2]string {
	out := make([][2]string, 0, len(h)+1)
	hasLength := false
	for _, kv := range h {
		name := strings.ToLower(kv[0])
		if hopByHop[name] {
			continue
		}
		hasLength = hasLength || name == "content-length"
		out = append(out, [2]string{name, kv[1]})
	}
	if l, ok := body.(interface{ Len() int }); ok && !hasLength && l.Len() > 0 {
		out = append(out, [2]string{"content-length", strconv.Itoa(l.Len())})
	}
	return out
}

// statusLine is the status line net/http would give for code: the code
// and its reason phrase, "" for a code without one.
func statusLine(code int) string { return strconv.Itoa(code) + " " + reasons[code] }

// reasons are the reason phrases of the registered status codes, spelt
// as net/http's StatusText spells them (the test holds the two equal).
var reasons = map[int]string{
	100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints",
	200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information",
	204: "No Content", 205: "Reset Content", 206: "Partial Content", 207: "Multi-Status",
	208: "Already Reported", 226: "IM Used",
	300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other",
	304: "Not Modified", 305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
	400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden",
	404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
	407: "Proxy Authentication Required", 408: "Request Timeout", 409: "Conflict",
	410: "Gone", 411: "Length Required", 412: "Precondition Failed",
	413: "Request Entity Too Large", 414: "Request URI Too Long",
	415: "Unsupported Media Type", 416: "Requested Range Not Satisfiable",
	417: "Expectation Failed", 418: "I'm a teapot", 421: "Misdirected Request",
	422: "Unprocessable Entity", 423: "Locked", 424: "Failed Dependency",
	425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required",
	429: "Too Many Requests", 431: "Request Header Fields Too Large",
	451: "Unavailable For Legal Reasons",
	500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
	503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported",
	506: "Variant Also Negotiates", 507: "Insufficient Storage", 508: "Loop Detected",
	510: "Not Extended", 511: "Network Authentication Required",
}
