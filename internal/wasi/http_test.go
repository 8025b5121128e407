package wasi

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// tlsServer starts an HTTPS server with its own test CA and returns a Ctx
// trusting that CA with network.allow set to allow.
func tlsServer(t *testing.T, h http.Handler, allow func(u *url.URL) []string, hook HTTPHook) (*httptest.Server, *Ctx) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	a, err := ParseAllow(allow(u))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	c, err := NewCtx(Policy{Network: a, TLSRoots: roots, HTTPHook: hook})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, c
}

func do(t *testing.T, c *Ctx, method, authority, path string, body string, opts RequestOptions) (*IncomingResponse, *HTTPError) {
	t.Helper()
	h, _ := NewFields([][2][]byte{{[]byte("x-test"), []byte("1")}})
	r := NewOutgoingRequest(h)
	r.Method, r.Scheme, r.Authority, r.Path = method, "https", authority, path
	if body != "" {
		b, _ := r.Body()
		s, _ := b.Stream()
		if err := s.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
		tr, _ := NewFields([][2][]byte{{[]byte("x-sum"), []byte("42")}})
		b.Finish(tr)
	}
	f, herr := c.Handle(r, opts)
	if herr != nil {
		return nil, herr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Block(ctx, f); err != nil {
		t.Fatal(err)
	}
	resp, herr, ok, _ := f.Get()
	if !ok {
		t.Fatal("future not ready after Block")
	}
	return resp, herr
}

func readAll(t *testing.T, r *IncomingResponse) string {
	t.Helper()
	b, _ := r.Consume()
	s, _ := b.Stream()
	var out []byte
	for {
		p, err := s.BlockingRead(context.Background(), 1<<16)
		out = append(out, p...)
		if errors.Is(err, ErrStreamClosed) {
			return string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestHTTPOverTLS(t *testing.T) {
	h := http.NewServeMux()
	h.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Trailer", "X-Got-Sum")
		w.Header().Set("X-Proto", r.Proto)
		w.Write(append([]byte(r.Header.Get("X-Test")+":"), b...))
		w.Header().Set("X-Got-Sum", r.Trailer.Get("X-Sum"))
	})
	h.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/echo", http.StatusFound)
	})
	h.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(500 * time.Millisecond)
	})
	h.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 3; i++ {
			io.WriteString(w, strings.Repeat("x", 1000))
			w.(http.Flusher).Flush()
		}
	})
	srv, c := tlsServer(t, h, func(u *url.URL) []string { return []string{"https://" + u.Host} }, nil)
	host := strings.TrimPrefix(srv.URL, "https://")

	t.Run("streaming body, headers and trailers over h2", func(t *testing.T) {
		resp, herr := do(t, c, "POST", host, "/echo", "payload", RequestOptions{})
		if herr != nil {
			t.Fatal(herr)
		}
		if got := readAll(t, resp); got != "1:payload" {
			t.Fatalf("body %q", got)
		}
		if p := resp.Headers.Get("x-proto"); len(p) != 1 || string(p[0]) != "HTTP/2.0" {
			t.Fatalf("proto %q", p)
		}
		tr, herr, ok, _ := resp.body.Trailers().Get()
		if !ok || herr != nil || tr == nil || string(tr.Get("x-got-sum")[0]) != "42" {
			t.Fatalf("trailers %v %v %v", tr, herr, ok)
		}
	})
	t.Run("redirect comes back as 3xx", func(t *testing.T) {
		resp, herr := do(t, c, "GET", host, "/redirect", "", RequestOptions{})
		if herr != nil {
			t.Fatal(herr)
		}
		if resp.Status != http.StatusFound || len(resp.Headers.Get("location")) == 0 {
			t.Fatalf("status %d", resp.Status)
		}
	})
	t.Run("chunked response streams", func(t *testing.T) {
		resp, herr := do(t, c, "GET", host, "/stream", "", RequestOptions{})
		if herr != nil {
			t.Fatal(herr)
		}
		if got := readAll(t, resp); len(got) != 3000 {
			t.Fatalf("got %d bytes", len(got))
		}
	})
	t.Run("first-byte timeout", func(t *testing.T) {
		_, herr := do(t, c, "GET", host, "/slow", "", RequestOptions{FirstByteTimeout: 50 * time.Millisecond})
		if herr == nil || herr.Case != "HTTP-response-timeout" {
			t.Fatalf("got %v", herr)
		}
	})
	t.Run("not in allow-list", func(t *testing.T) {
		port := strings.Split(host, ":")[1]
		_, herr := do(t, c, "GET", "localhost:"+port, "/echo", "", RequestOptions{})
		if herr == nil || herr.Case != "HTTP-request-denied" {
			t.Fatalf("got %v", herr)
		}
	})
}

func TestHTTPUntrustedCAAndDenyAll(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")
	a, _ := ParseAllow([]string{host})
	c, _ := NewCtx(Policy{Network: a})
	defer c.Close()
	if _, herr := do(t, c, "GET", host, "/", "", RequestOptions{}); herr == nil || herr.Case != "TLS-certificate-error" {
		t.Fatalf("private CA without trust: %v", herr)
	}
	none, _ := NewCtx(Policy{})
	defer none.Close()
	if _, herr := do(t, none, "GET", host, "/", "", RequestOptions{}); herr == nil || herr.Case != "HTTP-request-denied" {
		t.Fatalf("no allow-list: %v", herr)
	}
}

