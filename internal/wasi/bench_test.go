package wasi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	for _, chunkSize := range []uint64{4 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("chunk=%dKiB", chunkSize>>10), func(b *testing.B) {
			dir := b.TempDir()
			const size = 16 << 20
			if err := os.WriteFile(filepath.Join(dir, "f"), make([]byte, size), 0o644); err != nil {
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
