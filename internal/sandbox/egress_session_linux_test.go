package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// Real programs in a real session reach an allowed name: glibc (getent)
// finds the hidden /etc/resolv.conf unreadable, asks loopback port 53,
// and the egress's resolver answers allowed names only; curl, whose
// threaded resolver needs socketpair(AF_UNIX) (refused under
// unix_sockets: false), goes through the HTTP proxy its variables name,
// plain and CONNECT. The host's own lookup is given a name no resolver
// here knows, so only these paths can answer it.
func TestSessionResolvesAllowedNames(t *testing.T) {
	privileged(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello %s", r.Host)
		}))
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	old := hostLookup
	hostLookup = func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		if host == "api.murmur-test.invalid" && network != "ip6" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return old(ctx, network, host)
	}
	defer func() { hostLookup = old }()
	p := testPolicy(t)
	p.Network.Allow = []AllowHost{{Scheme: "http", Host: "api.murmur-test.invalid", Port: port}}
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := func(line string) string {
		cmd := s.Command(context.Background(), "/bin/bash", "-c", line)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := run("getent ahostsv4 api.murmur-test.invalid"); !strings.HasPrefix(out, "127.0.0.1") {
		t.Errorf("getent of the allowed name: %q", out)
	}
	url := fmt.Sprintf("http://api.murmur-test.invalid:%d/", port)
	if out := run("curl -sS --max-time 5 " + url); out != "hello api.murmur-test.invalid:"+fmt.Sprint(port) {
		t.Errorf("curl %s: %q", url, out)
	}
	if out := run("curl -sS --max-time 5 -p " + url); out != "hello api.murmur-test.invalid:"+fmt.Sprint(port) {
		t.Errorf("curl through a CONNECT tunnel %s: %q", url, out)
	}
	if out := run(fmt.Sprintf("curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:%d/", port)); out != fmt.Sprintf("hello 127.0.0.1:%d", port) {
		t.Errorf("curl with no proxy to the granted address: %q", out)
	}
	for _, u := range []string{fmt.Sprintf("http://api.murmur-test.invalid:%d/", port+1), "http://other.murmur-test.invalid/"} {
		if out := run("curl -sS --max-time 5 -o /dev/null -w '%{http_code}' " + u); out != "403" {
			t.Errorf("the proxy let %s through: %q", u, out)
		}
	}
	if d := strings.Join(s.Denied(), " "); !strings.Contains(d, "http other.murmur-test.invalid:80") {
		t.Errorf("the proxy's refusal is not recorded: %v", d)
	}
	if out := run("getent ahostsv4 other.murmur-test.invalid; echo exit=$?"); !strings.HasSuffix(out, "exit=2\n") {
		t.Errorf("a name the allow list does not hold resolved: %q", out)
	}
	if out := run(fmt.Sprintf("curl -sS --max-time 5 http://127.0.0.1:%d/x; echo exit=$?", port+1)); strings.Contains(out, "hello") || strings.HasSuffix(out, "exit=0\n") {
		t.Errorf("curl to a port the allow list does not hold: %q", out)
	}
}
