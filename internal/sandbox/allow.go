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

// hostLookup resolves an allowed name on the host, at launch and for the
// namespace's resolver; tests give it names the host cannot resolve.
var hostLookup = net.DefaultResolver.LookupNetIP

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
		addrs, err := hostLookup(rctx, "ip", a.Host)
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

// permits says whether host:port may be reached; host is a name (an
// entry must name it, with a matching port) or an address literal.
func (r *allowRule) permits(host string, port int) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		return r.permitsAddr(ip, port)
	}
	for _, a := range r.allow {
		if a.Host == host && portOK(a.Port, port) {
			return true
		}
	}
	return false
}

// permitsAddr says whether a connection or datagram to ip:port may leave.
func (r *allowRule) permitsAddr(ip netip.Addr, port int) bool {
	ip = ip.Unmap()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, allowed := range r.launchIPs[ip] {
		if portOK(allowed, port) {
			return true
		}
	}
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

// grant is one address and port the rule lets through; port 0 is every
// port. The namespace's nftables sets hold exactly the rule's grants, so a
// destination outside them is refused by the kernel at connect time.
type grant struct {
	ip   netip.Addr
	port int
}

// grants lists every address and port the rule lets through now.
func (r *allowRule) grants() []grant {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []grant
	for ip, ports := range r.launchIPs {
		for _, p := range ports {
			out = append(out, grant{ip, p})
		}
	}
	for _, a := range r.allow {
		for _, ip := range r.answered[a.Host] {
			out = append(out, grant{ip, a.Port})
		}
	}
	return out
}

// grantsOf is the set of ports ip is granted (0 = every port); r.mu held.
func (r *allowRule) grantsOf(ip netip.Addr) map[int]bool {
	out := map[int]bool{}
	for _, p := range r.launchIPs[ip] {
		out[p] = true
	}
	for _, a := range r.allow {
		for _, x := range r.answered[a.Host] {
			if x == ip {
				out[a.Port] = true
			}
		}
	}
	return out
}

// remember records addresses the namespace's resolver answered for an
// allowed name, keeping the newest maxAnswered, and returns the grants
// that appeared and those that went.
func (r *allowRule) remember(host string, ips []netip.Addr) (added, removed []grant) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.answered[host]
	list := append([]netip.Addr(nil), old...)
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
		list = list[len(list)-maxAnswered:]
	}
	touched := map[netip.Addr]map[int]bool{}
	for _, ip := range append(append([]netip.Addr(nil), old...), list...) {
		if _, ok := touched[ip]; !ok {
			touched[ip] = r.grantsOf(ip)
		}
	}
	r.answered[host] = list
	for ip, before := range touched {
		after := r.grantsOf(ip)
		for p := range after {
			if !before[p] {
				added = append(added, grant{ip, p})
			}
		}
		for p := range before {
			if !after[p] {
				removed = append(removed, grant{ip, p})
			}
		}
	}
	return added, removed
}
