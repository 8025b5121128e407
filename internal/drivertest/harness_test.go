// Package drivertest runs the built driver components
// (build/guests/driver-anthropic.wasm, driver-openai.wasm, from
// `make drivers`) under the component host, with the credential gateway in
// front of a provider on loopback: the scripted double of
// internal/providertest, or the independent aimock server
// (`make test-drivers-aimock`). The tests skip when a component is not
// built unless MUR_REQUIRE_GUESTS=1.
package drivertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/gateway"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
)

// testKey is the upstream credential; no byte of it may reach the guest.
const testKey = "sk-murmur-test-7f3a9c1e5b"

// wire describes one driver for the table tests.
type wire struct {
	name  string // component and directory name
	model string
	// base is the path gateway.endpoint carries before the driver's own
	// request path (/v1 for OpenAI-style endpoints).
	base string
}

var wires = []wire{
	{name: "driver-anthropic", model: "claude-opus-4-5", base: ""},
	{name: "driver-openai", model: "gpt-5", base: "/v1"},
}

var (
	rtOnce sync.Once
	rt     *component.Runtime
	rtErr  error
	comps  sync.Map // name -> *cm.Component
)

// runtime is shared by the package's tests; its compile cache outlives the
// run, keyed by the component's digest, as internal/component's guest
// tests do.
func runtime(t testing.TB) *component.Runtime {
	t.Helper()
	rtOnce.Do(func() {
		rt, rtErr = component.New(cm.Config{CacheDir: filepath.Join(os.TempDir(), "mur-test-compile-cache")})
	})
	if rtErr != nil {
		t.Fatal(rtErr)
	}
	return rt
}

func guestDir() string {
	if d := os.Getenv("MUR_GUEST_OUT"); d != "" {
		return d
	}
	return "../../build/guests"
}

// compiled returns the named driver component, skipping the test when it
// is not built (failing under MUR_REQUIRE_GUESTS=1).
func compiled(t testing.TB, name string) *cm.Component {
	t.Helper()
	if c, ok := comps.Load(name); ok {
		return c.(*cm.Component)
	}
	b, err := os.ReadFile(filepath.Join(guestDir(), name+".wasm"))
	if err != nil {
		if os.Getenv("MUR_REQUIRE_GUESTS") != "" {
			t.Fatalf("driver %s not built: %v", name, err)
		}
		t.Skipf("driver %s not built (run make drivers): %v", name, err)
	}
	c, err := runtime(t).Compile(b)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	comps.Store(name, c)
	return c
}

