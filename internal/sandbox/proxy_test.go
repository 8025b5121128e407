//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// greeter listens on the host's loopback and greets every connection.
func greeter(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// udpEcho answers every datagram on the host's loopback with "echo:" and it.
func udpEcho(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = c.WriteTo(append([]byte("echo:"), buf[:n]...), from)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// startEgress makes a real network namespace with its egress.
func startEgress(t *testing.T, allow []AllowHost) *egress {
	t.Helper()
	privileged(t)
	ns, err := newNetns()
	if err != nil {
		t.Fatal(err)
	}
	e, err := newEgress(context.Background(), ns, allow)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	return e
}

// dialIn connects from inside the namespace (the socket is made there) and
// returns the connection for I/O outside it.
func dialIn(t *testing.T, e *egress, network, addr string) (net.Conn, error) {
	t.Helper()
	var c net.Conn
	var err error
	e.ns.do(func() { c, err = net.DialTimeout(network, addr, 3*time.Second) })
	return c, err
}

// greeting reads what a TCP connection made in the namespace receives.
func greeting(t *testing.T, e *egress, addr string) (string, error) {
	c, err := dialIn(t, e, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	return string(b), err
}

func TestEgressTCP(t *testing.T) {
	allowed, other := greeter(t), greeter(t)
	e := startEgress(t, []AllowHost{{Host: "LocalHost.", Port: allowed}, {Scheme: "https", Host: "api.example.invalid"}})
	for _, addr := range []string{"127.0.0.1:" + strconv.Itoa(allowed)} {
		if got, err := greeting(t, e, addr); got != "hello\n" {
			t.Errorf("granted %s: got %q, %v; want the greeting", addr, got, err)
		}
	}
	// Refused by the kernel at connect: nothing reaches the egress.
	for _, addr := range []string{"127.0.0.1:" + strconv.Itoa(other), "192.0.2.1:443", "[2001:db8::1]:80", "[::1]:" + strconv.Itoa(allowed)} {
		got, err := greeting(t, e, addr)
		if got != "" || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("refused %s: got %q, %v; want connection refused", addr, got, err)
		}
	}
	if d, n := e.Denied(); n != 0 {
		t.Errorf("the egress saw refused connections: %v", d)
	}
	// The egress checks again whatever reaches it: a grant the kernel's
	// sets hold but the rule does not is reset there.
	if err := e.ns.permit([]grant{{netip.MustParseAddr("192.0.2.9"), 7}}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := greeting(t, e, "192.0.2.9:7"); got != "" || err == nil {
		t.Errorf("past the sets alone: got %q, %v", got, err)
	}
	if d, n := e.Denied(); n != 1 || d[0] != "tcp 192.0.2.9:7" {
		t.Errorf("denied = %v (%d), want the egress's own refusal", d, n)
	}
}

// A server the command runs inside its namespace is its own: nothing
// diverts traffic a namespace socket waits for.
func TestEgressKeepsNamespaceLoopback(t *testing.T) {
	e := startEgress(t, nil)
	var ln net.Listener
	var err error
	e.ns.do(func() { ln, err = net.Listen("tcp4", "127.0.0.1:0") })
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = c.Write([]byte("inside\n"))
			c.Close()
		}
	}()
	if got, err := greeting(t, e, ln.Addr().String()); got != "inside\n" {
		t.Fatalf("namespace-local server: got %q, %v", got, err)
	}
	if _, n := e.Denied(); n != 0 {
		t.Fatalf("a namespace-local connection was seen by the egress (%d refusals)", n)
	}
}

// Closing the egress ends a forwarded connection whose ends both stay
// open (an upstream that never closes, a command that never exits).
func TestEgressCloseEndsForwards(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			held <- c // kept open, never written
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	privileged(t)
	ns, err := newNetns()
	if err != nil {
		t.Fatal(err)
	}
	e, err := newEgress(context.Background(), ns, []AllowHost{{Host: "127.0.0.1", Port: port}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := dialIn(t, e, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case up := <-held:
		defer up.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the forward never reached the upstream")
	}
	done := make(chan struct{})
	go func() { e.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("close waits for a forward whose ends stay open")
	}
}

// A command holding connections open holds at most maxTCPConns of the
// egress's; one more is reset and recorded.
func TestEgressConnectionsBounded(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var ups []net.Conn
	defer func() {
		for _, c := range ups {
			c.Close()
		}
	}()
	accepted := make(chan net.Conn)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never written
		}
	}()
	e := startEgress(t, []AllowHost{{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port}})
	var downs []net.Conn
	defer func() {
		for _, c := range downs {
			c.Close()
		}
	}()
	for range maxTCPConns {
		c, err := dialIn(t, e, "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		downs = append(downs, c)
		select {
		case up := <-accepted:
			ups = append(ups, up)
		case <-time.After(10 * time.Second):
			t.Fatalf("connection %d never reached the upstream", len(downs))
		}
	}
	if got, err := greeting(t, e, ln.Addr().String()); got != "" || err == nil {
		t.Fatalf("connection %d: %q %v, want a reset", maxTCPConns+1, got, err)
	}
	if d, _ := e.Denied(); len(d) != 1 || !strings.Contains(d[0], "over 256 connections") {
		t.Fatalf("denied = %v", d)
	}
}

// At most maxUDPFlows (source, destination) pairs are held; a datagram that
// would open one more is dropped and recorded.
func TestEgressUDPFlowsBounded(t *testing.T) {
	echo := udpEcho(t)
	e := startEgress(t, []AllowHost{{Host: "127.0.0.1", Port: echo}})
	addr := "127.0.0.1:" + strconv.Itoa(echo)
	var socks []net.Conn
	defer func() {
		for _, c := range socks {
			c.Close()
		}
	}()
	for i := range maxUDPFlows {
		c, err := dialIn(t, e, "udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		socks = append(socks, c)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		if n, err := c.Read(buf); err != nil || string(buf[:n]) != "echo:x" {
			t.Fatalf("flow %d: %q %v", i, buf[:n], err)
		}
	}
	if got, err := exchange(t, e, addr, []byte("one more")); err == nil {
		t.Fatalf("flow %d answered %q", maxUDPFlows+1, got)
	}
	if d, _ := e.Denied(); len(d) != 1 || !strings.Contains(d[0], "over 64 flows") {
		t.Fatalf("denied = %v", d)
	}
}

// exchange sends one datagram from inside the namespace and waits for an
// answer.
func exchange(t *testing.T, e *egress, addr string, msg []byte) ([]byte, error) {
	c, err := dialIn(t, e, "udp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write(msg); err != nil {
		return nil, err
	}
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	return buf[:n], err
}

func TestEgressUDP(t *testing.T) {
	allowed, other := udpEcho(t), udpEcho(t)
	e := startEgress(t, []AllowHost{{Host: "localhost", Port: allowed}})
	addr := "127.0.0.1:" + strconv.Itoa(allowed)
	for i := range 3 { // later datagrams take the flow's own socket
		msg := fmt.Sprint("ping", i)
		if got, err := exchange(t, e, addr, []byte(msg)); string(got) != "echo:"+msg {
			t.Fatalf("granted %s: got %q, %v", addr, got, err)
		}
	}
	// Refused by the kernel: an ICMP port unreachable, which a connected
	// socket reads as connection refused.
	if got, err := exchange(t, e, "127.0.0.1:"+strconv.Itoa(other), []byte("x")); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("non-granted UDP: %q, %v; want connection refused", got, err)
	}
	if d, n := e.Denied(); n != 0 {
		t.Fatalf("the egress saw a refused datagram: %v", d)
	}
}

func dnsQuery(t *testing.T, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7, RecursionDesired: true})
	if err := b.StartQuestions(); err != nil {
		t.Fatal(err)
	}
	if err := b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}); err != nil {
		t.Fatal(err)
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The namespace's resolver answers allowed names only, and an address it
// answers becomes reachable on the entry's port.
func TestEgressResolver(t *testing.T) {
	allowed := greeter(t)
	e := startEgress(t, []AllowHost{{Host: "localhost", Port: allowed}})
	// The launch-time addresses are dropped, so the port is reachable only
	// through what the resolver answers.
	e.rule.mu.Lock()
	e.rule.launchIPs = map[netip.Addr][]int{}
	e.rule.mu.Unlock()
	target := "127.0.0.1:" + strconv.Itoa(allowed)
	if got, _ := greeting(t, e, target); got != "" {
		t.Fatalf("reached %s before any answer", target)
	}
	for _, tt := range []struct {
		name  string
		rcode dnsmessage.RCode
		addrs int
	}{{"localhost.", dnsmessage.RCodeSuccess, 1}, {"metadata.google.internal.", dnsmessage.RCodeNameError, 0}} {
		b, err := exchange(t, e, "127.0.0.53:53", dnsQuery(t, tt.name, dnsmessage.TypeA))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var m dnsmessage.Message
		if err := m.Unpack(b); err != nil {
			t.Fatal(err)
		}
		if m.Header.RCode != tt.rcode || len(m.Answers) != tt.addrs || m.Header.ID != 7 {
			t.Errorf("%s: rcode %v, %d answers, id %d", tt.name, m.Header.RCode, len(m.Answers), m.Header.ID)
		}
	}
	if got, err := greeting(t, e, target); got != "hello\n" {
		t.Fatalf("after the answer, %s: %q %v", target, got, err)
	}
	if d, _ := e.Denied(); !strings.Contains(strings.Join(d, " "), "dns metadata.google.internal") {
		t.Errorf("denied = %v, want the refused name", d)
	}
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Issue #12 item 6: whatever a command sends, what the egress keeps for it
// is bounded. Tens of thousands of refused connections, datagrams and
// names leave the record at its cap and the heap where it was.
func TestEgressRefusalsBounded(t *testing.T) {
	e := startEgress(t, nil)
	var udp, tcp []int
	e.ns.do(func() {
		for range 64 {
			fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Error(err)
				return
			}
			udp = append(udp, fd)
		}
	})
	defer func() {
		for _, fd := range append(udp, tcp...) {
			syscall.Close(fd)
		}
	}()
	long := strings.Repeat("a", 60)
	send := func(round int) {
		for i, fd := range udp {
			// A datagram to a refused address, and a query for a refused
			// name of 200-odd bytes: each a distinct target.
			port := 1 + (round*len(udp)+i)%65000
			_ = syscall.Sendto(fd, []byte("x"), 0, &syscall.SockaddrInet4{Addr: [4]byte{10, byte(round >> 8), byte(round), byte(i)}, Port: port})
			name := fmt.Sprintf("%s.%s.%s.r%di%d.example.", long, long, long, round, i)
			q := dnsQuery(t, name, dnsmessage.TypeA)
			_ = syscall.Sendto(fd, q, 0, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 53}, Port: 53})
		}
	}
	send(0)
	waitRefused(t, e, 64) // the names; the kernel refuses the datagrams
	before := heapInUse()
	const rounds = 300
	for r := 1; r <= rounds; r++ {
		send(r)
		if r%20 == 0 {
			// Refused TCP connections too, on fresh sockets.
			e.ns.do(func() {
				for i := range 20 {
					c, err := net.DialTimeout("tcp4", fmt.Sprintf("10.9.%d.%d:%d", r%250, i, 1000+r), time.Second)
					if err == nil {
						c.Close()
					}
				}
			})
		}
		// Paced, so the egress's socket buffer does not drop most of them.
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, got := e.Denied(); got >= int64(r+1)*64*9/10 {
				break
			}
		}
	}
	n := waitRefused(t, e, (rounds+1)*64)
	after := heapInUse()
	d, _ := e.Denied()
	t.Logf("%d refusals; record holds %d; heap %d -> %d bytes", n, len(d), before, after)
	if len(d) != maxDenied {
		t.Errorf("the record holds %d targets, want its cap %d", len(d), maxDenied)
	}
	// Kept one by one, the refused names held about 1.5 MB here.
	if after > before+512<<10 {
		t.Errorf("the heap grew from %d to %d bytes over %d refusals", before, after, n)
	}
}

