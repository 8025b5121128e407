package door

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/murmur/mur/internal/lifecycle"
)

// peerRefusal is the exact body spec 004 gives a door that does not accept
// peer tasks: the same for every method, path, task id and body.
const peerRefusal = `{"error":"peer_not_accepted","message":"this capsule does not accept tasks from peers"}`

// SupportedVersion is the A2A version the door speaks.
const SupportedVersion = "1.0"

// legacyVersion is what A2A 1.0 says an absent A2A-Version header means.
const legacyVersion = "0.3"

// JSON-RPC error codes the door answers with itself (A2A 1.0 §9 and
// JSON-RPC 2.0).
const (
	codeParseError          = -32700
	codeInvalidRequest      = -32600
	codeMethodNotFound      = -32601
	codeInvalidParams       = -32602
	codeUnsupportedOp       = -32004
	codeVersionNotSupported = -32009
	codeUnauthenticated     = -31401
	codeUnauthorized        = -31403
)

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Error   *rpcError       `json:"error,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
}

func writeRPCError(w http.ResponseWriter, status int, id any, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(rpcEnvelope{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: code, Message: msg}})
}

// Handler is the door's HTTP handler: the agent card, then for every other
// request authentication, the peer refusal, the body bound, version
// negotiation and scopes, in the order spec 004 gives them, before the SDK.
func (d *Door) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(CardPath, d.serveCard)
	mux.HandleFunc("/", d.serveRPC)
	return mux
}

// request is the part of a JSON-RPC request the door reads before the SDK.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	ID      json.RawMessage `json:"id"`
	Params  json.RawMessage `json:"params"`
}

func (q request) id() any {
	var id any
	if len(q.ID) > 0 && json.Unmarshal(q.ID, &id) == nil {
		switch id.(type) {
		case string, float64:
			return id
		}
	}
	return nil
}

func (d *Door) serveRPC(w http.ResponseWriter, r *http.Request) {
	c := caller{seesAll: true}
	var scopes []string
	if a := d.cfg.Auth; a != nil {
		found, sc, ok := a.identify(r.Header.Get("Authorization"))
		if !ok {
			drain(r.Body)
			w.Header().Set("WWW-Authenticate", `Bearer realm="murmur"`)
			writeRPCError(w, http.StatusUnauthorized, nil, codeUnauthenticated, "this door needs a bearer token mur run minted for this session")
			return
		}
		c, scopes = found, sc
	}
	// Read after the token: a caller without one is answered 401 first.
	origin := Origin(r.Header.Get(OriginHeader))
	if origin == OriginPeer && !d.cfg.PeerTasks {
		drain(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, peerRefusal)
		return
	}
	if origin != OriginPeer && origin != OriginCompletion {
		origin = OriginClient
	}
	c.origin = origin
	c.traceparent, c.tracestate = r.Header.Get("traceparent"), r.Header.Get("tracestate")

	if r.URL.Path != "/" {
		drain(r.Body)
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		drain(r.Body)
		w.Header().Set("Allow", http.MethodPost)
		writeRPCError(w, http.StatusMethodNotAllowed, nil, codeInvalidRequest, "the door takes JSON-RPC requests by POST")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, d.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest,
				fmt.Sprintf("request body over %d bytes; send a smaller message", d.cfg.MaxBodyBytes))
			return
		}
		// A client that stalls or drops mid-body: nobody to answer.
		return
	}
	if !utf8.Valid(body) {
		writeRPCError(w, http.StatusOK, nil, codeParseError, "request body is not valid UTF-8")
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			writeRPCError(w, http.StatusOK, nil, codeInvalidRequest, "request is not a JSON-RPC 2.0 request object: "+err.Error())
			return
		}
		writeRPCError(w, http.StatusOK, nil, codeParseError, "request body is not JSON: "+err.Error())
		return
	}
	id := req.id()
	if req.JSONRPC != "2.0" || req.Method == "" {
		writeRPCError(w, http.StatusOK, id, codeInvalidRequest, `request is not a JSON-RPC 2.0 request object: want "jsonrpc":"2.0" and a method`)
		return
	}
	if v := requestedVersion(r); !versionSupported(v) {
		writeRPCError(w, http.StatusOK, id, codeVersionNotSupported,
			fmt.Sprintf("A2A-Version %s is not supported; this door speaks A2A %s (send the header A2A-Version: %s)", v, SupportedVersion, SupportedVersion))
		return
	}
	if d.cfg.Auth != nil && req.Method != MethodGetExtendedAgentCard && knownMethod(req.Method) && !slices.Contains(scopes, req.Method) {
		writeRPCError(w, http.StatusForbidden, id, codeUnauthorized,
			fmt.Sprintf("credential %q does not hold the scope %s; use a token whose network.authentication scopes list it", c.name, req.Method))
		return
	}
	if d.queue.Policy().Acceptance == lifecycle.AcceptNone {
		switch req.Method {
		case MethodSendMessage:
			writeRPCError(w, http.StatusOK, id, codeMethodNotFound, "this capsule takes no tasks over A2A (lifecycle.task_acceptance: none)")
			return
		case MethodSendStreamingMessage, MethodSubscribeToTask:
			writeRPCError(w, http.StatusOK, id, codeUnsupportedOp, "this capsule takes no tasks over A2A (lifecycle.task_acceptance: none)")
			return
		}
	}
	ctx := withCaller(r.Context(), c)
	switch req.Method {
	case MethodWatchSession:
		d.serveWatch(ctx, deadlineWriter(w, d.cfg.WriteTimeout), id)
		return
	case MethodStopSession:
		d.serveStop(ctx, w, id)
		return
	}
	r2 := r.WithContext(ctx)
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	d.rpc.ServeHTTP(deadlineWriter(w, d.cfg.WriteTimeout), r2)
}

// knownMethod reports whether m is a method a scope names.
func knownMethod(m string) bool {
	switch m {
	case MethodSendMessage, MethodSendStreamingMessage, MethodGetTask, MethodListTasks,
		MethodCancelTask, MethodSubscribeToTask, MethodWatchSession, MethodStopSession:
		return true
	}
	// Push notifications have no scope: the SDK answers every caller that
	// the door does not offer them (-32003).
	return false
}

// requestedVersion is the A2A-Version a request asks for; A2A 1.0 reads an
// absent header as 0.3.
func requestedVersion(r *http.Request) string {
	v := strings.TrimSpace(r.Header.Get("A2A-Version"))
	if v == "" {
		v = r.URL.Query().Get("A2A-Version")
	}
	if v == "" {
		return legacyVersion
	}
	return v
}

// versionSupported matches Major.Minor: a patch level is not part of the
// negotiated version.
func versionSupported(v string) bool {
	parts := strings.SplitN(v, ".", 3)
	return len(parts) >= 2 && parts[0]+"."+parts[1] == SupportedVersion
}

// deadlineWriter gives every write its own deadline, so a client that stops
// reading loses its response, or its stream, and nothing else.
func deadlineWriter(w http.ResponseWriter, d time.Duration) http.ResponseWriter {
	return &timedWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: d}
}

type timedWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (t *timedWriter) Write(p []byte) (int, error) {
	_ = t.rc.SetWriteDeadline(time.Now().Add(t.timeout))
	return t.ResponseWriter.Write(p)
}

func (t *timedWriter) Flush() {
	_ = t.rc.SetWriteDeadline(time.Now().Add(t.timeout))
	_ = t.rc.Flush()
}

func (t *timedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// serveWatch streams every task event of the session (murmur.WatchSession,
// the 0.3 stream/watch) until the client leaves or the door closes.
func (d *Door) serveWatch(ctx context.Context, w http.ResponseWriter, id any) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeRPCError(w, http.StatusInternalServerError, id, -32603, "streaming is not available on this connection")
		return
	}
	// Subscribe before the headers go out: a client that sees the stream
	// open sees every event after it (mur watch, then a task).
	events := d.watch()
	defer d.unwatch(events)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	keep := time.NewTicker(d.cfg.KeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-keep.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		case ev, ok := <-events:
			if !ok {
				return
			}
			result, err := json.Marshal(a2a.StreamResponse{Event: ev})
			if err != nil {
				continue
			}
			data, _ := json.Marshal(rpcEnvelope{JSONRPC: "2.0", ID: id, Result: result})
			if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// serveStop cancels every task on the session and reports the residue
// (murmur.StopSession, the 0.3 session/stop).
func (d *Door) serveStop(ctx context.Context, w http.ResponseWriter, id any) {
	res := d.Stop(ctx)
	if d.cfg.OnStop != nil {
		d.cfg.OnStop()
	}
	if res.Canceled == nil {
		res.Canceled = []string{}
	}
	if res.Rejected == nil {
		res.Rejected = []string{}
	}
	result, _ := json.Marshal(res)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(rpcEnvelope{JSONRPC: "2.0", ID: id, Result: result})
}
