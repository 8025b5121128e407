package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// netns is a session's network namespace. It holds an up loopback and
// nothing else: every address is routed to loopback (a local route for
// 0.0.0.0/0 and ::/0), and an nftables rule in the namespace diverts each
// TCP connection and UDP datagram that no socket of the namespace waits
// for to the egress listeners (TPROXY), which then see the destination the
// command asked for. What leaves the namespace is only what the egress
// forwards from the host's namespace after the allow-list check; a
// command's own loopback servers keep working, since traffic a namespace
// socket waits for is never diverted.
type netns struct {
	file *os.File
	// run takes functions to run on the thread that lives in the
	// namespace: sockets made there belong to it.
	run  chan func()
	done chan struct{}
	tcp  []net.Listener // 127.0.0.1, and ::1 when the host has IPv6
	udp  []*net.UDPConn // likewise
}

// nftTable is the namespace's nftables table; nothing else is in it.
const nftTable = "mur"

func newNetns() (*netns, error) {
	n := &netns{run: make(chan func()), done: make(chan struct{})}
	ready := make(chan error, 1)
	go n.thread(ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	var err error
	n.do(func() { err = n.setup() })
	if err != nil {
		n.close()
		return nil, err
	}
	return n, nil
}

// thread unshares a network namespace on a locked thread and serves do
// requests there. It never leaves the namespace nor unlocks: when it
// returns, the Go runtime ends the thread, so no other goroutine ever
// runs inside the namespace.
func (n *netns) thread(ready chan<- error) {
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		ready <- fmt.Errorf("create network namespace: %w", err)
		return
	}
	fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		ready <- fmt.Errorf("open network namespace: %w", err)
		return
	}
	n.file = os.NewFile(uintptr(fd), "netns")
	ready <- nil
	for {
		select {
		case f := <-n.run:
			f()
		case <-n.done:
			return
		}
	}
}

// do runs f inside the namespace and waits for it. After close it runs
// nothing and reports false.
func (n *netns) do(f func()) bool {
	fin := make(chan struct{})
	select {
	case n.run <- func() { f(); close(fin) }:
		<-fin
		return true
	case <-n.done:
		return false
	}
}

func (n *netns) close() {
	select {
	case <-n.done:
		return
	default:
	}
	close(n.done)
	for _, l := range n.tcp {
		l.Close()
	}
	for _, c := range n.udp {
		c.Close()
	}
	if n.file != nil {
		n.file.Close()
	}
}

// setup runs on the namespace's thread.
func (n *netns) setup() error {
	if err := loopbackUp(); err != nil {
		return err
	}
	v6 := true
	if err := localRoute(unix.AF_INET); err != nil {
		return fmt.Errorf("network namespace route: %w", err)
	}
	if err := localRoute(unix.AF_INET6); err != nil {
		// A host without IPv6 has nothing to route; v6 sockets then fail
		// in the namespace as they do outside it.
		v6 = false
	}
	lc := net.ListenConfig{Control: transparentSocket}
	ln, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("egress listener: %w", err)
	}
	n.tcp = append(n.tcp, ln)
	pc, err := lc.ListenPacket(context.Background(), "udp4", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("egress listener: %w", err)
	}
	n.udp = append(n.udp, pc.(*net.UDPConn))
	if v6 {
		ln6, err6 := lc.Listen(context.Background(), "tcp6", "[::1]:0")
		pc6, errU := lc.ListenPacket(context.Background(), "udp6", "[::1]:0")
		if err6 == nil && errU == nil {
			n.tcp = append(n.tcp, ln6)
			n.udp = append(n.udp, pc6.(*net.UDPConn))
		} else {
			for _, c := range []interface{ Close() error }{ln6, pc6} {
				if c != nil {
					c.Close()
				}
			}
		}
	}
	return n.divert()
}

