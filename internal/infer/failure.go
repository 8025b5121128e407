package infer

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp"
)

// cutCall is a tool call of an answer the provider stopped at the output
// cap. The cap can fall inside the call's input, leaving JSON that does not
// parse: spec 004 ends such a turn, not the task, and the runtime drops
// every call of a capped turn unrun, so the call keeps its id and name
// (the note the model reads names it) and an unfinished input becomes {}.
// A call cut before its name arrived cannot be named and is left out (ok
// false).
func cutCall(c ToolCall, inputValid bool) (ToolCall, bool) {
	if c.Name == "" || c.ID == "" {
		return ToolCall{}, false
	}
	if !inputValid {
		c.Input = json.RawMessage(`{}`)
	}
	return c, true
}

// maxBody bounds a non-streamed provider answer read into memory; a
// completion capped at max_tokens is far smaller.
const maxBody = 32 << 20

// readAll reads a whole body up to maxBody.
func readAll(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return b, err
	}
	if len(b) > maxBody {
		return nil, fmt.Errorf("%w: the answer is over %d bytes", errMalformed, maxBody)
	}
	return b, nil
}

// httpFailure turns a non-2xx answer into a failed result: the summary is
// the provider's own error text alone, and the metadata carries the
// status, the retry headers verbatim and the driver's transient verdict.
func httpFailure(p Provider, resp *wasihttp.Response) tool.Result {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	status := resp.StatusCode
	transient := transientStatus(status) || p.Transient(status, body)
	r := tool.Failed(errorMessage(body, resp.Status)).With(MetaHTTPStatus, strconv.Itoa(status))
	if status == 401 {
		r = r.With(MetaFailure, FailureCredential)
	}
	r = r.With(MetaTransient, strconv.FormatBool(transient))
	for _, h := range []string{MetaRetryAfterMs, MetaRetryAfter} {
		if v := resp.Header.Get(h); v != "" {
			r = r.With(h, v)
		}
	}
	return r
}

// transientStatus is the spec's rule: 408, 429 and 5xx except 501 and 505.
func transientStatus(status int) bool {
	switch {
	case status == 408, status == 429:
		return true
	case status == 501, status == 505:
		return false
	}
	return status >= 500 && status <= 599
}

// errorMessage is error.message of a provider error body (both Anthropic
// and OpenAI nest it so), else the body's first 200 bytes, else the
// status line.
func errorMessage(body []byte, status string) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		// Some compatible servers (Ollama's older builds) send a string.
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return s
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200]
	}
	if text == "" {
		return "provider answered " + status
	}
	return text
}

// connFailure sorts a transport error by the wasi:http error-code (or the
// Go error on the host): a request that never reached the provider is
// connection_failed, one that broke after it was sent connection_broken.
func connFailure(name string, err error) tool.Result {
	kind := FailureConnectionBroken
	text := err.Error()
	for _, c := range neverSent {
		if strings.Contains(text, c) {
			kind = FailureConnection
			break
		}
	}
	return tool.Failed(fmt.Sprintf("%s: calling the provider: %v", name, err)).With(MetaFailure, kind)
}

// neverSent are the error texts of a request that did not reach the
// provider: wasi:http error-code names in the guest, Go's dial errors on
// the host.
var neverSent = []string{
	"DNS-timeout", "DNS-error", "destination-not-found", "destination-unavailable",
	"destination-IP-prohibited", "destination-IP-unroutable", "connection-refused",
	"TLS-protocol-error", "TLS-certificate-error", "TLS-alert-received",
	"HTTP-request-denied", "configuration-error",
	"connection refused", "no such host", "dial tcp",
}
