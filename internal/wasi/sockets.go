package wasi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"
)

// sockErr builds a SockError.
func sockErr(code SockCode, format string, args ...any) error {
	return &SockError{Code: code, Err: fmt.Errorf(format, args...)}
}

// sockOpts are the options a guest sets on a socket; they are applied to
// the OS socket before it connects (Dialer.Control) and, once connected,
// directly.
type sockOpts struct {
	keepAlive      bool
	keepIdle       time.Duration
	keepInterval   time.Duration
	keepCount      uint32
	hopLimit       uint8
	recvBuf        uint64
	sendBuf        uint64
	keepAliveIsSet bool
}

func (o *sockOpts) control(v6 bool) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = o.apply(int(fd), v6) })
		if err != nil {
			return err
		}
		return serr
	}
}

// TCPSocket is the host object behind wasi:sockets/tcp.tcp-socket. It
// connects only to destinations the netGuard admits and never listens: a
// capsule's grants name destinations, not inbound traffic.
type TCPSocket struct {
	mu     sync.Mutex
	guard  *netGuard
	v6     bool
	state  tcpState
	local  netip.AddrPort
	remote netip.AddrPort
	opts   sockOpts

	conn    *net.TCPConn
	connErr error
	done    chan struct{} // closed when a connect attempt ends
	cancel  context.CancelFunc
	streams bool
}

type tcpState int

const (
	tcpUnbound tcpState = iota
	tcpBindStarted
	tcpBound
	tcpConnecting
	tcpConnected
	tcpClosed
)

func newTCP(g *netGuard, v6 bool) *TCPSocket {
	return &TCPSocket{guard: g, v6: v6, opts: sockOpts{hopLimit: 64, keepIdle: 2 * time.Hour, keepInterval: 75 * time.Second, keepCount: 9}}
}

func (s *TCPSocket) family(ap netip.AddrPort) error {
	if ap.Addr().Is4() == s.v6 {
		return sockErr(SockInvalidArgument, "address %s is not of the socket's family", ap)
	}
	return nil
}

// StartBind records the local address; binding reaches no destination, so
// it needs no grant.
func (s *TCPSocket) StartBind(local netip.AddrPort) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != tcpUnbound {
		return sockErr(SockInvalidState, "socket is already bound")
	}
	if err := s.family(local); err != nil {
		return err
	}
	// Probe the address now so address-in-use is reported by finish-bind.
	l, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(local))
	if err != nil {
		return &SockError{Code: SockCodeOf(err), Err: err}
	}
	s.local = netip.MustParseAddrPort(l.Addr().String())
	l.Close()
	s.state = tcpBindStarted
	return nil
}

// FinishBind completes StartBind.
func (s *TCPSocket) FinishBind() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != tcpBindStarted {
		return sockErr(SockNotInProgress, "no bind in progress")
	}
	s.state = tcpBound
	return nil
}

// StartConnect checks remote against network.allow and starts dialing.
func (s *TCPSocket) StartConnect(remote netip.AddrPort) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case tcpConnecting:
		return sockErr(SockConcurrency, "a connect is already in progress")
	case tcpConnected, tcpClosed:
		return sockErr(SockInvalidState, "socket is already connected")
	}
	if err := s.family(remote); err != nil {
		return err
	}
	if remote.Port() == 0 || remote.Addr().IsUnspecified() || remote.Addr().IsMulticast() {
		return sockErr(SockInvalidArgument, "cannot connect to %s", remote)
	}
	if err := s.guard.Permit(remote); err != nil {
		return err
	}
	d := net.Dialer{Control: s.opts.control(s.v6)}
	if s.state == tcpBound {
		d.LocalAddr = net.TCPAddrFromAddrPort(s.local)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	s.cancel, s.done, s.state, s.remote = cancel, make(chan struct{}), tcpConnecting, remote
	go func() {
		c, err := d.DialContext(ctx, "tcp", remote.String())
		s.mu.Lock()
		if err != nil {
			s.connErr = &SockError{Code: SockCodeOf(err), Err: err}
		} else {
			s.conn = c.(*net.TCPConn)
		}
		s.mu.Unlock()
		close(s.done)
	}()
	return nil
}

// FinishConnect returns the connection's streams once connected.
func (s *TCPSocket) FinishConnect() (InputStream, OutputStream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != tcpConnecting {
		return nil, nil, sockErr(SockNotInProgress, "no connect in progress")
	}
	select {
	case <-s.done:
	default:
		return nil, nil, sockErr(SockWouldBlock, "connect still in progress")
	}
	s.cancel()
	if s.connErr != nil {
		s.state = tcpClosed
		return nil, nil, s.connErr
	}
	s.state = tcpConnected
	s.local = netip.MustParseAddrPort(s.conn.LocalAddr().String())
	s.streams = true
	return newAsyncInput(s.conn, nil), &connOutput{c: s.conn}, nil
}

