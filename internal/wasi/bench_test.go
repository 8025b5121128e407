package wasi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/wasm/cm"
)

// BenchmarkStreamFileRead measures bytes per second through the
// input-stream a descriptor's read-via-stream hands out, in 64 KiB reads as
// wasi-libc issues them (host side, before cm converts the list<u8>).
func BenchmarkStreamFileRead(b *testing.B) {
	dir := b.TempDir()
	data := make([]byte, 64<<20)
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	p, err := OpenPreopen(".", dir, ".", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f, _, err := p.Open(".", "f", OpenFlags{Read: true})
		if err != nil {
			b.Fatal(err)
		}
		s := &fileInput{r: f}
		for {
			_, err := s.Read(64 << 10)
			if errors.Is(err, ErrStreamClosed) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
}

// BenchmarkStreamHTTPBody measures bytes per second of a response body read
// through the incoming-body stream from a loopback server.
func BenchmarkStreamHTTPBody(b *testing.B) {
	payload := strings.Repeat("x", 32<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(payload))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	a, _ := ParseAllow([]string{host})
	c, _ := NewCtx(Policy{Network: a})
	defer c.Close()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		h, _ := NewFields(nil)
		r := NewOutgoingRequest(h)
		r.Scheme, r.Authority, r.Path = "http", host, "/"
		f, herr := c.Handle(r, RequestOptions{})
		if herr != nil {
			b.Fatal(herr)
		}
		Block(context.Background(), f)
		resp, herr, _, _ := f.Get()
		if herr != nil {
			b.Fatal(herr)
		}
		body, _ := resp.Consume()
		s, _ := body.Stream()
		n := 0
		for {
			p, err := s.BlockingRead(context.Background(), 64<<10)
			n += len(p)
			if errors.Is(err, ErrStreamClosed) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		body.Close()
		if n != len(payload) {
			b.Fatalf("read %d", n)
		}
	}
}

// BenchmarkGuestFileRead measures bytes per second a guest receives
// reading a file through wasi:io streams end to end: host read, cm's
// list<u8> lowering into guest memory, and the guest's loop.
func BenchmarkGuestFileRead(b *testing.B) {
	for _, tc := range []struct {
		kind      string
		chunkSize uint64
	}{{"text", 4 << 10}, {"text", 64 << 10}, {"binary", 4 << 10}, {"binary", 64 << 10}} {
		chunkSize := tc.chunkSize
		b.Run(fmt.Sprintf("%s/chunk=%dKiB", tc.kind, chunkSize>>10), func(b *testing.B) {
			dir := b.TempDir()
			const size = 16 << 20
			if err := os.WriteFile(filepath.Join(dir, "f"), streamPayload(tc.kind, size), 0o644); err != nil {
				b.Fatal(err)
			}
			inst, _, _ := instantiate(b, "drain.wat", Policy{Workdir: dir})
			f, err := inst.Func("drain")
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			for b.Loop() {
				v, err := f.Call(context.Background(), cm.String("f"), cm.U64(chunkSize))
				if err != nil {
					b.Fatal(err)
				}
				if v.U64() != size {
					b.Fatalf("drained %d bytes", v.U64())
				}
			}
		})
	}
}

// BenchmarkGuestHTTPBody measures bytes per second of an HTTP response
// body from a loopback server read end to end by a WAT guest
// (httpdrain.wat): the runtime's wasi:http and streams path with no guest
// language's own work per chunk.
func BenchmarkGuestHTTPBody(b *testing.B) {
	const size = 16 << 20
	for _, kind := range []string{"text", "binary"} {
		payload := streamPayload(kind, size)
		for _, chunk := range []uint64{4 << 10, 64 << 10} {
			b.Run(fmt.Sprintf("%s/chunk=%dKiB", kind, chunk>>10), func(b *testing.B) {
				url, a := bodyServer(b, map[string][]byte{"body": payload})
				inst, _, _ := instantiate(b, "httpdrain.wat", Policy{Network: a})
				f, err := inst.Func("drain")
				if err != nil {
					b.Fatal(err)
				}
				authority := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
				b.SetBytes(size)
				for b.Loop() {
					v, err := f.Call(context.Background(), cm.String(authority), cm.String("/body"), cm.U64(chunk))
					if err != nil {
						b.Fatal(err)
					}
					if v.U64() != size {
						b.Fatalf("drained %d bytes", v.U64())
					}
				}
			})
		}
	}
}

// streamPayload is size bytes of the given kind: "text" is printable
// ASCII, the fast path's best case; "binary" is pseudo-random bytes, half
// of them ≥ 0x80, its worst case (each such byte is two bytes of UTF-8
// while it crosses as a latin1 string).
func streamPayload(kind string, size int) []byte {
	p := make([]byte, size)
	switch kind {
	case "text":
		for i := range p {
			p[i] = ' ' + byte(i%95)
		}
	case "binary":
		r := rand.New(rand.NewPCG(1, 2))
		for i := range p {
			p[i] = byte(r.Uint32())
		}
	}
	return p
}

// BenchmarkGuestGoStreams measures bytes per second through wasi:io
// streams for a real Go guest (built by make guests, via the preview1
// adapter and jco): a file read, a file write and an HTTP response body,
// each through the guest's own 64 KiB io.CopyBuffer loop. It needs
// MUR_GUEST_OUT (make bench-wasi-guests).
func BenchmarkGuestGoStreams(b *testing.B) {
	const size = 32 << 20
	for _, kind := range []string{"text", "binary"} {
		payload := streamPayload(kind, size)
		b.Run("file-read/"+kind, func(b *testing.B) {
			wd := b.TempDir()
			if err := os.WriteFile(filepath.Join(wd, "f"), payload, 0o644); err != nil {
				b.Fatal(err)
			}
			g := loadGuest(b, "wasi-probe-go.wasm", Policy{Workdir: wd})
			benchGuestOp(b, g, `{"op":"drain","arg":"f"}`, size)
		})
		b.Run("http-body/"+kind, func(b *testing.B) {
			url, a := bodyServer(b, map[string][]byte{"body": payload})
			g := loadGuest(b, "wasi-probe-go.wasm", Policy{Network: a})
			benchGuestOp(b, g, `{"op":"get","arg":"`+url+`body"}`, size)
		})
	}
	b.Run("file-write", func(b *testing.B) {
		wd := b.TempDir()
		g := loadGuest(b, "wasi-probe-go.wasm", Policy{Workdir: wd})
		benchGuestOp(b, g, fmt.Sprintf(`{"op":"fill","arg":"f","n":%d}`, size), size)
		if fi, err := os.Stat(filepath.Join(wd, "f")); err != nil || fi.Size() != size {
			b.Fatalf("written file: %v, %v", fi, err)
		}
	})
}

// benchGuestOp runs one probe op per iteration and checks it moved size
// bytes.
func benchGuestOp(b *testing.B, g *guest, input string, size int) {
	b.SetBytes(int64(size))
	g.call(b, input) // first call: the guest's runtime warms up
	for b.Loop() {
		st, data := g.call(b, input)
		if st != "passed" || data != strconv.Itoa(size) {
			b.Fatalf("%s: %s %q", input, st, data)
		}
	}
}

// BenchmarkGuestJSHTTPBody measures bytes per second of an HTTP response
// body a JS guest (componentize-js) reads with fetch and arrayBuffer: its
// allocator takes the streams fast path for reads. It needs MUR_GUEST_OUT.
func BenchmarkGuestJSHTTPBody(b *testing.B) {
	const size = 8 << 20
	for _, kind := range []string{"text", "binary"} {
		payload := streamPayload(kind, size)
		b.Run(kind, func(b *testing.B) {
			url, a := bodyServer(b, map[string][]byte{"body": payload})
			g := loadGuest(b, "wasi-probe-js.wasm", Policy{Network: a})
			benchGuestOp(b, g, "count:"+url+"body", size)
		})
	}
}

// BenchmarkGuestInstantiate measures a fresh store + WASI context +
// instantiation + one call of the tool's run export for toolchain-built
// guests (a plain Go tool, a Go guest linking net/http, the OpenAI driver,
// a JS guest), with
// wasmtime's on-demand allocator and with pooling. The compiled component
// comes from the compile cache, as in mur run. It needs MUR_GUEST_OUT.
func BenchmarkGuestInstantiate(b *testing.B) {
	for _, g := range []struct{ file, input string }{
		{"echo-go.wasm", "hi"},
		{"wasi-probe-go.wasm", `{"op":"env","arg":"X"}`},
		{"driver-openai.wasm", "{}"}, // refuses the empty request: no provider call
		{"echo-js.wasm", "hi"},
	} {
		for _, pooling := range []int{0, 8} {
			b.Run(fmt.Sprintf("%s/pooling=%d", strings.TrimSuffix(g.file, ".wasm"), pooling), func(b *testing.B) {
				wasm, err := os.ReadFile(filepath.Join(guestDir(b), g.file))
				if err != nil {
					b.Fatal(err)
				}
				e, err := cm.NewEngine(cm.Config{CacheDir: guestCache(b), Pooling: pooling})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				comp, err := e.Compile(wasm)
				if err != nil {
					b.Fatal(err)
				}
				l := e.NewLinker()
				if err := defineGuestLinker(l); err != nil {
					b.Fatal(err)
				}
				in := cm.Record(
					cm.Field{Name: "data", Val: cm.Some(cm.String(g.input))},
					cm.Field{Name: "log-path", Val: cm.None()},
				)
				ctx := context.Background()
				var samples []time.Duration
				for b.Loop() {
					start := time.Now()
					x, err := NewCtx(Policy{Workdir: b.TempDir()})
					if err != nil {
						b.Fatal(err)
					}
					s, err := e.NewStore(cm.Limits{MemoryBytes: 256 << 20}, x)
					if err != nil {
						b.Fatal(err)
					}
					inst, err := l.Instantiate(ctx, s, comp)
					if err != nil {
						b.Fatal(err)
					}
					run, err := inst.Func("murmur:tool/run@0.1.0", "run")
					if err != nil {
						b.Fatal(err)
					}
					if _, err := run.Call(ctx, in); err != nil {
						b.Fatal(err)
					}
					s.Close()
					x.Close()
					samples = append(samples, time.Since(start))
				}
				sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
				b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50-ms")
			})
		}
	}
}
