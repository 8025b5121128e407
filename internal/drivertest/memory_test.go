package drivertest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/gateway"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
)

// driverMemoryBytes bounds driver-openai's linear memory over
// driverMemoryCalls calls. Its Go heap is tuned (internal/infer's
// gcPercent) because a linear memory never shrinks: with the runtime's
// default GOGC the component needs 41–42 MB for these calls and a memory
// limit of 39 MB stops it within the first 50; tuned, 38 MB is enough.
const (
	driverMemoryBytes = 39 << 20
	driverMemoryCalls = 300
)

// TestDriverLinearMemoryBounded: driver-openai serves driverMemoryCalls
// calls, one instance, within driverMemoryBytes of linear memory (a
// capsule's capabilities.limits.memory_bytes, as wasmtime enforces it).
func TestDriverLinearMemoryBounded(t *testing.T) {
	w := wires[1]
	c := compiled(t, w.name)
	srv := providertest.Start(t, stepsFor(driverMemoryCalls)...)
	u, err := url.Parse(srv.URL + w.base)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := gateway.New(gateway.Spec{Artifact: "murmur/" + w.name, Endpoint: u, Auth: upstreamAuth(t, w.name),
		Metered: true, Literal: testKey}, nil, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{t: t}
	for k, v := range g.Env(true) {
		in.env = append(in.env, [2]string{k, v})
	}
	in.env = append(in.env, [2]string{"MURMUR_INFERENCE_MODEL", w.model})
	hook := func(req *http.Request) (*http.Request, http.RoundTripper, error) {
		if gateway.Matches(req.URL) {
			return req, g, nil
		}
		return nil, nil, errors.New("only the gateway is reachable")
	}
	inst, err := runtime(t).Instantiate(context.Background(), c, component.Options{Name: "murmur/" + w.name,
		Policy: wasi.Policy{Env: in.env, HTTPHook: hook, Stdout: &in.stdout, Stderr: &in.stderr},
		Limits: cm.Limits{Deadline: 60 * time.Second, MemoryBytes: driverMemoryBytes}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	in.inst = inst
	if in.tool, err = inst.Tool(); err != nil {
		t.Fatal(err)
	}
	for i := range driverMemoryCalls {
		o, err := in.try(request(w.model, "hi"))
		if err != nil || o.res.Status != component.StatusPassed {
			t.Fatalf("call %d within %d MB of linear memory: %v %s %q", i+1, driverMemoryBytes>>20, err, o.res.Status, o.summary())
		}
	}
}
