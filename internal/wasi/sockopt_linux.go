//go:build linux

package wasi

import (
	"golang.org/x/sys/unix"
)

// apply sets the guest's options on fd.
func (o *sockOpts) apply(fd int, v6 bool) error {
	set := func(level, opt, v int) error { return unix.SetsockoptInt(fd, level, opt, v) }
	if o.hopLimit != 0 {
		if v6 {
			if err := set(unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, int(o.hopLimit)); err != nil {
				return err
			}
		} else if err := set(unix.IPPROTO_IP, unix.IP_TTL, int(o.hopLimit)); err != nil {
			return err
		}
	}
	if o.recvBuf != 0 {
		if err := set(unix.SOL_SOCKET, unix.SO_RCVBUF, int(min(o.recvBuf, 1<<30))); err != nil {
			return err
		}
	}
	if o.sendBuf != 0 {
		if err := set(unix.SOL_SOCKET, unix.SO_SNDBUF, int(min(o.sendBuf, 1<<30))); err != nil {
			return err
		}
	}
	if !o.keepAliveIsSet {
		return nil
	}
	ka := 0
	if o.keepAlive {
		ka = 1
	}
	if err := set(unix.SOL_SOCKET, unix.SO_KEEPALIVE, ka); err != nil {
		return err
	}
	if err := set(unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, int(max(o.keepIdle.Seconds(), 1))); err != nil {
		return err
	}
	if err := set(unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, int(max(o.keepInterval.Seconds(), 1))); err != nil {
		return err
	}
	return set(unix.IPPROTO_TCP, unix.TCP_KEEPCNT, int(max(o.keepCount, 1)))
}

// fdReadable reports whether fd has data to read, without consuming it.
func fdReadable(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}