// upstreamAuth reads the driver's own murmur.yaml, as the runtime does to
// build its gateway.
func upstreamAuth(t testing.TB, name string) gateway.Auth {
	t.Helper()
	file := filepath.Join("../../drivers", name, "murmur.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	a, ds := manifest.ParseArtifact(file, data)
	if a == nil || ds.HasErrors() {
		t.Fatalf("%s: %v", file, ds)
	}
	if a.UpstreamAuth == nil {
		t.Fatalf("%s has no upstream_auth", file)
	}
	return gateway.Auth{Header: a.UpstreamAuth.Header, Value: a.UpstreamAuth.Value}
}

// setup is one driver instance behind a gateway.
type setup struct {
	Upstream string // gateway.endpoint
	Key      string // "" for keyless
	// ArtifactConfig is MURMUR_ARTIFACT_CONFIG; "" leaves it unset.
	ArtifactConfig string
}

// instance is a running driver component.
type instance struct {
	t      testing.TB
	inst   *component.Instance
	tool   *component.Tool
	env    [][2]string
	stdout bytes.Buffer
	stderr bytes.Buffer

	mu sync.Mutex
	// sent holds the headers of each request as the guest sent it, before
	// the gateway readdressed it.
	sent []http.Header
}

func start(t testing.TB, w wire, s setup) *instance {
	t.Helper()
	c := compiled(t, w.name)
	u, err := url.Parse(s.Upstream)
	if err != nil {
		t.Fatal(err)
	}
	spec := gateway.Spec{Artifact: "murmur/" + w.name, Endpoint: u, Auth: upstreamAuth(t, w.name), Metered: true}
	if s.Key == "" {
		spec.Keyless = true
	} else {
		spec.Literal = s.Key
	}
	g, _, err := gateway.New(spec, nil, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{t: t}
	for k, v := range g.Env(true) {
		in.env = append(in.env, [2]string{k, v})
	}
	in.env = append(in.env, [2]string{"MURMUR_INFERENCE_MODEL", w.model}, [2]string{"MURMUR_INFERENCE_DRIVER", "primary"})
	if s.ArtifactConfig != "" {
		in.env = append(in.env, [2]string{"MURMUR_ARTIFACT_CONFIG", s.ArtifactConfig})
	}
	hook := func(req *http.Request) (*http.Request, http.RoundTripper, error) {
		in.mu.Lock()
		in.sent = append(in.sent, req.Header.Clone())
		in.mu.Unlock()
		if gateway.Matches(req.URL) {
			return req, g, nil
		}
		return nil, nil, errors.New("only the gateway is reachable")
	}
	inst, err := runtime(t).Instantiate(context.Background(), c, component.Options{
		Name:   "murmur/" + w.name,
		Policy: wasi.Policy{Env: in.env, HTTPHook: hook, Stdout: &in.stdout, Stderr: &in.stderr},
		Limits: cm.Limits{Deadline: 60 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	in.inst = inst
	in.tool, err = inst.Tool()
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// outcome is one call's result and the text it streamed.
type outcome struct {
	res    component.ToolResult
	chunks []string
}

func (o outcome) meta(k string) string {
	v, _ := o.res.Meta(k)
	return v
}

func (o outcome) summary() string {
	if o.res.Summary == nil {
		return ""
	}
	return *o.res.Summary
}

// response decodes a passed result's data.
func (o outcome) response(t *testing.T) response {
	t.Helper()
	if o.res.Status != component.StatusPassed || o.res.Data == nil {
		t.Fatalf("result %s: %q %v", o.res.Status, o.summary(), o.res.Metadata)
	}
	var r response
	if err := json.Unmarshal([]byte(*o.res.Data), &r); err != nil {
		t.Fatalf("data %q: %v", *o.res.Data, err)
	}
	return r
}

type response struct {
	Text      string `json:"text"`
	ToolCalls []struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"tool_calls"`
	StopReason string `json:"stop_reason"`
}

// call runs one inference call, collecting the chunks the guest emits.
func (in *instance) call(req any) outcome {
	in.t.Helper()
	o, err := in.try(req)
	if err != nil {
		in.t.Fatalf("run: %v", err)
	}
	return o
}

// try is call, returning the error of a call that trapped.
func (in *instance) try(req any) (outcome, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return outcome{}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan string, 1024)
	var chunks []string
	done := make(chan struct{})
	go func() {
		for c := range ch {
			chunks = append(chunks, c)
		}
		close(done)
	}()
	in.inst.SetHost(&component.Host{Text: component.TextChan{Ctx: ctx, C: ch}})
	s := string(data)
	res, err := in.tool.Run(ctx, component.ToolInput{Data: &s})
	close(ch)
	<-done
	return outcome{res: res, chunks: chunks}, err
}

// guestSaw is everything the guest could read or produce: its
// environment, its output streams, the headers it sent, and the result.
func (in *instance) guestSaw(outs ...outcome) string {
	var b strings.Builder
	for _, kv := range in.env {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
	}
	b.WriteString(in.stdout.String())
	b.WriteString(in.stderr.String())
	in.mu.Lock()
	for _, h := range in.sent {
		for k, v := range h {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(v, ","))
		}
	}
	in.mu.Unlock()
	for _, o := range outs {
		fmt.Fprintf(&b, "%s %q %v %q\n", o.res.Status, o.summary(), o.res.Metadata, o.chunks)
		if o.res.Data != nil {
			b.WriteString(*o.res.Data)
		}
	}
	return b.String()
}

// request is a contract request with a user message.
func request(model, user string) map[string]any {
	return map[string]any{
		"format":     "murmur.inference/v1",
		"model":      model,
		"system":     "You are terse.",
		"messages":   []any{userText(user)},
		"tools":      []any{},
		"max_tokens": 256,
	}
}

func userText(s string) map[string]any {
	return map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": s}}}
}
