package mcp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/mcp"
)

// The benchmarks measure tools/call of the echo-go WASM tool (the Go
// guest SDK's smallest tool) end to end: the Go SDK's client, the
// transport, the admission, the capsule session's dispatch path (input
// check, the component call, the tool_call record in trace.jsonl) and
// back. They need the built guests (make guests drivers); the figures
// are in bench/RESULTS.md.

// benchCapsule publishes driver-openai and echo-go into a fresh HOME,
// installs a capsule that declares echo-go, and returns its manifest.
func benchCapsule(b *testing.B) string {
	b.Helper()
	guests := os.Getenv("MUR_GUEST_OUT")
	if guests == "" {
		guests = "../../build/guests"
	}
	root := b.TempDir()
	b.Setenv("HOME", filepath.Join(root, "home"))
	for _, a := range []struct{ src, name string }{{"../../drivers/driver-openai", "driver-openai"}, {"../../examples/echo-go", "echo-go"}} {
		wasm, err := os.ReadFile(filepath.Join(guests, a.name+".wasm"))
		if err != nil {
			b.Skipf("%s not built (make guests drivers): %v", a.name, err)
		}
		man, err := os.ReadFile(filepath.Join(a.src, "murmur.yaml"))
		if err != nil {
			b.Fatal(err)
		}
		dir := filepath.Join(root, "src", a.name)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "murmur.yaml"), man, 0o644)
		os.WriteFile(filepath.Join(dir, a.name+".wasm"), wasm, 0o644)
		zip := filepath.Join(root, a.name+".mur.zip")
		murMain(b, root, "build", dir, "-o", zip)
		murMain(b, root, "publish", zip, "--scope", "murmur")
	}
	capDir := filepath.Join(root, "cap")
	os.MkdirAll(capDir, 0o755)
	man := filepath.Join(capDir, "murmur.yaml")
	os.WriteFile(man, []byte(`name: bench-mcp
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: http://127.0.0.1:9/v1
      api_key: ${MUR_BENCH_KEY}
  - name: murmur/echo-go
    version: "0.1.0"
    runtime: tool
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
`), 0o644)
	b.Setenv("MUR_BENCH_KEY", "sk-bench-0123456789")
	murMain(b, capDir, "install")
	return man
}

func murMain(b *testing.B, dir string, args ...string) {
	b.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		b.Fatal(err)
	}
	defer os.Chdir(wd)
	var out bytes.Buffer
	if code := cli.Main(context.Background(), args, nil, &out, &out); code != 0 {
		b.Fatalf("mur %s: exit %d\n%s", strings.Join(args, " "), code, out.String())
	}
}

// measure calls echo-go b.N times (after a warm-up call) and reports the
// median and 90th percentile of one call's round trip.
func measure(b *testing.B, cs *sdk.ClientSession) {
	ctx := context.Background()
	args := map[string]any{"text": "hello"}
	call := func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo-go", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("call: %+v %v", res, err)
		}
	}
	call()
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		call()
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
}

// BenchmarkMurMCPStdio: mur mcp itself (cli.Main, in process) on a pipe
// pair, the SDK's client on the other end.
func BenchmarkMurMCPStdio(b *testing.B) {
	man := benchCapsule(b)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(context.Background(), []string{"mcp", "--manifest", man}, inR, outW, io.Discard)
		outW.Close()
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
		&sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	measure(b, cs)
	cs.Close()
	if code := <-done; code != 0 {
		b.Fatalf("mur mcp exited %d", code)
	}
}

// BenchmarkLoopbackHTTP: the process transport's loopback server on a
// capsule session, the SDK's streamable HTTP client with the token.
func BenchmarkLoopbackHTTP(b *testing.B) {
	man := benchCapsule(b)
	s, err := capsule.Open(context.Background(), capsule.Options{Manifest: man})
	if err != nil {
		b.Fatal(err)
	}
	l, err := mcp.ServeLoopback(s, mcp.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: l.URL, HTTPClient: &http.Client{Transport: bearer(l.Token)}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	measure(b, cs)
	cs.Close()
	l.Close()
	s.Close(capsule.Outcome{Status: "ok"})
}

type bearer string

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(t))
	return http.DefaultTransport.RoundTrip(r)
}
