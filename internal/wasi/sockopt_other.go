//go:build !linux

package wasi

import "syscall"

// apply sets the portable subset of the guest's options on fd; TCP
// keep-alive timing is Linux-only here and keeps the OS defaults elsewhere.
func (o *sockOpts) apply(fd int, v6 bool) error {
	if o.recvBuf != 0 {
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, int(min(o.recvBuf, 1<<30))); err != nil {
			return err
		}
	}
	if o.sendBuf != 0 {
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF, int(min(o.sendBuf, 1<<30))); err != nil {
			return err
		}
	}
	if o.keepAliveIsSet {
		ka := 0
		if o.keepAlive {
			ka = 1
		}
		return syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, ka)
	}
	return nil
}

// fdReadable cannot peek portably; report ready so the guest's receive
// (non-blocking) decides.
func fdReadable(int) bool { return true }
