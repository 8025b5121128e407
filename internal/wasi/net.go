package wasi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// SockCode is a case of wasi:sockets/network.error-code, by its WIT name.
type SockCode string

// The socket error-code cases this host produces.
const (
	SockUnknown            SockCode = "unknown"
	SockAccessDenied       SockCode = "access-denied"
	SockNotSupported       SockCode = "not-supported"
	SockInvalidArgument    SockCode = "invalid-argument"
	SockOutOfMemory        SockCode = "out-of-memory"
	SockTimeout            SockCode = "timeout"
	SockConcurrency        SockCode = "concurrency-conflict"
	SockNotInProgress      SockCode = "not-in-progress"
	SockWouldBlock         SockCode = "would-block"
	SockInvalidState       SockCode = "invalid-state"
	SockNewSocketLimit     SockCode = "new-socket-limit"
	SockAddressNotBindable SockCode = "address-not-bindable"
	SockAddressInUse       SockCode = "address-in-use"
	SockRemoteUnreachable  SockCode = "remote-unreachable"
	SockConnectionRefused  SockCode = "connection-refused"
	SockConnectionReset    SockCode = "connection-reset"
	SockConnectionAborted  SockCode = "connection-aborted"
	SockDatagramTooLarge   SockCode = "datagram-too-large"
	SockNameUnresolvable   SockCode = "name-unresolvable"
	SockTemporaryResolver  SockCode = "temporary-resolver-failure"
	SockPermanentResolver  SockCode = "permanent-resolver-failure"
)

// SockError is a socket failure carrying the WASI code the guest sees.
type SockError struct {
	Code SockCode
	Err  error
}

func (e *SockError) Error() string { return fmt.Sprintf("%v (%s)", e.Err, e.Code) }
func (e *SockError) Unwrap() error { return e.Err }

// SockCodeOf maps an error to the wasi:sockets error-code the guest sees.
func SockCodeOf(err error) SockCode {
	var se *SockError
	switch {
	case errors.As(err, &se):
		return se.Code
	case errors.Is(err, ErrDenied):
		return SockAccessDenied
	case errors.Is(err, context.DeadlineExceeded):
		return SockTimeout
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		switch {
		case dnsErr.IsNotFound:
			return SockNameUnresolvable
		case dnsErr.IsTemporary || dnsErr.IsTimeout:
			return SockTemporaryResolver
		}
		return SockPermanentResolver
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return SockTimeout
	}
	switch CodeOf(err) {
	case CodeAccess, CodeNotPermitted:
		return SockAccessDenied
	case CodeInvalid:
		return SockInvalidArgument
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return SockConnectionRefused
	case errors.Is(err, syscall.ECONNRESET):
		return SockConnectionReset
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return SockRemoteUnreachable
	case errors.Is(err, syscall.EADDRINUSE):
		return SockAddressInUse
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return SockAddressNotBindable
	}
	return SockUnknown
}

// netGuard applies network.allow to one store's sockets. It remembers which
// allowed names each address came from, so connecting to an address the
// guest looked up is judged by the name it looked up (with that entry's
// port), and an address nobody looked up is judged as a literal.
type netGuard struct {
	allow    *Allow
	mu       sync.Mutex
	resolved map[string][]string // address → allowed names that resolved to it
	resolver func(ctx context.Context, name string) ([]netip.Addr, error)
}

// Lookup resolves name if network.allow names it; an IP literal is parsed,
// not looked up.
func (g *netGuard) Lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(trimBrackets(name)); err == nil {
		return []netip.Addr{canonIP(ip)}, nil
	}
	if _, ok := canonName(name); !ok {
		return nil, &SockError{Code: SockInvalidArgument, Err: fmt.Errorf("%q is not a host name", name)}
	}
	if !g.allow.PermitsName(name) {
		return nil, &SockError{Code: SockAccessDenied, Err: fmt.Errorf("look up %q: %w", name, ErrDenied)}
	}
	resolve := g.resolver
	if resolve == nil {
		resolve = func(ctx context.Context, n string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", n)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := resolve(ctx, name)
	if err != nil {
		return nil, &SockError{Code: SockCodeOf(err), Err: err}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, a := range addrs {
		a = canonIP(a)
		addrs[i] = a
		k := a.String()
		if !containsStr(g.resolved[k], name) {
			g.resolved[k] = append(g.resolved[k], name)
		}
	}
	return addrs, nil
}

// Permit checks a socket destination.
func (g *netGuard) Permit(ap netip.AddrPort) error {
	ip := canonIP(ap.Addr())
	port := int(ap.Port())
	if g.allow.PermitsHostPort(ip.String(), port) {
		return nil
	}
	g.mu.Lock()
	names := append([]string(nil), g.resolved[ip.String()]...)
	g.mu.Unlock()
	for _, n := range names {
		if g.allow.PermitsHostPort(n, port) {
			return nil
		}
	}
	return &SockError{Code: SockAccessDenied, Err: fmt.Errorf("connect %s: %w", netip.AddrPortFrom(ip, ap.Port()), ErrDenied)}
}

// DialContext is a dialer for net/http that admits only destinations the
// allow-list grants, looked up through the guard so names are judged by
// name.
func (g *netGuard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, err
	}
	if !g.allow.PermitsHostPort(host, port) {
		return nil, &SockError{Code: SockAccessDenied, Err: fmt.Errorf("dial %s: %w", addr, ErrDenied)}
	}
	addrs, err := g.Lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	if last == nil {
		last = &SockError{Code: SockNameUnresolvable, Err: fmt.Errorf("%q has no addresses", host)}
	}
	return nil, last
}

func trimBrackets(h string) string {
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		return h[1 : len(h)-1]
	}
	return h
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
