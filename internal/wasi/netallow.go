package wasi

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// ErrAllowEntry is the kind of every malformed network allow entry (the spec
// refuses these with E-CAP-001).
var ErrAllowEntry = errors.New("malformed network allow entry")

// AllowRule is one parsed entry of capabilities.network.allow. A zero Scheme
// spans both schemes and a zero Port every port, so "api.example.com" is
// {Host: "api.example.com"} and "https://api.example.com" is
// {Scheme: "https", Host: "api.example.com", Port: 443}.
type AllowRule struct {
	Scheme string
	Host   string // lower-case name, or a canonical IP literal
	Port   int
	ip     netip.Addr
}

// String renders the rule in the entry form it was parsed from.
func (r AllowRule) String() string {
	h := r.Host
	if r.ip.Is6() {
		h = "[" + h + "]"
	}
	switch {
	case r.Scheme != "":
		return r.Scheme + "://" + h + ":" + strconv.Itoa(r.Port)
	case r.Port != 0:
		return h + ":" + strconv.Itoa(r.Port)
	}
	return h
}

// Allow is a parsed network allow-list: the one matcher behind wasi:sockets
// connects and binds, wasi:sockets name lookups and wasi:http requests. The
// zero value (and nil) denies every IP destination, as the spec's empty or
// absent list does.
type Allow struct {
	rules []AllowRule
}

// ParseAllow parses the entries of a network.allow list. Each entry is a full
// URL (http or https, no path, query, fragment or userinfo), a host, or
// host:port; hosts may be names or IP literals ([v6] with a port).
func ParseAllow(entries []string) (*Allow, error) {
	a := &Allow{}
	var errs []error
	for _, e := range entries {
		r, err := ParseAllowEntry(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		a.rules = append(a.rules, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return a, nil
}

// Rules returns the parsed rules in entry order.
func (a *Allow) Rules() []AllowRule {
	if a == nil {
		return nil
	}
	return append([]AllowRule(nil), a.rules...)
}

// ParseAllowEntry parses one network allow entry.
func ParseAllowEntry(entry string) (AllowRule, error) {
	e := strings.TrimSpace(entry)
	bad := func(why string) (AllowRule, error) {
		return AllowRule{}, fmt.Errorf("network allow entry %q: %s: %w", entry, why, ErrAllowEntry)
	}
	if e == "" {
		return bad("empty")
	}
	if strings.Contains(e, "://") {
		u, err := url.Parse(e)
		if err != nil {
			return bad("not a URL")
		}
		s := strings.ToLower(u.Scheme)
		if s != "http" && s != "https" {
			return bad("scheme must be http or https")
		}
		if u.User != nil {
			return bad("a URL entry carries no userinfo")
		}
		// A lone trailing slash is how URLs are commonly written; it names no path.
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
			return bad("a URL entry carries no path, query or fragment")
		}
		port := defaultPort(s)
		if p := u.Port(); p != "" {
			n, err := parsePort(p)
			if err != nil {
				return bad(err.Error())
			}
			port = n
		}
		r, err := hostRule(u.Hostname())
		if err != nil {
			return bad(err.Error())
		}
		r.Scheme, r.Port = s, port
		return r, nil
	}
	if strings.ContainsAny(e, "/?#@") {
		return bad("a host entry is a name or address, optionally with :port")
	}
	// A bare IPv6 literal has colons but no port.
	if ip, err := netip.ParseAddr(trimBrackets(e)); err == nil && ip.Zone() == "" {
		return AllowRule{Host: canonIP(ip).String(), ip: canonIP(ip)}, nil
	}
	host, port := e, 0
	if strings.Contains(e, ":") {
		h, p, err := net.SplitHostPort(e)
		if err != nil {
			return bad("host:port expected")
		}
		n, err := parsePort(p)
		if err != nil {
			return bad(err.Error())
		}
		host, port = h, n
	}
	r, err := hostRule(host)
	if err != nil {
		return bad(err.Error())
	}
	r.Port = port
	return r, nil
}

func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

func parsePort(p string) (int, error) {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not 1-65535", p)
	}
	return n, nil
}

func hostRule(h string) (AllowRule, error) {
	if ip, err := netip.ParseAddr(h); err == nil {
		if ip.Zone() != "" {
			return AllowRule{}, errors.New("an address carries no zone")
		}
		return AllowRule{Host: canonIP(ip).String(), ip: canonIP(ip)}, nil
	}
	n, ok := canonName(h)
	if !ok {
		return AllowRule{}, fmt.Errorf("host %q is not a valid name", h)
	}
	return AllowRule{Host: n}, nil
}

// canonName lower-cases a DNS name and drops one trailing dot; it reports
// false for anything that is not letters, digits and inner hyphens per label.
func canonName(h string) (string, bool) {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return h, true
}

// canonIP folds IPv4-mapped IPv6 into IPv4 so ::ffff:127.0.0.1 and 127.0.0.1
// are one destination.
func canonIP(ip netip.Addr) netip.Addr {
	return ip.Unmap().WithZone("")
}

// PermitsURL reports whether an HTTP request to scheme://host:port is allowed.
// port 0 means the scheme's default.
func (a *Allow) PermitsURL(scheme, host string, port int) bool {
	if a == nil {
		return false
	}
	scheme = strings.ToLower(scheme)
	if port == 0 {
		port = defaultPort(scheme)
	}
	for _, r := range a.rules {
		if (r.Scheme == "" || r.Scheme == scheme) && (r.Port == 0 || r.Port == port) && r.matchHost(host) {
			return true
		}
	}
	return false
}

// PermitsHostPort reports whether a connection to host:port (a name or an
// address) is allowed. Sockets carry no scheme, so a URL entry allows its
// host at its port (explicit, or the scheme's default).
func (a *Allow) PermitsHostPort(host string, port int) bool {
	if a == nil {
		return false
	}
	for _, r := range a.rules {
		if (r.Port == 0 || r.Port == port) && r.matchHost(host) {
			return true
		}
	}
	return false
}

// PermitsName reports whether a name may be looked up: some entry names it,
// whatever its scheme or port.
func (a *Allow) PermitsName(name string) bool {
	if a == nil {
		return false
	}
	for _, r := range a.rules {
		if r.matchHost(name) {
			return true
		}
	}
	return false
}

func (r AllowRule) matchHost(h string) bool {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if ip, err := netip.ParseAddr(h); err == nil {
		return r.ip.IsValid() && r.ip == canonIP(ip)
	}
	n, ok := canonName(h)
	return ok && !r.ip.IsValid() && r.Host == n
}
