package wasi

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

func TestParseAllowEntry(t *testing.T) {
	tests := []struct {
		in   string
		want string
		bad  bool
	}{
		{in: "https://api.example.com", want: "https://api.example.com:443"},
		{in: "https://api.example.com/", want: "https://api.example.com:443"},
		{in: "http://API.Example.com:8080", want: "http://api.example.com:8080"},
		{in: "api.example.com", want: "api.example.com"},
		{in: "api.example.com.", want: "api.example.com"},
		{in: "localhost:11434", want: "localhost:11434"},
		{in: "127.0.0.1", want: "127.0.0.1"},
		{in: "127.0.0.1:8080", want: "127.0.0.1:8080"},
		{in: "::1", want: "[::1]"},
		{in: "[::1]:8080", want: "[::1]:8080"},
		{in: "http://[::1]:9000", want: "http://[::1]:9000"},
		{in: "::ffff:10.0.0.1", want: "10.0.0.1"},
		{in: "", bad: true},
		{in: "ftp://example.com", bad: true},
		{in: "https://example.com/v1", bad: true},
		{in: "https://example.com?x=1", bad: true},
		{in: "https://example.com#f", bad: true},
		{in: "https://user:pw@example.com", bad: true},
		{in: "example.com/path", bad: true},
		{in: "example.com:0", bad: true},
		{in: "example.com:70000", bad: true},
		{in: "example.com:http", bad: true},
		{in: "-bad.example.com", bad: true},
		{in: "exa mple.com", bad: true},
		{in: "*.example.com", bad: true},
		{in: "10.0.0.0/8", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseAllowEntry(tt.in)
			if tt.bad {
				if err == nil || !errors.Is(err, ErrAllowEntry) {
					t.Fatalf("ParseAllowEntry(%q) = %v, %v; want ErrAllowEntry", tt.in, r, err)
				}
				return
			}
			if err != nil || r.String() != tt.want {
				t.Fatalf("ParseAllowEntry(%q) = %q, %v; want %q", tt.in, r.String(), err, tt.want)
			}
		})
	}
}

func TestAllowMatching(t *testing.T) {
	a, err := ParseAllow([]string{"https://api.example.com", "plain.example.com", "localhost:11434", "10.1.2.3", "http://[::1]:9000"})
	if err != nil {
		t.Fatal(err)
	}
	urls := []struct {
		scheme, host string
		port         int
		want         bool
	}{
		{"https", "api.example.com", 443, true},
		{"https", "API.EXAMPLE.COM", 0, true},
		{"http", "api.example.com", 80, false},
		{"https", "api.example.com", 8443, false},
		{"https", "evil.api.example.com", 443, false},
		{"https", "api.example.com.evil.com", 443, false},
		{"http", "plain.example.com", 8080, true},
		{"https", "plain.example.com", 443, true},
		{"http", "localhost", 11434, true},
		{"http", "localhost", 11435, false},
		{"http", "127.0.0.1", 11434, false},
		{"http", "10.1.2.3", 1, true},
		{"http", "::ffff:10.1.2.3", 1, true},
		{"http", "[::1]", 9000, true},
		{"https", "[::1]", 9000, false},
	}
	for _, u := range urls {
		if got := a.PermitsURL(u.scheme, u.host, u.port); got != u.want {
			t.Errorf("PermitsURL(%s, %s, %d) = %v, want %v", u.scheme, u.host, u.port, got, u.want)
		}
	}
	if !a.PermitsHostPort("api.example.com", 443) || a.PermitsHostPort("api.example.com", 80) {
		t.Error("socket matching of a URL entry must use its port")
	}
	if !a.PermitsName("localhost") || a.PermitsName("example.com") {
		t.Error("name lookup matching wrong")
	}
	var none *Allow
	if none.PermitsURL("https", "api.example.com", 443) || none.PermitsName("x") {
		t.Error("nil allow-list must deny")
	}
	if _, err := ParseAllow([]string{"ok.example.com", "ftp://x", "a/b"}); err == nil {
		t.Error("bad entries accepted")
	}
}

func TestNetGuardJudgesAddressesByName(t *testing.T) {
	a, _ := ParseAllow([]string{"svc.test:8080", "192.0.2.7:53"})
	g := &netGuard{allow: a, resolved: map[string][]string{}, resolver: func(_ context.Context, n string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("198.51.100.1")}, nil
	}}
	ap := netip.MustParseAddrPort("198.51.100.1:8080")
	if err := g.Permit(ap); SockCodeOf(err) != SockAccessDenied {
		t.Fatalf("address before lookup: %v", err)
	}
	if _, err := g.Lookup(context.Background(), "other.test"); SockCodeOf(err) != SockAccessDenied {
		t.Fatalf("lookup of unlisted name: %v", err)
	}
	if _, err := g.Lookup(context.Background(), "svc.test"); err != nil {
		t.Fatal(err)
	}
	if err := g.Permit(ap); err != nil {
		t.Fatalf("address of allowed name: %v", err)
	}
	if err := g.Permit(netip.MustParseAddrPort("198.51.100.1:22")); SockCodeOf(err) != SockAccessDenied {
		t.Fatalf("other port of allowed name: %v", err)
	}
	if err := g.Permit(netip.MustParseAddrPort("192.0.2.7:53")); err != nil {
		t.Fatalf("literal entry: %v", err)
	}
}

func FuzzParseAllowEntry(f *testing.F) {
	for _, s := range []string{"https://api.example.com", "localhost:11434", "[::1]:1", "::1", "a.b", "http://x:0", "https://u@h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseAllowEntry(s)
		if err != nil {
			return
		}
		// A parsed rule must print to an entry that parses to itself.
		r2, err := ParseAllowEntry(r.String())
		if err != nil || r2.String() != r.String() {
			t.Fatalf("%q -> %q -> %q, %v", s, r.String(), r2.String(), err)
		}
	})
}
