package wasi

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"path/filepath"
	"strings"
)

// ErrPolicy is the kind of every policy that cannot be turned into a
// context (a bad scope, a read-only entry that escapes, a missing directory).
var ErrPolicy = errors.New("invalid wasi policy")

// Policy is everything one store's guest may reach through WASI. Anything it
// does not grant is denied: no Workdir means no "." preopen, a nil Network
// means no IP destination, nil writers discard output.
type Policy struct {
	// Workdir is the host directory the capsule's work folder lives in.
	Workdir string
	// Scope is filesystem.scope, relative to Workdir; "" and "." grant the
	// whole workdir. The granted directory is preopened as ".".
	Scope string
	// ReadOnly lists workdir-relative subtrees (filesystem.read_only) that
	// refuse writes with the WASI "access" error.
	ReadOnly []string
	// StateDir, when set, is the durable store directory preopened as "state".
	StateDir string

	// Env is the complete environment the guest sees, in order: the
	// runtime's own injections plus the capabilities.env.allow names the host
	// sets. The host process's environment is never read here.
	Env [][2]string
	// Args is the guest's argv.
	Args []string
	// Cwd is reported by wasi:cli/environment.initial-cwd; "" reports none.
	Cwd string

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// Network is the parsed network.allow list; nil denies every destination.
	Network *Allow
	// HTTPHook, when set, sees every outgoing wasi:http request before the
	// allow-list (the credential gateway readdresses http://127.0.0.1:9 and
	// attaches keys here; tracing adds traceparent).
	HTTPHook HTTPHook
	// TLSRoots replaces the system roots for wasi:http's own transport
	// (tests with a private CA); nil uses the system trust store.
	TLSRoots *x509.CertPool
}

// HTTPHook sees an outgoing request before it is checked and sent. It
// returns the request to send and, when it takes the request over, the
// RoundTripper that sends it; that RoundTripper is then the request's grant
// (the credential gateway) and network.allow is not consulted. With a nil
// RoundTripper the request is checked against network.allow and sent by the
// host's own transport. An error refuses the request with
// HTTP-request-denied.
type HTTPHook func(*http.Request) (*http.Request, http.RoundTripper, error)

// cleanRel checks that p is relative and stays under its base, and returns
// it cleaned with "/" separators ("." for the base itself).
func cleanRel(field, p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return ".", nil
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%s %q is absolute; give a workdir-relative path: %w", field, p, ErrPolicy)
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%s %q escapes the workdir through ..: %w", field, p, ErrPolicy)
	}
	return c, nil
}

// underSubtree reports whether rel (cleaned, workdir-relative) is entry or
// lies beneath it, matched a path component at a time.
func underSubtree(rel, entry string) bool {
	if entry == "." {
		return true
	}
	return rel == entry || strings.HasPrefix(rel, entry+"/")
}