// waitRefused waits until at least n refusals were counted (datagrams may
// be dropped under load; three in four must arrive) and returns the count.
func waitRefused(t *testing.T, e *egress, n int64) int64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var got, last int64 = 0, -1
	for time.Now().Before(deadline) {
		_, got = e.Denied()
		if got >= n || got == last && got >= n*3/4 {
			return got
		}
		last = got
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("only %d of %d refusals arrived", got, n)
	return got
}

func TestAllowRule(t *testing.T) {
	r := newAllowRule(context.Background(), []AllowHost{
		{Host: "LocalHost.", Port: 8080}, {Scheme: "https", Host: "api.example.invalid"}, {Host: "[2001:db8::5]"},
	})
	lo := netip.MustParseAddr("127.0.0.1")
	for _, tt := range []struct {
		ip   string
		port int
		want bool
	}{
		{"127.0.0.1", 8080, true}, // localhost's launch-time address
		{"::ffff:127.0.0.1", 8080, true},
		{"127.0.0.1", 8081, false},
		{"2001:db8::5", 1, true}, // an address entry, every port
		{"192.0.2.7", 443, false},
	} {
		if got := r.permitsAddr(netip.MustParseAddr(tt.ip), tt.port); got != tt.want {
			t.Errorf("permitsAddr(%s, %d) = %v", tt.ip, tt.port, got)
		}
	}
	if !r.allowsName("API.example.invalid.") || r.allowsName("example.invalid") {
		t.Error("allowsName")
	}
	// An answered address is reachable on its entry's port only.
	ans := netip.MustParseAddr("192.0.2.7")
	added, removed := r.remember("api.example.invalid", []netip.Addr{ans})
	if len(added) != 1 || added[0] != (grant{ans, 443}) || len(removed) != 0 {
		t.Errorf("remember gave +%v -%v, want +[192.0.2.7:443]", added, removed)
	}
	if added, _ := r.remember("api.example.invalid", []netip.Addr{ans}); len(added) != 0 {
		t.Errorf("an address answered again is added again: %v", added)
	}
	if !r.permitsAddr(ans, 443) || r.permitsAddr(ans, 80) {
		t.Error("an answered address must be reachable on the entry's port only")
	}
	var gone []grant
	for i := range 3 * maxAnswered {
		_, removed := r.remember("api.example.invalid", []netip.Addr{netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})})
		gone = append(gone, removed...)
	}
	if len(gone) != 2*maxAnswered+1 || gone[0] != (grant{ans, 443}) {
		t.Errorf("evictions gave %d removals starting %v, want %d starting with 192.0.2.7:443", len(gone), gone[:1], 2*maxAnswered+1)
	}
	if n := len(r.answered["api.example.invalid"]); n != maxAnswered || r.permitsAddr(ans, 443) {
		t.Errorf("answered keeps %d addresses (the oldest still reachable: %v), want the newest %d", n, r.permitsAddr(ans, 443), maxAnswered)
	}
	empty := newAllowRule(context.Background(), nil)
	if empty.permitsAddr(lo, 80) || empty.allowsName("localhost") {
		t.Fatal("an empty allow list must deny every IP destination")
	}
}

