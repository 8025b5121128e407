package sandbox

import (
	"fmt"
	"net"
	"runtime"

	"golang.org/x/sys/unix"
)

// newNetns creates a network namespace holding only an up loopback, and a
// TCP listener on 127.0.0.1 inside it. The namespace is entered on one
// locked thread and left again; the listener's socket stays in the
// namespace it was made in, while everything the proxy dials goes out of
// the host's.
func newNetns() (nsfd int, ln net.Listener, err error) {
	type result struct {
		fd  int
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("open network namespace: %w", err)}
			return
		}
		defer unix.Close(orig)
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("create network namespace: %w", err)}
			return
		}
		r := result{fd: -1}
		r.fd, r.err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if r.err == nil {
			r.err = loopbackUp()
		}
		if r.err == nil {
			r.ln, r.err = net.Listen("tcp4", "127.0.0.1:0")
		}
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			// The thread stays locked and dies with this goroutine, so no
			// other goroutine ever runs inside the namespace.
			ch <- result{err: fmt.Errorf("leave network namespace: %w", err)}
			return
		}
		runtime.UnlockOSThread()
		ch <- r
	}()
	r := <-ch
	if r.err != nil {
		if r.ln != nil {
			r.ln.Close()
		}
		if r.fd >= 0 {
			unix.Close(r.fd)
		}
		return -1, nil, r.err
	}
	return r.fd, r.ln, nil
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}
