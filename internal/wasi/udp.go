package wasi

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// UDPSocket is the host object behind wasi:sockets/udp.udp-socket. Every
// datagram it sends goes to a destination the netGuard admits, and on an
// unconnected socket datagrams from sources it would not admit are dropped
// rather than delivered.
type UDPSocket struct {
	mu     sync.Mutex
	guard  *netGuard
	v6     bool
	local  netip.AddrPort
	bound  bool
	bindOK bool // start-bind called, finish-bind pending
	remote netip.AddrPort
	conn   *net.UDPConn
	opts   sockOpts
}

func newUDP(g *netGuard, v6 bool) *UDPSocket {
	return &UDPSocket{guard: g, v6: v6, opts: sockOpts{hopLimit: 64}}
}

func (s *UDPSocket) family(ap netip.AddrPort) error {
	if ap.Addr().Is4() == s.v6 {
		return sockErr(SockInvalidArgument, "address %s is not of the socket's family", ap)
	}
	return nil
}

// StartBind binds the socket to local.
func (s *UDPSocket) StartBind(local netip.AddrPort) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bound || s.bindOK {
		return sockErr(SockInvalidState, "socket is already bound")
	}
	if err := s.family(local); err != nil {
		return err
	}
	if err := s.bindLocked(local); err != nil {
		return err
	}
	s.bindOK = true
	return nil
}

func (s *UDPSocket) bindLocked(local netip.AddrPort) error {
	c, err := net.ListenUDP(s.network(), net.UDPAddrFromAddrPort(local))
	if err != nil {
		return &SockError{Code: SockCodeOf(err), Err: err}
	}
	s.conn = c
	s.local = netip.MustParseAddrPort(c.LocalAddr().String())
	return s.applyLocked()
}

func (s *UDPSocket) applyLocked() error {
	rc, err := s.conn.SyscallConn()
	if err != nil {
		return err
	}
	var aerr error
	if err := rc.Control(func(fd uintptr) { aerr = s.opts.apply(int(fd), s.v6) }); err != nil {
		return err
	}
	if aerr != nil {
		return &SockError{Code: SockInvalidArgument, Err: aerr}
	}
	return nil
}

func (s *UDPSocket) network() string {
	if s.v6 {
		return "udp6"
	}
	return "udp4"
}

// FinishBind completes StartBind.
func (s *UDPSocket) FinishBind() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.bindOK {
		return sockErr(SockNotInProgress, "no bind in progress")
	}
	s.bindOK, s.bound = false, true
	return nil
}

// Stream sets (or clears) the socket's fixed remote and returns its
// datagram streams. An unbound socket is bound to the unspecified address.
func (s *UDPSocket) Stream(remote *netip.AddrPort) (*DatagramIn, *DatagramOut, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.bound {
		if s.bindOK {
			return nil, nil, sockErr(SockInvalidState, "bind not finished")
		}
		any := netip.IPv4Unspecified()
		if s.v6 {
			any = netip.IPv6Unspecified()
		}
		if err := s.bindLocked(netip.AddrPortFrom(any, 0)); err != nil {
			return nil, nil, err
		}
		s.bound = true
	}
	s.remote = netip.AddrPort{}
	if remote != nil {
		if err := s.family(*remote); err != nil {
			return nil, nil, err
		}
		if remote.Port() == 0 || remote.Addr().IsUnspecified() {
			return nil, nil, sockErr(SockInvalidArgument, "cannot send to %s", *remote)
		}
		if err := s.guard.Permit(*remote); err != nil {
			return nil, nil, err
		}
		s.remote = *remote
	}
	return &DatagramIn{s: s}, &DatagramOut{s: s}, nil
}

// Datagram is one received or sent datagram.
type Datagram struct {
	Data   []byte
	Remote netip.AddrPort
}

// DatagramIn is incoming-datagram-stream.
type DatagramIn struct{ s *UDPSocket }

// Receive returns up to max datagrams already waiting; none is not an
// error.
func (in *DatagramIn) Receive(max uint64) ([]Datagram, error) {
	s := in.s
	var out []Datagram
	buf := make([]byte, 65536)
	for uint64(len(out)) < max {
		if !(&udpReadable{s: s}).Ready() {
			break
		}
		// Data is waiting, so the read returns at once; the deadline only
		// bounds a race with another reader of the socket.
		s.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				break
			}
			if len(out) > 0 {
				break
			}
			return nil, &SockError{Code: SockCodeOf(err), Err: err}
		}
		from = netip.AddrPortFrom(canonIP(from.Addr()), from.Port())
		s.mu.Lock()
		remote := s.remote
		s.mu.Unlock()
		if remote.IsValid() && from != remote {
			continue
		}
		if !remote.IsValid() && s.guard.Permit(from) != nil {
			continue
		}
		out = append(out, Datagram{Data: append([]byte(nil), buf[:n]...), Remote: from})
	}
	return out, nil
}

// Subscribe polls for readability by peeking with a short deadline.
func (in *DatagramIn) Subscribe() Pollable { return &udpReadable{s: in.s} }

type udpReadable struct {
	s *UDPSocket
}

func (p *udpReadable) Ready() bool {
	rc, err := p.s.conn.SyscallConn()
	if err != nil {
		return true
	}
	ready := false
	rc.Control(func(fd uintptr) { ready = fdReadable(int(fd)) })
	return ready
}

// Changed wakes pollers every millisecond: datagram sockets have no Go-side
// readiness signal without consuming a datagram.
func (p *udpReadable) Changed() <-chan struct{} {
	c := make(chan struct{})
	time.AfterFunc(time.Millisecond, func() { close(c) })
	return c
}

// DatagramOut is outgoing-datagram-stream.
type DatagramOut struct{ s *UDPSocket }

// CheckSend says how many datagrams Send accepts now.
func (o *DatagramOut) CheckSend() uint64 { return 64 }

// Send sends datagrams in order, stopping at the first refusal; it returns
// how many were sent, and the refusal only when none was.
func (o *DatagramOut) Send(ds []Datagram) (uint64, error) {
	s := o.s
	var sent uint64
	for _, d := range ds {
		var err error
		s.mu.Lock()
		remote := s.remote
		s.mu.Unlock()
		switch {
		case remote.IsValid() && d.Remote.IsValid() && d.Remote != remote:
			err = sockErr(SockInvalidArgument, "socket is connected to %s, not %s", remote, d.Remote)
		case remote.IsValid():
			_, err = s.conn.WriteToUDPAddrPort(d.Data, remote)
		case !d.Remote.IsValid():
			err = sockErr(SockInvalidArgument, "no remote address")
		default:
			if err = s.family(d.Remote); err == nil {
				if err = s.guard.Permit(d.Remote); err == nil {
					_, err = s.conn.WriteToUDPAddrPort(d.Data, d.Remote)
				}
			}
		}
		if err != nil {
			if _, ok := err.(*SockError); !ok {
				err = &SockError{Code: SockCodeOf(err), Err: err}
			}
			if sent == 0 {
				return 0, err
			}
			return sent, nil
		}
		sent++
	}
	return sent, nil
}

// Close closes the socket.
func (s *UDPSocket) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		return s.conn.Close()
	}
	return nil
}