// FuzzResolverAnswer feeds the namespace's resolver any datagram a
// command could send: it never panics, and never gives an address for a
// name the allow list does not hold.
func FuzzResolverAnswer(f *testing.F) {
	for _, name := range []string{"localhost.", "evil.example.", "a.b.c."} {
		for _, typ := range []dnsmessage.Type{dnsmessage.TypeA, dnsmessage.TypeAAAA, dnsmessage.TypeTXT} {
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 1})
			_ = b.StartQuestions()
			_ = b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET})
			q, _ := b.Finish()
			f.Add(q)
		}
	}
	e := &egress{rule: &allowRule{allow: []AllowHost{{Host: "localhost"}}, answered: map[string][]netip.Addr{}}, ctx: context.Background()}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p dnsmessage.Parser
		h, err := p.Start(b)
		if err != nil {
			return
		}
		q, err := p.Question()
		if err != nil {
			return
		}
		out, ok := e.answer(h, q)
		if out == nil {
			return
		}
		if len(out) > 512 {
			t.Fatalf("a %d-byte answer: resolvers without EDNS take 512", len(out))
		}
		var m dnsmessage.Message
		if err := m.Unpack(out); err != nil {
			t.Fatalf("unparsable answer: %v", err)
		}
		if !ok && (len(m.Answers) > 0 || m.Header.RCode != dnsmessage.RCodeNameError) {
			t.Fatalf("refused name %q answered %v", q.Name, m)
		}
		if ok && !strings.EqualFold(trimDot(q.Name.String()), "localhost") {
			t.Fatalf("%q treated as allowed", q.Name)
		}
	})
}

