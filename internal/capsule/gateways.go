package capsule

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/gateway"
	"github.com/murmur/mur/internal/manifest"
)

// gateways builds the credential gateway of every artifact entry that
// declares one, resolving each key reference before any session exists.
// installed answers an entry's own manifest (for upstream_auth); staging
// has already refused an entry without a usable block (E-RUN-025).
func gateways(c *manifest.Capsule, installed manifest.Installed, creds gateway.Credentials, getenv func(string) string) (map[string]*gateway.Gateway, diag.List) {
	metered := map[string]bool{}
	if inf := c.Inference; inf != nil {
		if inf.Driver != nil {
			metered[inf.Driver.Artifact] = true
		}
		for _, a := range inf.Alternates {
			metered[a.Driver.Artifact] = true
		}
	}
	out := map[string]*gateway.Gateway{}
	var ds diag.List
	for i, e := range c.Artifacts {
		if e.Gateway == nil {
			continue
		}
		field := fmt.Sprintf("artifacts[%d].gateway", i)
		u, err := url.Parse(e.Gateway.Endpoint)
		if err != nil {
			ds = append(ds, diag.New(diag.ManInvalid, c.Pos(field+".endpoint"), field+".endpoint", err.Error()))
			continue
		}
		own, ok := installed.Artifact(e.Name)
		if !ok || own.UpstreamAuth == nil {
			continue // reported by staging as E-RUN-025
		}
		spec := gateway.Spec{
			Artifact: e.Name, Endpoint: u,
			Auth:    gateway.Auth{Header: own.UpstreamAuth.Header, Value: own.UpstreamAuth.Value},
			Keyless: e.Gateway.Keyless != nil && *e.Gateway.Keyless,
			Metered: metered[e.Name],
		}
		if !spec.Keyless && e.Gateway.APIKey != nil {
			if name, ok := manifest.CredentialRef(*e.Gateway.APIKey); ok {
				spec.KeyRef = name
			} else {
				spec.Literal = *e.Gateway.APIKey
			}
		}
		g, res, err := gateway.New(spec, creds, getenv, nil)
		if err != nil {
			code := diag.ManInvalid
			if !errors.Is(err, gateway.ErrUnresolved) {
				code = diag.RunUpstreamAuth
			}
			ds = append(ds, diag.New(code, c.Pos(field+".api_key"), field+".api_key", err.Error()))
			continue
		}
		if res.EnvWarning {
			where := "a literal api_key in the manifest"
			if res.Source == gateway.SourceEnv {
				where = "the environment variable " + spec.KeyRef
			}
			ds = append(ds, diag.New(diag.SecKeyFromEnv, c.Pos(field+".api_key"), field+".api_key",
				fmt.Sprintf("artifact %q takes its key from %s, read once at launch; keep it in ~/.murmur/config.yaml instead (mur config set -g credentials.NAME VALUE) so it is re-read and never sits in a process environment", e.Name, where)))
		}
		out[e.Name] = g
	}
	return out, ds
}

// withModelEndpoint is c with every metered (driver) gateway sent to
// endpoint, keyless; c itself when endpoint is "". The copy shares all but
// the artifact entries it changes.
func withModelEndpoint(c *manifest.Capsule, endpoint string) *manifest.Capsule {
	if endpoint == "" || c.Inference == nil {
		return c
	}
	drivers := map[string]bool{}
	if c.Inference.Driver != nil {
		drivers[c.Inference.Driver.Artifact] = true
	}
	for _, a := range c.Inference.Alternates {
		drivers[a.Driver.Artifact] = true
	}
	cc := *c
	cc.Artifacts = append(cc.Artifacts[:0:0], c.Artifacts...)
	keyless := true
	for i, e := range cc.Artifacts {
		if e.Gateway == nil || !drivers[e.Name] {
			continue
		}
		g := *e.Gateway
		g.Endpoint, g.APIKey, g.Keyless = endpoint, nil, &keyless
		cc.Artifacts[i].Gateway = &g
	}
	return &cc
}

// httpHook gives a component's wasi:http requests to its own gateway: a
// request to 127.0.0.1:9 from the declaring artifact is the gateway's,
// everything else is checked against the allow-list as usual.
func httpHook(g *gateway.Gateway) func(*http.Request) (*http.Request, http.RoundTripper, error) {
	if g == nil {
		return nil
	}
	return func(r *http.Request) (*http.Request, http.RoundTripper, error) {
		if gateway.Matches(r.URL) {
			return r, g, nil
		}
		return r, nil, nil
	}
}

var osGetenv = os.Getenv
