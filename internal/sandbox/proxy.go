//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"
)

// Bounds on what a command can make the egress hold: it is the runtime's
// memory, outside the scope's memory limit.
const (
	// maxTCPConns forwarded connections at once; more are reset.
	maxTCPConns = 256
	// maxUDPFlows live (source, destination) UDP pairs; a datagram that
	// would open one more is dropped.
	maxUDPFlows = 64
	// udpIdle ends a UDP flow nothing crossed for this long.
	udpIdle = 60 * time.Second
	// maxLookups in flight for the namespace's resolver; more queries are
	// dropped (resolvers retry).
	maxLookups = 8
	// maxDenied refused destinations are kept, the newest; the count of
	// all of them is kept besides.
	maxDenied = 64
	// maxAnswerRecords keeps an answer within 512 bytes, the UDP size a
	// resolver without EDNS takes, whatever the name's length: a
	// truncated answer would send it to DNS over TCP, which is refused.
	maxAnswerRecords = 8
	// dialTimeout bounds connecting upstream.
	dialTimeout = 30 * time.Second
)

// egress is a sandboxed session's only way off its network namespace. It
// receives the TCP connections and UDP datagrams a command sends to a
// granted destination no namespace socket waits for (the kernel refuses
// the rest, see netns), with the destination the command asked for, and
// forwards them from the host's namespace after checking the allow rule
// itself. UDP to port 53 that
// is not itself permitted is answered by a resolver that knows only the
// allowed names: it resolves them on the host, and the addresses it
// answers become reachable (for the entry's ports), so a name stays
// reachable however its addresses move.
type egress struct {
	rule   *allowRule
	ns     *netns
	http   *httpProxy
	dialer net.Dialer

	slots   chan struct{} // forwarded TCP connections, maxTCPConns
	lookups chan struct{} // resolver lookups, maxLookups

	// ctx ends with the session: in-flight dials and lookups stop.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	conns   map[net.Conn]bool // both ends of every forwarded connection
	flows   map[flowKey]*udpFlow
	denied  []string // ring of the newest maxDenied
	next    int      // where the next refusal goes in denied
	refused int64
	closed  bool
	wg      sync.WaitGroup
}

type flowKey struct{ src, dst netip.AddrPort }

type udpFlow struct {
	down *net.UDPConn // in the namespace: bound to dst, connected to src
	up   *net.UDPConn // on the host: connected to dst
}

func newEgress(ctx context.Context, ns *netns, allow []AllowHost) (*egress, error) {
	e := &egress{
		rule:    newAllowRule(ctx, allow),
		ns:      ns,
		dialer:  net.Dialer{Timeout: dialTimeout},
		slots:   make(chan struct{}, maxTCPConns),
		conns:   map[net.Conn]bool{},
		lookups: make(chan struct{}, maxLookups),
		flows:   map[flowKey]*udpFlow{},
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	if err := ns.permit(e.rule.grants(), nil); err != nil {
		e.cancel()
		ns.close()
		return nil, fmt.Errorf("network namespace grants: %w", err)
	}
	for _, ln := range ns.tcp {
		e.wg.Add(1)
		go e.serveTCP(ln)
	}
	for _, c := range ns.udp {
		e.wg.Add(1)
		go e.serveUDP(c)
	}
	e.http = newHTTPProxy(e)
	return e, nil
}

// close stops the listeners (with the namespace) and every forward, even
// one whose upstream keeps its side open.
func (e *egress) close() {
	e.cancel()
	e.mu.Lock()
	e.closed = true
	flows, conns := e.flows, e.conns
	e.flows, e.conns = map[flowKey]*udpFlow{}, map[net.Conn]bool{}
	e.mu.Unlock()
	if e.http != nil {
		e.http.close()
	}
	e.ns.close()
	for _, f := range flows {
		f.down.Close()
		f.up.Close()
	}
	for c := range conns {
		c.Close()
	}
	e.wg.Wait()
}

// track records a forwarded connection's end so close can end it; it says
// false once the egress is closed.
func (e *egress) track(c net.Conn) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.conns[c] = true
	return true
}

func (e *egress) untrack(c net.Conn) {
	e.mu.Lock()
	delete(e.conns, c)
	e.mu.Unlock()
	c.Close()
}

func (e *egress) deny(target string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refused++
	if len(e.denied) < maxDenied {
		e.denied = append(e.denied, target)
		return
	}
	e.denied[e.next] = target
	e.next = (e.next + 1) % maxDenied
}

// Denied lists the newest refused destinations (at most maxDenied), oldest
// first, and how many were refused in all.
func (e *egress) Denied() ([]string, int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := append([]string(nil), e.denied[e.next:]...)
	return append(out, e.denied[:e.next]...), e.refused
}

