//go:build cgo

package cm

import (
	"context"
	"os"
	"sort"
	"sync"
	"testing"
	"time"
)

func BenchmarkCompileText(b *testing.B) {
	e := newEngine(b, Config{})
	text, _ := os.ReadFile("testdata/values.wat")
	wasm, err := Wat2Wasm(string(text))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		c, err := e.Compile(wasm)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

func BenchmarkCacheLoad(b *testing.B) {
	dir := b.TempDir()
	e := newEngine(b, Config{CacheDir: dir})
	text, _ := os.ReadFile("testdata/values.wat")
	wasm, _ := Wat2Wasm(string(text))
	if _, err := e.Compile(wasm); err != nil { // fills the cache
		b.Fatal(err)
	}
	for b.Loop() {
		c, err := e.Compile(wasm)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkInstantiateCall measures a fresh store + instantiate + no-op
// call, the cost of one short-lived guest, and reports the p50.
func BenchmarkInstantiateCall(b *testing.B) {
	for _, pooling := range []int{0, 16} {
		name := "ondemand"
		if pooling > 0 {
			name = "pooling"
		}
		b.Run(name, func(b *testing.B) {
			e := newEngine(b, Config{Pooling: pooling})
			c := fixture(b, e, "add.wat")
			l := addLinker(e)
			ctx := context.Background()
			var samples []time.Duration
			for b.Loop() {
				start := time.Now()
				s, err := e.NewStore(Limits{Deadline: time.Second}, nil)
				if err != nil {
					b.Fatal(err)
				}
				inst, err := l.Instantiate(ctx, s, c)
				if err != nil {
					b.Fatal(err)
				}
				f, _ := inst.Func("noop")
				if _, err := f.Call(ctx); err != nil {
					b.Fatal(err)
				}
				s.Close()
				samples = append(samples, time.Since(start))
			}
			sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
			b.ReportMetric(float64(samples[len(samples)/2].Microseconds()), "p50-µs")
		})
	}
}

func warmAdd(b *testing.B, e *Engine) *Func {
	c := fixture(b, e, "add.wat")
	s := newStore(b, e, Limits{}, nil)
	inst, err := addLinker(e).Instantiate(context.Background(), s, c)
	if err != nil {
		b.Fatal(err)
	}
	f, _ := inst.Func("add")
	return f
}

// BenchmarkWarmCall calls an export that calls a host import.
func BenchmarkWarmCall(b *testing.B) {
	e := newEngine(b, Config{})
	f := warmAdd(b, e)
	ctx := context.Background()
	for b.Loop() {
		if _, err := f.Call(ctx, U32(1), U32(2)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWarmCallParallel runs warm calls from two goroutines, one store
// each (stores are single-goroutine).
func BenchmarkWarmCallParallel(b *testing.B) {
	e := newEngine(b, Config{})
	var mu sync.Mutex
	b.SetParallelism(1) // GOMAXPROCS goroutines; 2 on the benchmark machine
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		f := warmAdd(b, e)
		mu.Unlock()
		ctx := context.Background()
		for pb.Next() {
			if _, err := f.Call(ctx, U32(1), U32(2)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkBytesThroughHost moves list<u8> chunks across the host-guest
// boundary through a host import, the shape of wasi:io/streams:
//   - write: the guest passes the chunk to the host (output-stream.write);
//   - read: the host returns the chunk to the guest (input-stream.read);
//   - echo: both, each byte crossing four times.
//
// Each export call also carries the chunk between Go and the guest, so the
// write and read figures include one extra crossing of the chunk.
func BenchmarkBytesThroughHost(b *testing.B) {
	for _, mode := range []string{"write", "read", "echo"} {
		for _, size := range []int{4 << 10, 64 << 10} {
			b.Run(mode+"/"+byteSize(size), func(b *testing.B) {
				e := newEngine(b, Config{})
				s := newStore(b, e, Limits{}, nil)
				chunk := Bytes(make([]byte, size))
				empty := Bytes(nil)
				l := echoLinker(e, nil)
				l.Func(nil, "echo-bytes", func(c *Caller, args []Val) (Val, error) {
					if mode == "write" {
						return empty, nil
					}
					if mode == "read" {
						return chunk, nil
					}
					return args[0], nil
				})
				inst, err := l.Instantiate(context.Background(), s, fixture(b, e, "values.wat"))
				if err != nil {
					b.Fatal(err)
				}
				f, _ := inst.Func("echo-bytes")
				arg := chunk
				if mode == "read" {
					arg = empty
				}
				ctx := context.Background()
				b.SetBytes(int64(size))
				for b.Loop() {
					if _, err := f.Call(ctx, arg); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func byteSize(n int) string {
	if n >= 1<<20 {
		return itoa(n>>20) + "MiB"
	}
	return itoa(n>>10) + "KiB"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
