package wasi

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"
)

func guardFor(t *testing.T, entries ...string) *netGuard {
	t.Helper()
	a, err := ParseAllow(entries)
	if err != nil {
		t.Fatal(err)
	}
	return &netGuard{allow: a, resolved: map[string][]string{}}
}

func waitReady(t *testing.T, p Pollable) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := Block(ctx, p); err != nil {
		t.Fatal(err)
	}
}

func TestTCPSocketPolicy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello"))
			c.Close()
		}
	}()
	ap := netip.MustParseAddrPort(l.Addr().String())
	g := guardFor(t, l.Addr().String())

	s := newTCP(g, false)
	defer s.Close()
	if err := s.StartConnect(ap); err != nil {
		t.Fatal(err)
	}
	waitReady(t, s.Subscribe())
	in, _, err := s.FinishConnect()
	if err != nil {
		t.Fatal(err)
	}
	b, err := in.BlockingRead(context.Background(), 16)
	if err != nil || string(b) != "hello" {
		t.Fatalf("read %q %v", b, err)
	}
	if ra, err := s.RemoteAddress(); err != nil || ra != ap {
		t.Fatalf("remote %v %v", ra, err)
	}

	tests := []struct {
		name string
		sock *TCPSocket
		to   netip.AddrPort
		code SockCode
	}{
		{"other port", newTCP(g, false), netip.AddrPortFrom(ap.Addr(), ap.Port()+1), SockAccessDenied},
		{"other host", newTCP(g, false), netip.MustParseAddrPort("192.0.2.1:80"), SockAccessDenied},
		{"v4-mapped v6 judged as the v4 destination", newTCP(g, true), netip.AddrPortFrom(netip.AddrFrom16(ap.Addr().As16()), ap.Port()+1), SockAccessDenied},
		{"port zero", newTCP(g, false), netip.AddrPortFrom(ap.Addr(), 0), SockInvalidArgument},
		{"wrong family", newTCP(g, true), ap, SockInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer tt.sock.Close()
			if err := tt.sock.StartConnect(tt.to); SockCodeOf(err) != tt.code {
				t.Fatalf("StartConnect(%s) = %v, want %s", tt.to, err, tt.code)
			}
		})
	}
	fresh := newTCP(g, false)
	defer fresh.Close()
	if _, _, err := fresh.FinishConnect(); SockCodeOf(err) != SockNotInProgress {
		t.Fatalf("finish without start: %v", err)
	}
}

func TestResolveStreamPolicy(t *testing.T) {
	g := guardFor(t, "localhost:8080")
	if _, err := g.resolveAsync("example.invalid"); SockCodeOf(err) != SockAccessDenied {
		t.Fatalf("unlisted name: %v", err)
	}
	if _, err := g.resolveAsync("bad name!"); SockCodeOf(err) != SockInvalidArgument {
		t.Fatalf("bad name: %v", err)
	}
	r, err := g.resolveAsync("localhost")
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, r.Subscribe())
	a, err := r.Next()
	if err != nil || a == nil || !a.IsLoopback() {
		t.Fatalf("localhost resolved to %v, %v", a, err)
	}
	// The looked-up address is now reachable on the entry's port only.
	if err := g.Permit(netip.AddrPortFrom(*a, 8080)); err != nil {
		t.Fatalf("looked-up address: %v", err)
	}
	if err := g.Permit(netip.AddrPortFrom(*a, 22)); SockCodeOf(err) != SockAccessDenied {
		t.Fatalf("other port: %v", err)
	}
}

func TestUDPPolicy(t *testing.T) {
	peer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	stranger, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	pa := netip.MustParseAddrPort(peer.LocalAddr().String())
	sa := netip.MustParseAddrPort(stranger.LocalAddr().String())
	g := guardFor(t, pa.String())

	s := newUDP(g, false)
	defer s.Close()
	in, out, err := s.Stream(nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := out.Send([]Datagram{{Data: []byte("one"), Remote: pa}, {Data: []byte("two"), Remote: sa}})
	if n != 1 || err != nil {
		t.Fatalf("send = %d, %v; want the allowed one only", n, err)
	}
	if _, err := out.Send([]Datagram{{Data: []byte("x"), Remote: sa}}); SockCodeOf(err) != SockAccessDenied {
		t.Fatalf("send to stranger: %v", err)
	}
	buf := make([]byte, 16)
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	k, from, err := peer.ReadFromUDPAddrPort(buf)
	if err != nil || string(buf[:k]) != "one" {
		t.Fatalf("peer got %q %v", buf[:k], err)
	}
	local := netip.MustParseAddrPort(s.conn.LocalAddr().String())
	stranger.WriteToUDPAddrPort([]byte("spoof"), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), local.Port()))
	peer.WriteToUDPAddrPort([]byte("reply"), from)
	deadline := time.Now().Add(5 * time.Second)
	var got []Datagram
	for len(got) == 0 && time.Now().Before(deadline) {
		ds, err := in.Receive(10)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ds...)
		time.Sleep(10 * time.Millisecond)
	}
	for _, d := range got {
		if string(d.Data) != "reply" || d.Remote != pa {
			t.Fatalf("received %q from %s; only the allowed peer's datagrams may arrive", d.Data, d.Remote)
		}
	}
	if len(got) == 0 {
		t.Fatal("no datagram from the allowed peer")
	}
}
