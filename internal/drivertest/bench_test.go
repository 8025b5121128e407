package drivertest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/wasm/cm"
)

// stepsFor scripts n streamed text answers.
func stepsFor(n int) []providertest.Step {
	steps := make([]providertest.Step, n)
	for i := range steps {
		steps[i] = providertest.Step{Text: "A short streamed answer of a few deltas.", InputTokens: 20, OutputTokens: 9}
	}
	return steps
}

// BenchmarkDriverCall is one streamed inference call through a driver
// component, the gateway and loopback HTTP to the provider double.
func BenchmarkDriverCall(b *testing.B) {
	for _, w := range wires {
		b.Run(w.name, func(b *testing.B) {
			srv := providertest.Start(b, stepsFor(b.N+1)...)
			in := start(b, w, setup{Upstream: srv.URL + w.base, Key: testKey})
			req := request(w.model, "hi")
			b.ResetTimer()
			for range b.N {
				if o := in.call(req); o.res.Status != component.StatusPassed {
					b.Fatalf("%s %q", o.res.Status, o.summary())
				}
			}
		})
	}
}

// BenchmarkHostDriverCall is the same call made by the Go driver double on
// the host: the difference is the component's own cost per call.
func BenchmarkHostDriverCall(b *testing.B) {
	for _, wireName := range []string{providertest.Anthropic, providertest.OpenAI} {
		b.Run(wireName, func(b *testing.B) {
			srv := providertest.Start(b, stepsFor(b.N+1)...)
			d := &providertest.Driver{Wire: wireName, Endpoint: srv.URL, APIKey: testKey, Stream: true, OnText: func(string) {}}
			data := []byte(`{"format":"murmur.inference/v1","model":"m","system":"s","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[],"max_tokens":256}`)
			b.ResetTimer()
			for range b.N {
				if r, err := d.Run(context.Background(), data); err != nil || r.Status != "passed" {
					b.Fatalf("%v %+v", err, r)
				}
			}
		})
	}
}

// BenchmarkDriverLoad is a launch's share of a driver: loading the
// compiled component from a warm compile cache and instantiating it.
func BenchmarkDriverLoad(b *testing.B) {
	for _, w := range wires {
		b.Run(w.name, func(b *testing.B) {
			raw, err := os.ReadFile(filepath.Join(guestDir(), w.name+".wasm"))
			if err != nil {
				b.Skipf("driver %s not built: %v", w.name, err)
			}
			cache := filepath.Join(os.TempDir(), "mur-test-compile-cache")
			warm, err := component.New(cm.Config{CacheDir: cache})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := warm.Compile(raw); err != nil {
				b.Fatal(err)
			}
			warm.Close()
			b.ResetTimer()
			for range b.N {
				r, err := component.New(cm.Config{CacheDir: cache})
				if err != nil {
					b.Fatal(err)
				}
				c, err := r.Compile(raw)
				if err != nil {
					b.Fatal(err)
				}
				inst, err := r.Instantiate(context.Background(), c, component.Options{Name: w.name, Limits: cm.Limits{Deadline: 30 * time.Second}})
				if err != nil {
					b.Fatal(err)
				}
				inst.Close()
				r.Close()
			}
		})
	}
}
