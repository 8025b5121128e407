package providertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/infer"
	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp/nethttp"
)

// Wire shapes a Driver speaks.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
)

// Driver runs the driver components' own translation (internal/infer) on
// the host, over a host http.Client, so the agent loop's tests exercise
// the code murmur/driver-anthropic and murmur/driver-openai ship without
// building WASM. What the component's host would add, the Driver adds
// itself: the credential gateway's key header and the chunk stream.
type Driver struct {
	Wire string // Anthropic or OpenAI
	// Endpoint is the provider's base address, as a provider's
	// documentation gives it (the OpenAI wire's /v1 is added here, as an
	// operator's driver config would carry it).
	Endpoint string
	// APIKey is injected on every request as the credential gateway
	// would: x-api-key on the Anthropic wire, a bearer token on OpenAI's.
	APIKey string
	Client *http.Client
	// Stream asks the provider for a server-sent event stream (the
	// request's driver config "stream"); OnText then receives each text
	// delta, as the host's murmur:text/chunks does.
	Stream bool
	OnText func(string)

	// conv is the instance's continuation state, as a component instance
	// keeps it between calls.
	once sync.Once
	conv *infer.Conversations
}

// Run implements agent.Driver.
func (d *Driver) Run(ctx context.Context, data []byte) (agent.Result, error) {
	var p infer.Provider
	endpoint := d.Endpoint
	switch d.Wire {
	case Anthropic:
		p = infer.Anthropic{}
	case OpenAI:
		p, endpoint = infer.OpenAI{}, endpoint+"/v1"
	default:
		return agent.Result{}, fmt.Errorf("driver double: unknown wire %q", d.Wire)
	}
	d.once.Do(func() { d.conv = &infer.Conversations{} })
	in, err := d.withStream(data)
	if err != nil {
		// The component would read the same bytes and refuse them; let
		// infer say so in its own words.
		in = string(data)
	}
	client := d.Client
	if client == nil {
		client = http.DefaultClient
	}
	env := infer.Env{
		Endpoint: endpoint,
		Send:     nethttp.FromClient(&http.Client{Transport: gateway{wire: d.Wire, key: d.APIKey, next: transport(client)}, Timeout: client.Timeout}),
	}
	if d.OnText != nil {
		env.Emit = func(s string) error { d.OnText(s); return nil }
	}
	return toAgent(infer.Serve(ctx, p, d.conv, env, tool.Input{Data: &in})), nil
}

// withStream sets the request's driver config "stream" to d.Stream: the
// double's Stream field is the operator's config switch.
func (d *Driver) withStream(data []byte) (string, error) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(data, &req); err != nil {
		return "", err
	}
	cfg := map[string]json.RawMessage{}
	if c, ok := req["config"]; ok && string(c) != "null" {
		if err := json.Unmarshal(c, &cfg); err != nil {
			return "", err
		}
	}
	cfg["stream"] = json.RawMessage(fmt.Sprint(d.Stream))
	var err error
	if req["config"], err = json.Marshal(cfg); err != nil {
		return "", err
	}
	b, err := json.Marshal(req)
	return string(b), err
}

// toAgent maps the component's tool-result to the host's.
func toAgent(r tool.Result) agent.Result {
	out := agent.Result{Truncated: r.Truncated, Metadata: r.Metadata}
	switch r.Status {
	case tool.StatusPassed:
		out.Status = agent.StatusPassed
	case tool.StatusFailed:
		out.Status = agent.StatusFailed
	default:
		out.Status = agent.StatusError
	}
	if r.Summary != nil {
		out.Summary = *r.Summary
	}
	if r.Data != nil {
		out.Data = *r.Data
	}
	if r.DataPath != nil {
		out.DataPath = *r.DataPath
	}
	return out
}

func transport(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// gateway adds the provider key to each request, as the credential
// gateway does for a component that never holds it.
type gateway struct {
	wire, key string
	next      http.RoundTripper
}

func (g gateway) RoundTrip(r *http.Request) (*http.Response, error) {
	if g.key == "" {
		return g.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	if g.wire == Anthropic {
		r.Header.Set("x-api-key", g.key)
	} else {
		r.Header.Set("Authorization", "Bearer "+g.key)
	}
	return g.next.RoundTrip(r)
}
