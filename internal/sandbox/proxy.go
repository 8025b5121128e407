package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// egressProxy is a sandboxed session's only way off its network namespace:
// an HTTP proxy (CONNECT tunnels and absolute-URI requests) that lets a
// destination through only when capabilities.network.allow names it, or,
// for a literal address, when the address was one an allowed name resolved
// to at launch.
type egressProxy struct {
	allow []AllowHost
	// launchIPs are the addresses allowed names resolved to at launch, with
	// the port each entry allows (0 = any).
	launchIPs map[netip.Addr][]int
	notes     []string
	srv       *http.Server
	dialer    net.Dialer
	mu        sync.Mutex
	denied    []string
}

// resolveTimeout bounds each launch-time lookup, as the spec says.
const resolveTimeout = 5 * time.Second

func newEgressProxy(ctx context.Context, allow []AllowHost) *egressProxy {
	p := &egressProxy{launchIPs: map[netip.Addr][]int{}, dialer: net.Dialer{Timeout: 30 * time.Second}}
	for _, a := range allow {
		a.Host = strings.TrimSuffix(strings.ToLower(a.Host), ".")
		if a.Port == 0 {
			switch a.Scheme {
			case "https":
				a.Port = 443
			case "http":
				a.Port = 80
			}
		}
		p.allow = append(p.allow, a)
		if ip, err := netip.ParseAddr(strings.Trim(a.Host, "[]")); err == nil {
			p.launchIPs[ip.Unmap()] = append(p.launchIPs[ip.Unmap()], a.Port)
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		addrs, err := net.DefaultResolver.LookupNetIP(rctx, "ip", a.Host)
		cancel()
		if err != nil {
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) && dnsErr.IsTimeout || errors.Is(err, context.DeadlineExceeded) {
				p.notes = append(p.notes, fmt.Sprintf("[capsule-runtime] warning: the network allowlist host '%s' could not be resolved at\nlaunch: the resolver did not answer within 5s (a subprocess reaching it by literal address is\ndenied for this run)", a.Host))
			}
			continue
		}
		for _, ip := range addrs {
			p.launchIPs[ip.Unmap()] = append(p.launchIPs[ip.Unmap()], a.Port)
		}
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	return p
}

// permits says whether host:port may be reached.
func (p *egressProxy) permits(host string, port int) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		for _, allowed := range p.launchIPs[ip.Unmap()] {
			if allowed == 0 || allowed == port {
				return true
			}
		}
		return false
	}
	for _, a := range p.allow {
		if a.Host == host && (a.Port == 0 || a.Port == port) {
			return true
		}
	}
	return false
}

func (p *egressProxy) deny(w http.ResponseWriter, target string) {
	p.mu.Lock()
	p.denied = append(p.denied, target)
	p.mu.Unlock()
	http.Error(w, fmt.Sprintf("mur: %s is not in capabilities.network.allow", target), http.StatusForbidden)
}

func (p *egressProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "mur: the egress proxy takes CONNECT or absolute http:// requests", http.StatusBadRequest)
		return
	}
	host, port, err := splitHostPort(r.URL.Host, 80)
	if err != nil {
		http.Error(w, "mur: "+err.Error(), http.StatusBadRequest)
		return
	}
	if !p.permits(host, port) {
		p.deny(w, net.JoinHostPort(host, strconv.Itoa(port)))
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	tr := &http.Transport{DialContext: p.dialer.DialContext, Proxy: nil}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(out)
	if err != nil {
		http.Error(w, "mur: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func (p *egressProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	host, port, err := splitHostPort(r.Host, 443)
	if err != nil {
		http.Error(w, "mur: "+err.Error(), http.StatusBadRequest)
		return
	}
	target := net.JoinHostPort(host, strconv.Itoa(port))
	if !p.permits(host, port) {
		p.deny(w, target)
		return
	}
	up, err := p.dialer.DialContext(r.Context(), "tcp", target)
	if err != nil {
		http.Error(w, "mur: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "mur: cannot tunnel", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	go func() {
		if buf.Reader.Buffered() > 0 {
			_, _ = io.CopyN(up, buf, int64(buf.Reader.Buffered()))
		}
		_, _ = io.Copy(up, down)
		closeWrite(up)
	}()
	_, _ = io.Copy(down, up)
	down.Close()
	up.Close()
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// splitHostPort splits an authority, defaulting a missing port.
func splitHostPort(hostport string, def int) (string, int, error) {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			return strings.Trim(hostport, "[]"), def, nil
		}
		return "", 0, fmt.Errorf("bad proxy target %q: %w", hostport, err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad proxy target port %q", ps)
	}
	return host, port, nil
}

// Denied lists the destinations the proxy refused, in order.
func (p *egressProxy) Denied() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.denied...)
}
