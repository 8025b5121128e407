package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// netns is a session's network namespace. It holds an up loopback and
// nothing else: every address is routed to loopback (a local route for
// 0.0.0.0/0 and ::/0), and nftables rules in the namespace divert each
// TCP connection and UDP datagram to a granted destination (and UDP to
// port 53) that no socket of the namespace waits for to the egress
// listeners (TPROXY), which then see the destination the command asked
// for; any other is refused at once (TCP reset, ICMP port unreachable).
// What leaves the namespace is only what the egress forwards from the
// host's namespace after its own allow-list check; a command's own
// loopback servers keep working, since traffic a namespace socket waits
// for is never diverted.
type netns struct {
	file *os.File
	// run takes functions to run on the thread that lives in the
	// namespace: sockets made there belong to it.
	run  chan func()
	done chan struct{}
	tcp  []net.Listener // 127.0.0.1, and ::1 when the host has IPv6
	udp  []*net.UDPConn // likewise
	// proxy is the HTTP proxy's listener, an ordinary socket on the
	// namespace's loopback (see httpProxy).
	proxy net.Listener

	nftMu sync.Mutex
	nft   *nftables.Conn // to the namespace's netlink, for the sets
	sets  []familySets   // v4, and v6 when the host has IPv6
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
	if n.proxy != nil {
		n.proxy.Close()
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
	pl, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("egress proxy listener: %w", err)
	}
	n.proxy = pl
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

// divert installs the namespace's only nftables table. On prerouting (the
// loopback every packet takes), for each family with listeners:
//
//	socket transparent 0 accept                  # a namespace socket waits for it
//	socket transparent 1 tcp tproxy to <tcp> accept  # a flow the egress holds
//	socket transparent 1 udp tproxy to <udp> accept
//	daddr @any tcp/udp tproxy … accept           # granted on every port
//	daddr . th dport @ports tcp/udp tproxy … accept
//	udp dport 53 tproxy to <udp> accept          # the namespace's resolver
//	tcp reject with tcp reset                    # refused at connect
//	udp reject with icmpx port-unreachable
//	drop                                         # any other IP protocol
//
// The sets hold the allow rule's grants (see permit); the egress checks
// the rule again before it forwards anything.
func (n *netns) divert() error {
	c, err := nftables.New(nftables.WithNetNSFd(int(n.file.Fd())))
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: nftTable})
	accept := nftables.ChainPolicyAccept
	ch := c.AddChain(&nftables.Chain{Name: "divert", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityMangle, Policy: &accept})
	add := func(e ...expr.Any) { c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: e}) }
	transparent := func(v byte) []expr.Any {
		return []expr.Any{
			&expr.Socket{Key: expr.SocketKeyTransparent, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{v}},
		}
	}
	add(append(transparent(0), &expr.Verdict{Kind: expr.VerdictAccept})...)
	for i, ln := range n.tcp {
		f := famV4
		if i == 1 {
			f = famV6
		}
		anySet := &nftables.Set{Table: t, Name: "any" + f.name, KeyType: f.addrType}
		portSet := &nftables.Set{Table: t, Name: "ports" + f.name, KeyType: nftables.MustConcatSetType(f.addrType, nftables.TypeInetService), Concatenation: true}
		for _, set := range []*nftables.Set{anySet, portSet} {
			if err := c.AddSet(set, nil); err != nil {
				return fmt.Errorf("nftables set: %w", err)
			}
		}
		n.sets = append(n.sets, familySets{any: anySet, ports: portSet, v6: i == 1})
		ta := ln.Addr().(*net.TCPAddr)
		ua := n.udp[i].LocalAddr().(*net.UDPAddr)
		for _, d := range []struct {
			l4   byte
			ip   net.IP
			port int
		}{{unix.IPPROTO_TCP, ta.IP, ta.Port}, {unix.IPPROTO_UDP, ua.IP, ua.Port}} {
			match := []expr.Any{
				&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{f.nfproto}},
				&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{d.l4}},
			}
			ip := d.ip.To4()
			if f.nfproto == unix.NFPROTO_IPV6 {
				ip = d.ip.To16()
			}
			tproxy := []expr.Any{
				&expr.Immediate{Register: 1, Data: ip},
				&expr.Immediate{Register: 2, Data: binaryPort(d.port)},
				&expr.TProxy{Family: byte(f.table), TableFamily: byte(nftables.TableFamilyINet), RegAddr: 1, RegPort: 2},
				// tproxy only marks the packet for the socket; accept ends
				// the chain before the refusals below.
				&expr.Verdict{Kind: expr.VerdictAccept},
			}
			rule := func(parts ...[]expr.Any) {
				var all []expr.Any
				for _, p := range parts {
					all = append(all, p...)
				}
				add(all...)
			}
			daddr := &expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: f.daddrOff, Len: f.addrLen}
			dport := &expr.Payload{DestRegister: f.portReg, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2}
			rule(match, transparent(1), tproxy)
			rule(match, []expr.Any{daddr, &expr.Lookup{SourceRegister: 1, SetName: anySet.Name, SetID: anySet.ID}}, tproxy)
			rule(match, []expr.Any{daddr, dport, &expr.Lookup{SourceRegister: 1, SetName: portSet.Name, SetID: portSet.ID}}, tproxy)
			if d.l4 == unix.IPPROTO_UDP {
				rule(match, []expr.Any{
					&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
					&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryPort(53)},
				}, tproxy)
			}
		}
	}
	l4 := func(proto byte) []expr.Any {
		return []expr.Any{
			&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
		}
	}
	add(append(l4(unix.IPPROTO_TCP), &expr.Reject{Type: unix.NFT_REJECT_TCP_RST})...)
	add(append(l4(unix.IPPROTO_UDP), &expr.Reject{Type: unix.NFT_REJECT_ICMPX_UNREACH, Code: unix.NFT_REJECT_ICMPX_PORT_UNREACH})...)
	add(&expr.Verdict{Kind: expr.VerdictDrop})
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables rules in the network namespace (the kernel needs nf_tables with TPROXY, socket and reject: nft_tproxy, nft_socket, nft_reject_inet): %w", err)
	}
	n.nft = c
	return nil
}