// A name with many addresses is answered within 512 bytes, and only the
// addresses answered become reachable.
func TestResolverAnswerFitsUDP(t *testing.T) {
	old := hostLookup
	defer func() { hostLookup = old }()
	var many []netip.Addr
	for i := range 40 {
		many = append(many, netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(i)}))
	}
	hostLookup = func(context.Context, string, string) ([]netip.Addr, error) { return many, nil }
	long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + "."
	e := &egress{rule: &allowRule{allow: []AllowHost{{Host: trimDot(long)}}, answered: map[string][]netip.Addr{}}, ctx: context.Background()}
	q := dnsmessage.Question{Name: dnsmessage.MustNewName(long), Type: dnsmessage.TypeAAAA, Class: dnsmessage.ClassINET}
	out, ok := e.answer(dnsmessage.Header{ID: 3}, q)
	var m dnsmessage.Message
	if !ok || m.Unpack(out) != nil {
		t.Fatalf("answer %v %d bytes", ok, len(out))
	}
	if len(out) > 512 || len(m.Answers) != maxAnswerRecords || m.Header.Truncated {
		t.Fatalf("%d bytes, %d records, truncated %v", len(out), len(m.Answers), m.Header.Truncated)
	}
	if e.rule.permitsAddr(many[maxAnswerRecords], 443) || !e.rule.permitsAddr(many[0], 443) {
		t.Error("the reachable addresses are not exactly those answered")
	}
}