func TestHTTPHookIsTheGrant(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("Authorization")+" "+r.URL.Path)
	}))
	defer upstream.Close()
	up, _ := url.Parse(upstream.URL)
	gw := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host, r.Host = "http", up.Host, ""
		r.Header.Set("Authorization", "Bearer k")
		return http.DefaultTransport.RoundTrip(r)
	})
	hook := func(r *http.Request) (*http.Request, http.RoundTripper, error) {
		if r.URL.Host == "127.0.0.1:9" {
			return r, gw, nil
		}
		return r, nil, nil
	}
	c, _ := NewCtx(Policy{HTTPHook: hook})
	defer c.Close()
	h, _ := NewFields(nil)
	r := NewOutgoingRequest(h)
	r.Scheme, r.Authority, r.Path = "http", "127.0.0.1:9", "/v1/messages"
	f, herr := c.Handle(r, RequestOptions{})
	if herr != nil {
		t.Fatal(herr)
	}
	Block(context.Background(), f)
	resp, herr, _, _ := f.Get()
	if herr != nil {
		t.Fatal(herr)
	}
	if got := readAll(t, resp); got != "Bearer k /v1/messages" {
		t.Fatalf("gateway response %q", got)
	}
	// Anything else is still judged by the (empty) allow-list.
	if _, herr := do(t, c, "GET", up.Host, "/", "", RequestOptions{}); herr == nil || herr.Case != "HTTP-request-denied" {
		t.Fatalf("non-gateway request: %v", herr)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestFieldsRules(t *testing.T) {
	f := &Fields{}
	if err := f.Append("Host", []byte("x")); err != HeaderError("forbidden") {
		t.Fatalf("host: %v", err)
	}
	if err := f.Append("bad name", []byte("x")); err != HeaderError("invalid-syntax") {
		t.Fatalf("name: %v", err)
	}
	if err := f.Append("ok", []byte("a\r\nb")); err != HeaderError("invalid-syntax") {
		t.Fatalf("value: %v", err)
	}
	f.Append("A", []byte("1"))
	f.Append("a", []byte("2"))
	if got := f.Get("A"); len(got) != 2 {
		t.Fatalf("case-insensitive get: %q", got)
	}
	NewOutgoingRequest(f)
	if err := f.Set("a", nil); err != HeaderError("immutable") {
		t.Fatalf("immutable: %v", err)
	}
}

func TestHTTPBodyTimeoutsAndAbort(t *testing.T) {
	h := http.NewServeMux()
	h.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		time.Sleep(time.Second)
		io.WriteString(w, "late")
	})
	got := make(chan string, 1)
	h.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(b)
	})
	srv, c := tlsServer(t, h, func(u *url.URL) []string { return []string{u.Host} }, nil)
	host := strings.TrimPrefix(srv.URL, "https://")

	resp, herr := do(t, c, "GET", host, "/stall", "", RequestOptions{BetweenBytesTimeout: 100 * time.Millisecond})
	if herr != nil {
		t.Fatal(herr)
	}
	b, _ := resp.Consume()
	s, _ := b.Stream()
	var body []byte
	var err error
	for err == nil {
		var p []byte
		p, err = s.BlockingRead(context.Background(), 1024)
		body = append(body, p...)
	}
	var se *StreamError
	if string(body) != "first" || !errors.As(err, &se) || !errors.Is(err, errBetweenBytesTimeout) {
		t.Fatalf("stalled body: %q, %v", body, err)
	}

	// A request whose body the guest drops unfinished must not arrive whole.
	hf, _ := NewFields(nil)
	r := NewOutgoingRequest(hf)
	r.Method, r.Scheme, r.Authority, r.Path = "POST", "https", host, "/upload"
	ob, _ := r.Body()
	w, _ := ob.Stream()
	if _, herr := c.Handle(r, RequestOptions{}); herr != nil {
		t.Fatal(herr)
	}
	w.Write([]byte("partial"))
	ob.Abort()
	select {
	case g := <-got:
		if g == "partial" {
			t.Fatal("an aborted body reached the server as complete")
		}
	case <-time.After(5 * time.Second):
	}
}

func TestOutgoingBodyIsBounded(t *testing.T) {
	r := NewOutgoingRequest(&Fields{})
	b, _ := r.Body()
	w, _ := b.Stream()
	n, err := w.CheckWrite()
	if err != nil || n != unsentLimit {
		t.Fatalf("check-write before send = %d, %v", n, err)
	}
	if err := w.Write(make([]byte, unsentLimit)); err != nil {
		t.Fatal(err)
	}
	if n, _ := w.CheckWrite(); n != 0 {
		t.Fatalf("check-write when full = %d", n)
	}
	if err := w.Write([]byte{1}); err == nil {
		t.Fatal("a write past check-write was accepted")
	}
	if w.Subscribe().Ready() {
		t.Fatal("a full body reports room")
	}
}
