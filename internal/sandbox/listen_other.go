//go:build !linux

package sandbox

import "net"

// ListenLoopback listens on the host's 127.0.0.1: off Linux commands share
// the host's network.
func (s *Session) ListenLoopback() (net.Listener, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	return net.Listen("tcp4", "127.0.0.1:0")
}
