//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// resolveTimeout bounds each launch-time lookup, as the spec says.
const resolveTimeout = 5 * time.Second

// maxAnswered bounds the addresses remembered per allowed name from the
// namespace's resolver; the oldest go first.
const maxAnswered = 32

// allowRule is capabilities.network.allow, the one place the rule lives:
// a name may be reached when an entry names it (for the entry's port), an
// address when an allowed name resolved to it at launch, or when the
// namespace's resolver answered it for an allowed name since.
type allowRule struct {
	allow []AllowHost
	// launchIPs are the addresses allowed names resolved to at launch (and
	// allowed IP literals), with the port each entry allows (0 = any).
	launchIPs map[netip.Addr][]int
	notes     []string

	mu sync.Mutex
	// answered are the addresses the namespace's resolver gave out for
	// each allowed name, at most maxAnswered per name.
	answered map[string][]netip.Addr
}

func newAllowRule(ctx context.Context, allow []AllowHost) *allowRule {
	r := &allowRule{launchIPs: map[netip.Addr][]int{}, answered: map[string][]netip.Addr{}}
	for _, a := range allow {
		a.Host = strings.TrimSuffix(strings.ToLower(strings.Trim(a.Host, "[]")), ".")
		if a.Port == 0 {
			switch a.Scheme {
			case "https":
				a.Port = 443
			case "http":
				a.Port = 80
			}
		}
		r.allow = append(r.allow, a)
		if ip, err := netip.ParseAddr(a.Host); err == nil {
			r.launchIPs[ip.Unmap()] = append(r.launchIPs[ip.Unmap()], a.Port)
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		addrs, err := net.DefaultResolver.LookupNetIP(rctx, "ip", a.Host)
		cancel()
		if err != nil {
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) && dnsErr.IsTimeout || errors.Is(err, context.DeadlineExceeded) {
				r.notes = append(r.notes, fmt.Sprintf("[capsule-runtime] warning: the network allowlist host '%s' could not be resolved at\nlaunch: the resolver did not answer within 5s (a subprocess reaching it by literal address is\ndenied for this run)", a.Host))
			}
			continue
		}
		for _, ip := range addrs {
			r.launchIPs[ip.Unmap()] = append(r.launchIPs[ip.Unmap()], a.Port)
		}
	}
	return r
}

func portOK(allowed, port int) bool { return allowed == 0 || allowed == port }

// permitsAddr says whether a connection or datagram to ip:port may leave.
func (r *allowRule) permitsAddr(ip netip.Addr, port int) bool {
	ip = ip.Unmap()
	for _, allowed := range r.launchIPs[ip] {
		if portOK(allowed, port) {
			return true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.allow {
		if !portOK(a.Port, port) {
			continue
		}
		for _, x := range r.answered[a.Host] {
			if x == ip {
				return true
			}
		}
	}
	return false
}

// allowsName says whether an entry names host (any port): the namespace's
// resolver answers only such names.
func (r *allowRule) allowsName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, a := range r.allow {
		if a.Host == host {
			return true
		}
	}
	return false
}

// remember records addresses the namespace's resolver answered for an
// allowed name, keeping the newest maxAnswered.
func (r *allowRule) remember(host string, ips []netip.Addr) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.answered[host]
	for _, ip := range ips {
		ip = ip.Unmap()
		dup := false
		for _, x := range list {
			dup = dup || x == ip
		}
		if !dup {
			list = append(list, ip)
		}
	}
	if len(list) > maxAnswered {
		list = append([]netip.Addr(nil), list[len(list)-maxAnswered:]...)
	}
	r.answered[host] = list
}
