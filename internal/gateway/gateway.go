// Package gateway is the credential gateway: it keeps an artifact's upstream
// key on the host side. The artifact talks to http://127.0.0.1:9 (handed to
// it as MURMUR_GATEWAY_ENDPOINT); its wasi:http request is readdressed here
// at the declared upstream, the artifact's own copy of the credential header
// is removed, and exactly one header rendered from upstream_auth is
// attached. The key never enters the component.
package gateway

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/murmur/mur/internal/manifest"
)

// Address is the fixed loopback address artifacts send gateway requests
// to. Port 9 (discard) is never served, so a request that escapes the
// readdressing fails rather than reaching something by accident.
const Address = "127.0.0.1:9"

// EndpointEnv and InferenceEnv are the variables handed to the declaring
// artifact; the second only to a driver serving agent-loop calls.
const (
	EndpointEnv  = "MURMUR_GATEWAY_ENDPOINT"
	InferenceEnv = "MURMUR_INFERENCE_ENDPOINT"
)

// ErrNoKey means a keyed gateway has no key to attach: the configured
// credential was removed while the capsule ran and nothing else provides it.
var ErrNoKey = errors.New("gateway has no key")

// Source says where a gateway's key comes from; recorded as
// credential_source in session_start.gateways.
type Source string

const (
	SourceConfig  Source = "config"  // credentials.<NAME> in ~/.murmur/config.yaml, re-read
	SourceEnv     Source = "env"     // the environment variable, read once at launch
	SourceLiteral Source = "literal" // a literal api_key in the manifest
	SourceKeyless Source = "keyless" // keyless: true, no header attached
)

// Auth is an artifact's upstream_auth block: the header and a value
// template holding {key} exactly once.
type Auth struct {
	Header string
	Value  string
}

// render returns the header value with the key substituted.
func (a Auth) render(key string) string { return strings.Replace(a.Value, "{key}", key, 1) }

// Credentials reads credentials.<NAME> from ~/.murmur/config.yaml. It is
// called on every request, so a key rotated with `mur config set -g` is used
// on the next one; implementations should make an unchanged file cheap.
type Credentials interface {
	Credential(name string) (value string, ok bool, err error)
}

// Spec is one artifact's gateway as the capsule manifest and the artifact's
// own manifest declare it.
type Spec struct {
	Artifact string   // the entry's name, for messages and the trace
	Endpoint *url.URL // gateway.endpoint, already validated by the manifest
	Auth     Auth     // upstream_auth from the artifact's own manifest
	// KeyRef is NAME for api_key: ${NAME}; Literal is a literal api_key.
	// Neither is set for a keyless gateway.
	KeyRef  string
	Literal string
	Keyless bool
	// Metered marks the inference driver's and alternates' gateways, whose
	// tokens count against the spend ceilings.
	Metered bool
}

// Gateway is one artifact's live gateway.
type Gateway struct {
	spec   Spec
	source Source
	creds  Credentials
	base   http.RoundTripper

	mu     sync.Mutex
	envKey string // launch-time value for SourceEnv (and the fallback after removal)
	// onReject, when set, is told of every 401 the upstream returns after
	// the retry; the agent loop uses it to fail the serving driver's task
	// with E-RUN-027.
	onReject func(artifact string)
}

// Resolution is the outcome of resolving a gateway's key at launch.
type Resolution struct {
	Source Source
	// EnvWarning is set when the key was read from the environment or a
	// literal, which the caller reports as W-SEC-027.
	EnvWarning bool
}

// ErrUnresolved means a ${NAME} reference resolves neither from the config
// file nor from the environment; mur run refuses with E-MAN-003.
var ErrUnresolved = errors.New("credential reference unresolved")

// unresolvedError is ErrUnresolved worded as mur doctor words it, so a
// refused launch and doctor print the same line.
type unresolvedError string

func (e unresolvedError) Error() string        { return string(e) }
func (e unresolvedError) Is(target error) bool { return target == ErrUnresolved }

// New resolves spec's key before any session exists (config file first,
// then the environment) and returns the gateway. getenv is os.Getenv in
// production. base carries the readdressed requests; nil means a transport
// that trusts only the system's public roots.
func New(spec Spec, creds Credentials, getenv func(string) string, base http.RoundTripper) (*Gateway, Resolution, error) {
	g := &Gateway{spec: spec, creds: creds, base: base}
	if g.base == nil {
		g.base = defaultTransport()
	}
	var res Resolution
	switch {
	case spec.Keyless:
		res.Source = SourceKeyless
	case spec.KeyRef != "":
		if creds != nil {
			v, ok, err := creds.Credential(spec.KeyRef)
			if err != nil {
				return nil, res, fmt.Errorf("artifact %q gateway.api_key: reading credentials.%s: %w", spec.Artifact, spec.KeyRef, err)
			}
			if ok && v != "" {
				res.Source = SourceConfig
				break
			}
		}
		if v := getenv(spec.KeyRef); v != "" {
			g.envKey = v
			res.Source = SourceEnv
			res.EnvWarning = true
			break
		}
		return nil, res, unresolvedError(manifest.UnsetKeyMessage(spec.Artifact, spec.KeyRef))
	default:
		g.envKey = spec.Literal
		res.Source = SourceLiteral
		res.EnvWarning = true
	}
	g.source = res.Source
	return g, res, nil
}

