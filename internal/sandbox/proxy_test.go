package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

func listenGreeter(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().(*net.TCPAddr).Port
}

func startProxy(t *testing.T, allow []AllowHost) string {
	t.Helper()
	p := newEgressProxy(context.Background(), allow)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { p.srv.Close() })
	return ln.Addr().String()
}

func connectStatus(t *testing.T, proxy, target string) int {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

func TestProxyConnect(t *testing.T) {
	allowed, other := listenGreeter(t), listenGreeter(t)
	proxy := startProxy(t, []AllowHost{{Host: "LocalHost.", Port: allowed}, {Scheme: "https", Host: "api.example.invalid"}})
	tests := []struct {
		target string
		want   int
	}{
		{"localhost:" + strconv.Itoa(allowed), 200},
		{"127.0.0.1:" + strconv.Itoa(allowed), 200}, // launch-time address of an allowed name
		{"localhost:" + strconv.Itoa(other), 403},   // allowed name, other port
		{"127.0.0.1:" + strconv.Itoa(other), 403},
		{"evil.example:443", 403},
		{"api.example.invalid:80", 403}, // https entry allows 443 only
		{"[::2]:443", 403},
		{"bad target", 400},
	}
	for _, tt := range tests {
		if got := connectStatus(t, proxy, tt.target); got != tt.want {
			t.Errorf("CONNECT %s = %d, want %d", tt.target, got, tt.want)
		}
	}
}

func TestProxyPlainHTTP(t *testing.T) {
	allowed, other := listenGreeter(t), listenGreeter(t)
	proxy := startProxy(t, []AllowHost{{Host: "localhost", Port: allowed}})
	pu, _ := url.Parse("http://" + proxy)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	for port, want := range map[int]int{allowed: 200, other: 403} {
		resp, err := client.Get("http://localhost:" + strconv.Itoa(port) + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET port %d = %d %s, want %d", port, resp.StatusCode, body, want)
		}
		if want == 200 && string(body) != "hello" {
			t.Errorf("body %q", body)
		}
	}
}

func TestProxyRecordsDenials(t *testing.T) {
	p := newEgressProxy(context.Background(), nil)
	if p.permits("localhost", 80) || p.permits("127.0.0.1", 80) {
		t.Fatal("an empty allow list must deny every IP destination")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.srv.Serve(ln) }()
	defer p.srv.Close()
	connectStatus(t, ln.Addr().String(), "example.org:443")
	if d := p.Denied(); len(d) != 1 || d[0] != "example.org:443" {
		t.Fatalf("denied = %v", d)
	}
}

func FuzzSplitHostPort(f *testing.F) {
	for _, s := range []string{"a:1", "[::1]:443", "host", "[::1]", ":80", "a:b:c", "x:0", "x:65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		host, port, err := splitHostPort(s, 443)
		if err == nil && (port <= 0 || port > 65535) {
			t.Fatalf("%q gave port %d", s, port)
		}
		_ = host
	})
}