// family is what the divert rules need to know of an address family.
type family struct {
	name     string
	nfproto  byte
	table    nftables.TableFamily
	addrType nftables.SetDatatype
	daddrOff uint32 // of the destination address in the network header
	addrLen  uint32
	portReg  uint32 // the 32-bit register after the address, for concatenation
}

var (
	famV4 = family{"4", unix.NFPROTO_IPV4, nftables.TableFamilyIPv4, nftables.TypeIPAddr, 16, 4, 9}
	famV6 = family{"6", unix.NFPROTO_IPV6, nftables.TableFamilyIPv6, nftables.TypeIP6Addr, 24, 16, 12}
)

// familySets are one family's grant sets.
type familySets struct {
	any, ports *nftables.Set
	v6         bool
}

func binaryPort(p int) []byte { return []byte{byte(p >> 8), byte(p)} }

// permit adds and removes grants in the namespace's sets.
func (n *netns) permit(added, removed []grant) error {
	if n == nil {
		return nil // a resolver fuzzed without a namespace
	}
	n.nftMu.Lock()
	defer n.nftMu.Unlock()
	if n.nft == nil {
		return nil
	}
	type change struct {
		set  *nftables.Set
		elem nftables.SetElement
	}
	key := func(g grant) (change, bool) {
		for _, fs := range n.sets {
			if fs.v6 != !g.ip.Is4() {
				continue
			}
			addr := g.ip.AsSlice()
			if g.port == 0 {
				return change{fs.any, nftables.SetElement{Key: addr}}, true
			}
			// A concatenation's parts are each padded to 4 bytes.
			k := append(append(addr, binaryPort(g.port)...), 0, 0)
			return change{fs.ports, nftables.SetElement{Key: k}}, true
		}
		return change{}, false // a family this host has no listeners for
	}
	for _, g := range added {
		if ch, ok := key(g); ok {
			if err := n.nft.SetAddElements(ch.set, []nftables.SetElement{ch.elem}); err != nil {
				return err
			}
		}
	}
	for _, g := range removed {
		if ch, ok := key(g); ok {
			if err := n.nft.SetDeleteElements(ch.set, []nftables.SetElement{ch.elem}); err != nil {
				return err
			}
		}
	}
	return n.nft.Flush()
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

// sendFrom sends one datagram inside the namespace from the address a
// command sent to (from) back to the command (to), on a socket made for
// it and closed at once: a resolver's answer. Raw calls, not net.Dialer,
// which costs near a millisecond a socket here.
func (n *netns) sendFrom(from, to netip.AddrPort, b []byte) error {
	var err error
	ok := n.do(func() {
		fam, level, opt := unix.AF_INET, unix.SOL_IP, unix.IP_TRANSPARENT
		if !from.Addr().Is4() {
			fam, level, opt = unix.AF_INET6, unix.SOL_IPV6, unix.IPV6_TRANSPARENT
		}
		var fd int
		fd, err = unix.Socket(fam, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return
		}
		defer unix.Close(fd)
		if err = unix.SetsockoptInt(fd, level, opt, 1); err != nil {
			return
		}
		if err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			return
		}
		if err = unix.Bind(fd, sockaddr(from)); err != nil {
			return
		}
		err = unix.Sendto(fd, b, unix.MSG_DONTWAIT, sockaddr(to))
	})
	if !ok {
		return net.ErrClosed
	}
	return err
}

func sockaddr(a netip.AddrPort) unix.Sockaddr {
	if a.Addr().Is4() {
		return &unix.SockaddrInet4{Addr: a.Addr().As4(), Port: int(a.Port())}
	}
	return &unix.SockaddrInet6{Addr: a.Addr().As16(), Port: int(a.Port())}
}