// OnReject registers f to be called with the artifact's name when its
// upstream still answers 401 after the single retry.
func (g *Gateway) OnReject(f func(artifact string)) {
	g.mu.Lock()
	g.onReject = f
	g.mu.Unlock()
}

// Env returns the variables the declaring artifact receives. inference is
// true for a driver serving agent-loop calls.
func (g *Gateway) Env(inference bool) map[string]string {
	v := "http://" + Address + strings.TrimSuffix(g.spec.Endpoint.EscapedPath(), "/")
	env := map[string]string{EndpointEnv: v}
	if inference {
		env[InferenceEnv] = v
	}
	return env
}

// Matches reports whether u addresses the gateway (http://127.0.0.1:9).
func Matches(u *url.URL) bool {
	return u != nil && u.Scheme == "http" && u.Host == Address
}

// Record is the session_start.gateways entry for this gateway. It names the
// artifact, the upstream origin and where the key comes from; never the key.
func (g *Gateway) Record() map[string]any {
	return map[string]any{
		"artifact":          g.spec.Artifact,
		"endpoint":          g.spec.Endpoint.String(),
		"header":            g.spec.Auth.Header,
		"credential_source": string(g.source),
		"metered":           g.spec.Metered,
	}
}

// Spec returns what the gateway was built from.
func (g *Gateway) Spec() Spec { return g.spec }

// key returns the key to attach now. A config-file key is re-read on every
// call; when the entry was removed the launch-time environment value, if
// any, is used instead.
func (g *Gateway) key() (string, error) {
	switch g.source {
	case SourceKeyless:
		return "", nil
	case SourceConfig, SourceEnv:
		if g.spec.KeyRef != "" && g.creds != nil {
			v, ok, err := g.creds.Credential(g.spec.KeyRef)
			if err != nil {
				return "", fmt.Errorf("artifact %q: reading credentials.%s: %w", g.spec.Artifact, g.spec.KeyRef, err)
			}
			if ok && v != "" {
				return v, nil
			}
		}
	}
	if g.envKey != "" {
		return g.envKey, nil
	}
	return "", fmt.Errorf("%w: artifact %q: credentials.%s was removed from ~/.murmur/config.yaml and %s was not set at launch",
		ErrNoKey, g.spec.Artifact, g.spec.KeyRef, g.spec.KeyRef)
}

// RoundTrip sends a request the artifact addressed to 127.0.0.1:9 to the
// upstream. The request keeps its own path and query; scheme, host and port
// come from gateway.endpoint. Redirects are returned, never followed. A 401
// is retried once when the key changed since it was sent.
func (g *Gateway) RoundTrip(req *http.Request) (*http.Response, error) {
	if !Matches(req.URL) {
		return nil, fmt.Errorf("gateway %q: request to %s does not address %s", g.spec.Artifact, req.URL.Redacted(), Address)
	}
	key, err := g.key()
	if err != nil {
		return nil, err
	}
	body, replay, err := replayableBody(req)
	if err != nil {
		return nil, err
	}
	resp, err := g.base.RoundTrip(g.outgoing(req, key, body))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusUnauthorized || g.source == SourceKeyless {
		return resp, nil
	}
	// One retry after a 401, and only with a key that differs from the one
	// just refused: a rotated key is picked up without a second failure.
	if fresh, kerr := g.key(); kerr == nil && fresh != key && replay != nil {
		if b, rerr := replay(); rerr == nil {
			drain(resp)
			resp, err = g.base.RoundTrip(g.outgoing(req, fresh, b))
			if err != nil {
				return nil, err
			}
		}
	}
	if resp.StatusCode == http.StatusUnauthorized {
		g.mu.Lock()
		f := g.onReject
		g.mu.Unlock()
		if f != nil {
			f(g.spec.Artifact)
		}
	}
	return resp, nil
}

// outgoing builds the readdressed request with exactly one credential
// header (none when keyless).
func (g *Gateway) outgoing(in *http.Request, key string, body io.ReadCloser) *http.Request {
	out := in.Clone(in.Context())
	u := *in.URL
	u.Scheme = g.spec.Endpoint.Scheme
	u.Host = g.spec.Endpoint.Host
	u.User = nil
	out.URL = &u
	out.Host = u.Host
	out.Body = body
	out.RequestURI = ""
	for name := range out.Header {
		if strings.EqualFold(name, g.spec.Auth.Header) {
			delete(out.Header, name)
		}
	}
	if g.source != SourceKeyless {
		out.Header.Set(g.spec.Auth.Header, g.spec.Auth.render(key))
	}
	return out
}

// replayableBody returns the body to send first and, when the request
// allows it, a function that yields a fresh copy for the retry.
func replayableBody(req *http.Request) (io.ReadCloser, func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }, nil
	}
	if req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, nil, err
		}
		return b, req.GetBody, nil
	}
	// A streaming body cannot be replayed; the 401 goes back as it is.
	return req.Body, nil, nil
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// defaultTransport trusts only the system roots: an upstream with a
// private-CA certificate fails the TLS handshake and receives nothing.
func defaultTransport() http.RoundTripper {
	return &http.Transport{
		Proxy:             nil,
		DialContext:       (&net.Dialer{}).DialContext,
		ForceAttemptHTTP2: true,
	}
}
