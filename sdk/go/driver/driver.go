// Package driver writes an inference driver (world
// murmur:runtime-guest/driver@0.1.0) as ordinary Go. A driver answers one
// agent-loop turn per call: it receives the runtime's request as the
// call's input, talks to its provider over wasi:http through the
// credential gateway, streams the answer's text to the host as it
// arrives, and returns the response:
//
//	func init() {
//		driver.Run(func(c *driver.Call) (driver.Reply, error) {
//			resp, err := c.Send(context.Background(), &wasihttp.Request{Method: "POST", URL: c.Endpoint + "/v1/messages",
//				Header: wasihttp.Header{{"content-type", "application/json"}}, Body: bytes.NewReader(c.Request)})
//			...
//			for ev, err := range driver.Events(resp.Body) {
//				c.Emit(delta(ev))
//			}
//			return driver.Reply{Data: answer}, nil
//		})
//	}
//
//	func main() {}
//
// The driver never holds a key: requests to Endpoint (127.0.0.1:9) are
// readdressed by the host, which attaches the credential.
//
// The package does not import net/http, which would add megabytes to the
// component; a driver that wants an *http.Client takes one from
// sdk/go/wasihttp/nethttp.
package driver

import (
	"os"

	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp"
)

// Call is one agent-loop turn.
type Call struct {
	// Request is the runtime's request for this turn, the call's
	// tool-input data, verbatim.
	Request []byte
	// LogPath is the tool-input's log-path, when the runtime sends one.
	LogPath string
	// Endpoint is MURMUR_INFERENCE_ENDPOINT, the gateway address of the
	// driver choice serving this call, without a trailing slash.
	Endpoint string
	// Model is MURMUR_INFERENCE_MODEL.
	Model string
	// Send sends a request through wasi:http.
	Send wasihttp.SendFunc
	// emit hands text to murmur:text/chunks; nil on the host.
	emit func(string) error
}

// Emit streams text to whoever follows the call. Its error (the stream
// closed: the call was canceled) tells the driver it may stop early.
func (c *Call) Emit(text string) error {
	if c.emit == nil || text == "" {
		return nil
	}
	return c.emit(text)
}

// Reply is a turn's response.
type Reply struct {
	// Data is the response the runtime parses.
	Data string
	// ContinuationID, when non-empty, opts in to stateful continuation:
	// the runtime then sends only what changed next turn. Empty drops any
	// held continuation.
	ContinuationID string
	// Metadata is extra result metadata, after continuation_id.
	Metadata [][2]string
}

// Handler answers one turn. An error becomes a tool-result with status
// error whose summary is the error's text.
type Handler func(*Call) (Reply, error)

// Run registers h as the driver's murmur:tool/run implementation. Call it
// once, from init.
func Run(h Handler) {
	tool.Run(func(in tool.Input) tool.Result { return serve(h, newCall(in)) })
}

func newCall(in tool.Input) *Call {
	c := &Call{
		Request:  []byte(in.Text()),
		Endpoint: trimSlash(os.Getenv("MURMUR_INFERENCE_ENDPOINT")),
		Model:    os.Getenv("MURMUR_INFERENCE_MODEL"),
		Send:     sender(),
		emit:     emitter(),
	}
	if in.LogPath != nil {
		c.LogPath = *in.LogPath
	}
	return c
}

func serve(h Handler, c *Call) tool.Result {
	reply, err := h(c)
	if err != nil {
		return tool.Errorf("%s", err.Error())
	}
	r := tool.Passed(reply.Data)
	if reply.ContinuationID != "" {
		r = r.With(tool.MetaContinuationID, reply.ContinuationID)
	}
	for _, kv := range reply.Metadata {
		r = r.With(kv[0], kv[1])
	}
	return r
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
