package sandbox

import (
	"net"
)

// ListenLoopback listens on 127.0.0.1 where the session's commands see it:
// on the loopback of their network namespace when they have one (a socket
// made on the namespace's thread, so traffic to it is never diverted to
// the egress), else on the host's. mur serves a transport: process
// harness its tools there (the loopback tool server).
func (s *Session) ListenLoopback() (net.Listener, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if s.egress == nil {
		return net.Listen("tcp4", "127.0.0.1:0")
	}
	var ln net.Listener
	var err error
	if !s.egress.ns.do(func() { ln, err = net.Listen("tcp4", "127.0.0.1:0") }) {
		return nil, ErrClosed
	}
	return ln, err
}