// divert installs the namespace's only nftables rules, on prerouting (the
// loopback every packet takes):
//
//	socket transparent 0 accept                 # a namespace socket waits for it
//	ip  tcp tproxy to 127.0.0.1:<tcp4> accept   # everything else, to the egress
//	ip  udp tproxy to 127.0.0.1:<udp4> accept
//	ip6 tcp tproxy to [::1]:<tcp6> accept
//	ip6 udp tproxy to [::1]:<udp6> accept
//	drop                                        # any other IP protocol
func (n *netns) divert() error {
	c, err := nftables.New(nftables.WithNetNSFd(int(n.file.Fd())))
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: nftTable})
	accept := nftables.ChainPolicyAccept
	ch := c.AddChain(&nftables.Chain{Name: "divert", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityMangle, Policy: &accept})
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{
		&expr.Socket{Key: expr.SocketKeyTransparent, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{0}},
		&expr.Verdict{Kind: expr.VerdictAccept},
	}})
	for i, ln := range n.tcp {
		fam, proto := byte(unix.NFPROTO_IPV4), nftables.TableFamilyIPv4
		if i == 1 {
			fam, proto = unix.NFPROTO_IPV6, nftables.TableFamilyIPv6
		}
		ta := ln.Addr().(*net.TCPAddr)
		ua := n.udp[i].LocalAddr().(*net.UDPAddr)
		for _, d := range []struct {
			l4   byte
			ip   net.IP
			port int
		}{{unix.IPPROTO_TCP, ta.IP, ta.Port}, {unix.IPPROTO_UDP, ua.IP, ua.Port}} {
			ip := d.ip.To4()
			if fam == unix.NFPROTO_IPV6 {
				ip = d.ip.To16()
			}
			c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{
				&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{fam}},
				&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{d.l4}},
				&expr.Immediate{Register: 1, Data: ip},
				&expr.Immediate{Register: 2, Data: []byte{byte(d.port >> 8), byte(d.port)}},
				&expr.TProxy{Family: byte(proto), TableFamily: byte(nftables.TableFamilyINet), RegAddr: 1, RegPort: 2},
				// tproxy only marks the packet for the socket; accept ends
				// the chain before the drop below.
				&expr.Verdict{Kind: expr.VerdictAccept},
			}})
		}
	}
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{&expr.Verdict{Kind: expr.VerdictDrop}}})
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables rules in the network namespace (TPROXY): %w", err)
	}
	return nil
}

// transparentSocket lets a socket accept connections and datagrams for
// addresses that are not its own (what TPROXY hands it), and, for UDP,
// report each datagram's original destination.
func transparentSocket(network, _ string, rc syscall.RawConn) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		switch network {
		case "tcp6", "udp6":
			serr = unix.SetsockoptInt(int(fd), unix.SOL_IPV6, unix.IPV6_TRANSPARENT, 1)
			if serr == nil && network == "udp6" {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_IPV6, unix.IPV6_RECVORIGDSTADDR, 1)
			}
		default:
			serr = unix.SetsockoptInt(int(fd), unix.SOL_IP, unix.IP_TRANSPARENT, 1)
			if serr == nil && network == "udp4" {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_IP, unix.IP_RECVORIGDSTADDR, 1)
			}
		}
		if serr == nil {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
		}
	})
	if err != nil {
		return err
	}
	return serr
}

// localRoute adds "local <any>/0 dev lo" to the namespace's local table,
// so a connection to any address is sent over loopback, where the divert
// rule sees it, instead of failing with ENETUNREACH.
func localRoute(family int) error {
	c, err := netlink.Dial(unix.NETLINK_ROUTE, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return err
	}
	rtm := unix.RtMsg{Family: uint8(family), Table: unix.RT_TABLE_LOCAL, Protocol: unix.RTPROT_BOOT,
		Scope: unix.RT_SCOPE_HOST, Type: unix.RTN_LOCAL}
	hdr := unsafe.Slice((*byte)(unsafe.Pointer(&rtm)), unix.SizeofRtMsg)
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(unix.RTA_OIF, uint32(lo.Index))
	attrs, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = c.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_NEWROUTE, Flags: netlink.Request | netlink.Acknowledge | netlink.Create | netlink.Excl},
		Data:   append(append([]byte(nil), hdr...), attrs...),
	})
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	return err
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

// replySocket makes, inside the namespace, a UDP socket bound to the
// address a command sent to (from) and connected to the command's socket
// (to): replies then come from the address the command expects, and the
// command's later datagrams to that address arrive on it.
func (n *netns) replySocket(from, to *net.UDPAddr) (*net.UDPConn, error) {
	var c *net.UDPConn
	var err error
	ok := n.do(func() {
		network := "udp4"
		if from.IP.To4() == nil {
			network = "udp6"
		}
		d := net.Dialer{LocalAddr: from, Control: transparentSocket}
		var conn net.Conn
		conn, err = d.Dial(network, to.String())
		if err == nil {
			c = conn.(*net.UDPConn)
		}
	})
	if !ok {
		return nil, net.ErrClosed
	}
	return c, err
}