// isSelf says dst is one of the egress's own listeners, which a command
// may connect to directly; that is never forwarded.
func (e *egress) isSelf(dst netip.AddrPort) bool {
	for _, ln := range e.ns.tcp {
		if ln.Addr().(*net.TCPAddr).AddrPort() == dst {
			return true
		}
	}
	for _, c := range e.ns.udp {
		if c.LocalAddr().(*net.UDPAddr).AddrPort() == dst {
			return true
		}
	}
	return false
}

func (e *egress) serveTCP(ln net.Listener) {
	defer e.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// EMFILE and the like: the runtime is short of descriptors;
			// wait rather than spin.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		tc := c.(*net.TCPConn)
		// TPROXY keeps the command's destination as the socket's own address.
		dst := tc.LocalAddr().(*net.TCPAddr).AddrPort()
		dst = netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())
		target := "tcp " + dst.String()
		if e.isSelf(dst) || !e.rule.permitsAddr(dst.Addr(), int(dst.Port())) {
			e.deny(target)
			reset(tc)
			continue
		}
		select {
		case e.slots <- struct{}{}:
		default:
			e.deny(target + " (over " + strconv.Itoa(maxTCPConns) + " connections)")
			reset(tc)
			continue
		}
		e.wg.Add(1)
		go e.forwardTCP(tc, dst)
	}
}

// reset closes with RST, so the command's next read or write fails at once.
func reset(c *net.TCPConn) {
	_ = c.SetLinger(0)
	c.Close()
}

func (e *egress) forwardTCP(down *net.TCPConn, dst netip.AddrPort) {
	defer e.wg.Done()
	defer func() { <-e.slots }()
	if !e.track(down) {
		reset(down)
		return
	}
	defer e.untrack(down)
	ctx, cancel := context.WithTimeout(e.ctx, dialTimeout)
	c, err := e.dialer.DialContext(ctx, "tcp", dst.String())
	cancel()
	if err != nil {
		_ = down.SetLinger(0)
		return
	}
	up := c.(*net.TCPConn)
	if !e.track(up) {
		up.Close()
		return
	}
	defer e.untrack(up)
	done := make(chan struct{})
	go func() {
		// TCPConn to TCPConn copies splice in the kernel: no buffer here.
		_, _ = io.Copy(up, down)
		_ = up.CloseWrite()
		close(done)
	}()
	_, _ = io.Copy(down, up)
	_ = down.CloseWrite()
	<-done
}

// udpBuf holds one datagram; larger ones are cut, as a receiver with a
// smaller buffer would.
const udpBuf = 64 << 10

func (e *egress) serveUDP(c *net.UDPConn) {
	defer e.wg.Done()
	buf := make([]byte, udpBuf)
	oob := make([]byte, 128)
	for {
		n, oobn, _, src, err := c.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		dst, ok := origDst(oob[:oobn])
		if !ok {
			continue
		}
		src = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
		e.datagram(src, dst, buf[:n])
	}
}

// origDst reads the destination TPROXY kept (IP_ORIGDSTADDR).
func origDst(oob []byte) (netip.AddrPort, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return netip.AddrPort{}, false
	}
	for _, m := range msgs {
		switch {
		case m.Header.Level == unix.SOL_IP && m.Header.Type == unix.IP_ORIGDSTADDR && len(m.Data) >= unix.SizeofSockaddrInet4:
			ip := netip.AddrFrom4([4]byte(m.Data[4:8]))
			return netip.AddrPortFrom(ip, uint16(m.Data[2])<<8|uint16(m.Data[3])), true
		case m.Header.Level == unix.SOL_IPV6 && m.Header.Type == unix.IPV6_ORIGDSTADDR && len(m.Data) >= unix.SizeofSockaddrInet6:
			ip := netip.AddrFrom16([16]byte(m.Data[8:24])).Unmap()
			return netip.AddrPortFrom(ip, uint16(m.Data[2])<<8|uint16(m.Data[3])), true
		}
	}
	return netip.AddrPort{}, false
}

// datagram handles the first datagram of a (src, dst) pair; later ones
// arrive on the flow's own socket.
func (e *egress) datagram(src, dst netip.AddrPort, b []byte) {
	target := "udp " + dst.String()
	switch {
	case !e.isSelf(dst) && e.rule.permitsAddr(dst.Addr(), int(dst.Port())):
		e.openFlow(src, dst, b)
	case dst.Port() == 53:
		e.resolve(src, dst, b)
	default:
		e.deny(target)
	}
}

