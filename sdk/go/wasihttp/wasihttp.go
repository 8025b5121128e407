// Package wasihttp is the guest's network path: an http.RoundTripper over
// wasi:http/outgoing-handler@0.2.12, the only way a murmur component
// reaches the network. The host checks every request against the
// capsule's grants (capabilities.network.allow, the credential gateway at
// 127.0.0.1:9), so a guest sends plain requests and never holds a key:
//
//	client := wasihttp.Client()
//	resp, err := client.Post(os.Getenv("MURMUR_INFERENCE_ENDPOINT")+"/v1/messages", "application/json", body)
//
// The response body streams: each Read is one blocking read of the
// response's input stream, so server-sent events arrive as they are sent.
// In a wasip1 guest the package also installs its Transport as
// http.DefaultTransport, since the standard one has no sockets to dial.
// Transport exists only in a wasip1 guest.
package wasihttp

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

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
var methods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete,
	http.MethodConnect, http.MethodOptions, http.MethodTrace, http.MethodPatch,
}

const methodOther = 9

// methodCase returns the method variant's case and, for other, its text.
func methodCase(m string) (uint32, string) {
	if m == "" {
		m = http.MethodGet
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

// hopByHop headers are the connection's, not the request's: the host owns
// the connection and refuses them as forbidden.
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Transfer-Encoding": true,
	"Upgrade": true, "Host": true, "Te": true, "Trailer": true, "Http2-Settings": true,
}

// headerList flattens h into (name, value) entries in a stable order,
// without hop-by-hop headers.
func headerList(h http.Header) [][2]string {
	var out [][2]string
	for name, values := range h {
		if hopByHop[http.CanonicalHeaderKey(name)] {
			continue
		}
		for _, v := range values {
			out = append(out, [2]string{strings.ToLower(name), v})
		}
	}
	sortPairs(out)
	return out
}

func sortPairs(p [][2]string) {
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && p[j][0] < p[j-1][0]; j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}
