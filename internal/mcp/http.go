package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/murmur/mur/internal/diag"
)

// Path is where the streamable HTTP endpoint is served.
const Path = "/mcp"

// Handler serves the streamable HTTP transport at Path to clients that
// present token as "Authorization: Bearer <token>". A request without it
// is refused 401 with E-MCP-001; a POST body is admitted as stdio lines
// are (413 when too large, 400 when not JSON-RPC), each with its coded
// JSON-RPC error as the body.
func (s *Server) Handler(token string) http.Handler {
	stream := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk },
		&sdk.StreamableHTTPOptions{MaxRequestBodyBytes: int64(s.limit) + 1})
	mux := http.NewServeMux()
	mux.Handle(Path, s.requireToken(token, s.admitBody(stream)))
	return mux
}

// requireToken refuses a request whose bearer token is not token. The
// SDK's auth.RequireBearerToken is built for OAuth (scopes, expiry) and
// answers an absent token with uncoded text; this is one shared secret.
func (s *Server) requireToken(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mur"`)
			refuse(w, http.StatusUnauthorized, &refusal{err: rpcError(codeInvalidRequest, diag.MCPToken,
				"this tool server needs the session's bearer token: send Authorization: Bearer <token>")})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// admitBody reads a POST body (to one byte past the limit) and admits it
// before the SDK sees it.
func (s *Server) admitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, int64(s.limit)+1))
		r.Body.Close()
		if err != nil {
			http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if rej := admit(body, s.limit); rej != nil {
			status := http.StatusBadRequest
			if len(body) > s.limit {
				status = http.StatusRequestEntityTooLarge
			}
			refuse(w, status, rej)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, status int, r *refusal) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(r.reply(), '\n'))
}

// NewToken returns a fresh bearer token: 32 random bytes, hex.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("mcp: bearer token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Loopback is a session's loopback tool server: streamable HTTP on
// 127.0.0.1 with its own bearer token, for a harness the session runs
// (spec 004, transport: process, "Tool dispatch").
type Loopback struct {
	// URL is the endpoint (http://127.0.0.1:PORT/mcp) and Token the bearer
	// token a client sends; hand both to the harness.
	URL   string
	Token string

	server *Server
	http   *http.Server
	done   chan error
}

// ServeLoopback starts serving tools on a free loopback port with a new
// token. Close it before the session closes: it waits for the call in
// progress.
func ServeLoopback(tools Tools, o Options) (*Loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mcp: loopback tool server: %w", err)
	}
	return ServeLoopbackOn(ln, tools, o)
}

// ServeLoopbackOn is ServeLoopback on a listener the caller made: the
// process transport listens inside the sandbox's network namespace, where
// the harness's 127.0.0.1 is. It closes ln when it fails.
func ServeLoopbackOn(ln net.Listener, tools Tools, o Options) (*Loopback, error) {
	token, err := NewToken()
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := NewServer(tools, o)
	l := &Loopback{
		URL: "http://" + ln.Addr().String() + Path, Token: token, server: s,
		http: &http.Server{Handler: s.Handler(token), ReadHeaderTimeout: 10 * time.Second},
		done: make(chan error, 1),
	}
	go func() { l.done <- l.http.Serve(ln) }()
	return l, nil
}

// Close stops the listener, ends open streams, and waits for the call in
// progress; no call runs after it returns.
func (l *Loopback) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := l.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// An SSE stream a client holds open does not end by itself.
		err = l.http.Close()
	}
	l.server.Close()
	if serr := <-l.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