func (e *egress) openFlow(src, dst netip.AddrPort, first []byte) {
	key := flowKey{src, dst}
	e.mu.Lock()
	if f, ok := e.flows[key]; ok {
		e.mu.Unlock()
		_, _ = f.up.Write(first)
		return
	}
	full := len(e.flows) >= maxUDPFlows
	e.mu.Unlock()
	if full {
		e.deny("udp " + dst.String() + " (over " + strconv.Itoa(maxUDPFlows) + " flows)")
		return
	}
	up, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(dst))
	if err != nil {
		return
	}
	down, err := e.ns.replySocket(net.UDPAddrFromAddrPort(dst), net.UDPAddrFromAddrPort(src))
	if err != nil {
		up.Close()
		return
	}
	f := &udpFlow{down: down, up: up}
	e.mu.Lock()
	if e.closed || len(e.flows) >= maxUDPFlows {
		// Closed, or the other family's reader took the last slot.
		e.mu.Unlock()
		up.Close()
		down.Close()
		return
	}
	e.flows[key] = f
	e.mu.Unlock()
	_, _ = up.Write(first)
	e.wg.Add(2)
	go e.pump(key, f, f.up, f.down)
	go e.pump(key, f, f.down, f.up)
}

// pump copies datagrams one way until the flow is idle for udpIdle or
// either side fails, then ends the flow.
func (e *egress) pump(key flowKey, f *udpFlow, from, to *net.UDPConn) {
	defer e.wg.Done()
	buf := make([]byte, udpBuf)
	for {
		_ = from.SetReadDeadline(time.Now().Add(udpIdle))
		n, err := from.Read(buf)
		if err != nil {
			break
		}
		if _, err := to.Write(buf[:n]); err != nil && !errors.Is(err, unix.ECONNREFUSED) {
			break
		}
	}
	e.mu.Lock()
	if e.flows[key] == f {
		delete(e.flows, key)
	}
	e.mu.Unlock()
	f.down.Close()
	f.up.Close()
}

// resolve answers a DNS query sent to any address's port 53: allowed names
// are looked up on the host and their addresses remembered as reachable;
// every other name is answered NXDOMAIN.
func (e *egress) resolve(src, dst netip.AddrPort, b []byte) {
	var p dnsmessage.Parser
	h, err := p.Start(b)
	if err != nil || h.Response {
		e.deny("udp " + dst.String())
		return
	}
	q, err := p.Question()
	if err != nil {
		e.deny("udp " + dst.String())
		return
	}
	reply := func(answer []byte) {
		if answer != nil {
			_ = e.ns.sendFrom(dst, src, answer)
		}
	}
	if !e.rule.allowsName(trimDot(q.Name.String())) {
		// No lookup: answered at once, so refusals never queue behind one.
		answer, _ := e.answer(h, q)
		e.deny("dns " + trimDot(q.Name.String()))
		reply(answer)
		return
	}
	select {
	case e.lookups <- struct{}{}:
	default:
		return // resolvers retry
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer func() { <-e.lookups }()
		answer, _ := e.answer(h, q)
		reply(answer)
	}()
}

func trimDot(s string) string {
	if len(s) > 1 && s[len(s)-1] == '.' {
		return s[:len(s)-1]
	}
	return s
}

// answer builds the reply to one question; ok is false for a name the
// allow list does not hold.
func (e *egress) answer(h dnsmessage.Header, q dnsmessage.Question) (reply []byte, ok bool) {
	rh := dnsmessage.Header{ID: h.ID, Response: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	name := trimDot(q.Name.String())
	ok = e.rule.allowsName(name)
	var ips []netip.Addr
	switch {
	case !ok:
		rh.RCode = dnsmessage.RCodeNameError
	case q.Class != dnsmessage.ClassINET:
	case q.Type == dnsmessage.TypeA || q.Type == dnsmessage.TypeAAAA:
		network := "ip4"
		if q.Type == dnsmessage.TypeAAAA {
			network = "ip6"
		}
		ctx, cancel := context.WithTimeout(e.ctx, resolveTimeout)
		addrs, err := hostLookup(ctx, network, name)
		cancel()
		var dnsErr *net.DNSError
		switch {
		case err == nil:
			ips = addrs
			if len(ips) > maxAnswerRecords {
				ips = ips[:maxAnswerRecords]
			}
			// The kernel's sets first, so the address is reachable by the
			// time the command reads the answer; an address the sets could
			// not take is not answered.
			if err := e.ns.permit(e.rule.remember(name, ips)); err != nil {
				ips, rh.RCode = nil, dnsmessage.RCodeServerFailure
			}
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			// No address of this family: an empty answer.
		default:
			rh.RCode = dnsmessage.RCodeServerFailure
		}
	}
	bld := dnsmessage.NewBuilder(nil, rh)
	bld.EnableCompression()
	if bld.StartQuestions() != nil || bld.Question(q) != nil || bld.StartAnswers() != nil {
		return nil, ok
	}
	for _, ip := range ips {
		ip = ip.Unmap()
		rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 30}
		var err error
		if ip.Is4() && q.Type == dnsmessage.TypeA {
			err = bld.AResource(rr, dnsmessage.AResource{A: ip.As4()})
		} else if ip.Is6() && q.Type == dnsmessage.TypeAAAA {
			err = bld.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: ip.As16()})
		}
		if err != nil {
			return nil, ok
		}
	}
	out, err := bld.Finish()
	if err != nil {
		return nil, ok
	}
	return out, ok
}