// Subscribe is ready when a connect attempt has ended (or nothing is in
// progress).
func (s *TCPSocket) Subscribe() Pollable {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		return readyPollable{}
	}
	return chanPollable(s.done)
}

// LocalAddress is the bound or connected local address.
func (s *TCPSocket) LocalAddress() (netip.AddrPort, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == tcpUnbound || s.state == tcpBindStarted {
		return netip.AddrPort{}, sockErr(SockInvalidState, "socket is not bound")
	}
	return s.local, nil
}

// RemoteAddress is the connected peer.
func (s *TCPSocket) RemoteAddress() (netip.AddrPort, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != tcpConnected {
		return netip.AddrPort{}, sockErr(SockInvalidState, "socket is not connected")
	}
	return s.remote, nil
}

// Shutdown shuts down one or both directions of a connected socket.
func (s *TCPSocket) Shutdown(how string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != tcpConnected {
		return sockErr(SockInvalidState, "socket is not connected")
	}
	var err error
	switch how {
	case "receive":
		err = s.conn.CloseRead()
	case "send":
		err = s.conn.CloseWrite()
	default:
		err = errors.Join(s.conn.CloseRead(), s.conn.CloseWrite())
	}
	if err != nil {
		return &SockError{Code: SockCodeOf(err), Err: err}
	}
	return nil
}

// withConn applies f to the connected socket's fd, when there is one.
func (s *TCPSocket) withConn(f func(fd int) error) error {
	if s.conn == nil {
		return nil
	}
	rc, err := s.conn.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	if ferr != nil {
		return &SockError{Code: SockInvalidArgument, Err: ferr}
	}
	return nil
}

// SetOpt changes one option and applies it to a live socket.
func (s *TCPSocket) SetOpt(f func(o *sockOpts) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := f(&s.opts); err != nil {
		return err
	}
	return s.withConn(func(fd int) error { return s.opts.apply(fd, s.v6) })
}

// Opts returns the socket's options.
func (s *TCPSocket) Opts() sockOpts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts
}

// Close closes the socket.
func (s *TCPSocket) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	s.state = tcpClosed
	if s.conn != nil {
		return s.conn.Close()
	}
	return nil
}

// chanPollable is ready once its channel is closed.
type chanPollable chan struct{}

func (c chanPollable) Ready() bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
func (c chanPollable) Changed() <-chan struct{} { return c }

// connOutput writes to a connection; writes block the calling guest until
// the kernel takes the bytes, which is what blocking-write-and-flush means
// and the most a non-blocking write can cost.
type connOutput struct {
	mu sync.Mutex
	c  net.Conn
}

const connWindow = 64 << 10

func (o *connOutput) CheckWrite() (uint64, error) { return connWindow, nil }

func (o *connOutput) Write(p []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err := o.c.Write(p)
	return streamErr(err)
}

func (o *connOutput) Flush() error                        { return nil }
func (o *connOutput) BlockingFlush(context.Context) error { return nil }
func (o *connOutput) Subscribe() Pollable                 { return readyPollable{} }
func (o *connOutput) Close() error                        { return nil }

// ResolveStream is the host object behind resolve-address-stream: the
// lookup runs on a goroutine and the guest pulls addresses one at a time.
type ResolveStream struct {
	done  chan struct{}
	addrs []netip.Addr
	err   error
}

func (g *netGuard) resolveAsync(name string) (*ResolveStream, error) {
	if _, err := netip.ParseAddr(trimBrackets(name)); err != nil {
		if _, ok := canonName(name); !ok {
			return nil, sockErr(SockInvalidArgument, "%q is not a host name or address", name)
		}
		if !g.allow.PermitsName(name) {
			return nil, sockErr(SockAccessDenied, "look up %q: %w", name, ErrDenied)
		}
	}
	r := &ResolveStream{done: make(chan struct{})}
	go func() {
		r.addrs, r.err = g.Lookup(context.Background(), name)
		close(r.done)
	}()
	return r, nil
}

// Next returns the next address, nil at the end, or would-block.
func (r *ResolveStream) Next() (*netip.Addr, error) {
	select {
	case <-r.done:
	default:
		return nil, sockErr(SockWouldBlock, "lookup in progress")
	}
	if r.err != nil {
		err := r.err
		r.err, r.addrs = nil, nil
		return nil, err
	}
	if len(r.addrs) == 0 {
		return nil, nil
	}
	a := r.addrs[0]
	r.addrs = r.addrs[1:]
	return &a, nil
}

// Subscribe is ready when the lookup has finished.
func (r *ResolveStream) Subscribe() Pollable { return chanPollable(r.done) }
