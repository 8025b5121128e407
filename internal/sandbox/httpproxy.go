//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/netutil"
)

// maxProxyConns bounds the HTTP proxy's client connections at once (a
// CONNECT tunnel holds one, and one upstream).
const maxProxyConns = 256

// httpProxy serves the proxy variables commands get (see proxyEnv): an
// HTTP proxy (CONNECT tunnels and absolute-URI requests) on the namespace's
// loopback. It exists for programs that cannot resolve a name themselves
// in the sandbox (curl's threaded resolver needs socketpair(AF_UNIX),
// which unix_sockets: false refuses); it lets a target through under the
// same allow rule as the egress, and records refusals in the same bounded
// record.
type httpProxy struct {
	e      *egress
	ln     net.Listener
	srv    *http.Server
	dialer net.Dialer
}

func newHTTPProxy(e *egress) *httpProxy {
	p := &httpProxy{e: e, ln: netutil.LimitListener(e.ns.proxy, maxProxyConns), dialer: net.Dialer{Timeout: dialTimeout}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		_ = p.srv.Serve(p.ln)
	}()
	return p
}

func (p *httpProxy) close() { _ = p.srv.Close() }

func (p *httpProxy) deny(w http.ResponseWriter, target string) {
	p.e.deny("http " + target)
	http.Error(w, fmt.Sprintf("mur: %s is not in capabilities.network.allow", target), http.StatusForbidden)
}

func (p *httpProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	if !p.e.rule.permits(host, port) {
		p.deny(w, net.JoinHostPort(host, strconv.Itoa(port)))
		return
	}
	out := r.Clone(p.e.ctx)
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	tr := &http.Transport{DialContext: p.dial, Proxy: nil}
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

func (p *httpProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	host, port, err := splitHostPort(r.Host, 443)
	if err != nil {
		http.Error(w, "mur: "+err.Error(), http.StatusBadRequest)
		return
	}
	target := net.JoinHostPort(host, strconv.Itoa(port))
	if !p.e.rule.permits(host, port) {
		p.deny(w, target)
		return
	}
	up, err := p.dial(p.e.ctx, "tcp", target)
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
	if !p.e.track(up) || !p.e.track(down) {
		up.Close()
		down.Close()
		return
	}
	defer p.e.untrack(up)
	defer p.e.untrack(down)
	done := make(chan struct{})
	go func() {
		if n := buf.Reader.Buffered(); n > 0 {
			_, _ = io.CopyN(up, buf, int64(n))
		}
		_, _ = io.Copy(up, down)
		halfClose(up)
		close(done)
	}()
	_, _ = io.Copy(down, up)
	halfClose(down)
	<-done
}

// halfClose ends c's write side, or all of c when it cannot (the limit
// listener's connections hide CloseWrite), so the other copy ends too.
func halfClose(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	c.Close()
}

// dial connects to an allowed target, resolving a name as the egress's
// resolver does (hostLookup), trying each address in turn.
func (p *httpProxy) dial(ctx context.Context, network, target string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return nil, err
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return p.dialer.DialContext(ctx, network, target)
	}
	rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	addrs, err := hostLookup(rctx, "ip", host)
	cancel()
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		var c net.Conn
		if c, err = p.dialer.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port)); err == nil {
			return c, nil
		}
	}
	if err == nil {
		err = fmt.Errorf("%s has no address", host)
	}
	return nil, err
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
