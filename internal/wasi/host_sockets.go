package wasi

import (
	"net/netip"
	"time"

	"github.com/murmur/mur/internal/wasm/cm"
)

func ipVal(a netip.Addr) cm.Val {
	if a.Is4() {
		b := a.As4()
		return cm.Variant("ipv4", cm.Tuple(cm.U8(b[0]), cm.U8(b[1]), cm.U8(b[2]), cm.U8(b[3])))
	}
	b := a.As16()
	var parts [8]cm.Val
	for i := range parts {
		parts[i] = cm.U16(uint16(b[2*i])<<8 | uint16(b[2*i+1]))
	}
	return cm.Variant("ipv6", cm.Tuple(parts[:]...))
}

func sockAddrVal(ap netip.AddrPort) cm.Val {
	ip := ipVal(ap.Addr())
	addr, _ := ip.Payload()
	if ap.Addr().Is4() {
		return cm.Variant("ipv4", cm.Record(
			cm.Field{Name: "port", Val: cm.U16(ap.Port())},
			cm.Field{Name: "address", Val: addr},
		))
	}
	return cm.Variant("ipv6", cm.Record(
		cm.Field{Name: "port", Val: cm.U16(ap.Port())},
		cm.Field{Name: "flow-info", Val: cm.U32(0)},
		cm.Field{Name: "address", Val: addr},
		cm.Field{Name: "scope-id", Val: cm.U32(0)},
	))
}

func sockAddrOf(v cm.Val) netip.AddrPort {
	rec, _ := v.Payload()
	port, _ := rec.Field("port")
	addr, _ := rec.Field("address")
	parts := addr.List()
	if v.Str() == "ipv4" {
		var b [4]byte
		for i := range b {
			b[i] = parts[i].U8()
		}
		return netip.AddrPortFrom(netip.AddrFrom4(b), port.U16())
	}
	var b [16]byte
	for i := 0; i < 8; i++ {
		x := parts[i].U16()
		b[2*i], b[2*i+1] = byte(x>>8), byte(x)
	}
	// An IPv4-mapped address is the IPv4 destination it maps to.
	return netip.AddrPortFrom(canonIP(netip.AddrFrom16(b)), port.U16())
}

func sockResult(v cm.Val, err error) cm.Val {
	if err != nil {
		return cm.Err(cm.Enum(string(SockCodeOf(err))))
	}
	return cm.OK(v)
}

func sockUnit(err error) cm.Val {
	if err != nil {
		return cm.Err(cm.Enum(string(SockCodeOf(err))))
	}
	return cm.OK()
}

// network is the host object behind wasi:sockets/network.network: the
// capability every socket operation presents; the policy lives in the Ctx.
type network struct{}

func (d *definer) sockets() {
	n := d.iface("wasi:sockets/network")
	n.resource("network", rtNetwork)
	n.resource("error", rtError)
	n.fn("network-error-code", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		e, _, err := handle[*ioError](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		if se, ok := e.err.(*StreamError); ok {
			if code := SockCodeOf(se.Err); code != SockUnknown {
				return cm.Some(cm.Enum(string(code))), nil
			}
		}
		return cm.None(), nil
	})
	in := d.iface("wasi:sockets/instance-network")
	in.resource("network", rtNetwork)
	in.fn("instance-network", func(x *Ctx, _ *cm.Caller, _ []cm.Val) (cm.Val, error) {
		return x.own(rtNetwork, network{}), nil
	})

	l := d.iface("wasi:sockets/ip-name-lookup")
	l.resource("network", rtNetwork)
	l.resource("pollable", rtPollable)
	l.resource("resolve-address-stream", rtResolveStream)
	l.fn("resolve-addresses", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		if _, _, err := handle[network](x, c, a[0]); err != nil {
			return cm.Val{}, err
		}
		r, err := x.net.resolveAsync(a[1].Str())
		if err != nil {
			return sockResult(cm.Val{}, err), nil
		}
		return cm.OK(x.own(rtResolveStream, r)), nil
	})
	l.fn("[method]resolve-address-stream.resolve-next-address", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		r, _, err := handle[*ResolveStream](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		ip, err := r.Next()
		if err != nil {
			return sockResult(cm.Val{}, err), nil
		}
		if ip == nil {
			return cm.OK(cm.None()), nil
		}
		return cm.OK(cm.Some(ipVal(*ip))), nil
	})
	l.fn("[method]resolve-address-stream.subscribe", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		r, _, err := handle[*ResolveStream](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		return x.own(rtPollable, r.Subscribe()), nil
	})

	d.tcp()
	d.udp()
}

func familyOf(v cm.Val) bool { return v.Str() == "ipv6" }

func familyVal(v6 bool) cm.Val {
	if v6 {
		return cm.Enum("ipv6")
	}
	return cm.Enum("ipv4")
}

func (d *definer) tcp() {
	cr := d.iface("wasi:sockets/tcp-create-socket")
	cr.resource("network", rtNetwork)
	cr.resource("tcp-socket", rtTCPSocket)
	cr.fn("create-tcp-socket", func(x *Ctx, _ *cm.Caller, a []cm.Val) (cm.Val, error) {
		return cm.OK(x.own(rtTCPSocket, newTCP(x.net, familyOf(a[0])))), nil
	})

	t := d.iface("wasi:sockets/tcp")
	for name, ty := range map[string]cm.ResourceType{
		"network": rtNetwork, "pollable": rtPollable, "tcp-socket": rtTCPSocket,
		"input-stream": rtInputStream, "output-stream": rtOutputStream,
	} {
		t.resource(name, ty)
	}
	sock := func(name string, f func(x *Ctx, s *TCPSocket, a []cm.Val) cm.Val) {
		t.fn("[method]tcp-socket."+name, func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			s, _, err := handle[*TCPSocket](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			return f(x, s, a), nil
		})
	}
	// withNet methods present the network capability as their second
	// argument; it is resolved (which also ends the guest's borrow).
	withNet := func(name string, f func(x *Ctx, s *TCPSocket, a []cm.Val) cm.Val) {
		t.fn("[method]tcp-socket."+name, func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			s, _, err := handle[*TCPSocket](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			if _, _, err := handle[network](x, c, a[1]); err != nil {
				return cm.Val{}, err
			}
			return f(x, s, a), nil
		})
	}
	withNet("start-bind", func(_ *Ctx, s *TCPSocket, a []cm.Val) cm.Val { return sockUnit(s.StartBind(sockAddrOf(a[2]))) })
	sock("finish-bind", func(_ *Ctx, s *TCPSocket, _ []cm.Val) cm.Val { return sockUnit(s.FinishBind()) })
	withNet("start-connect", func(_ *Ctx, s *TCPSocket, a []cm.Val) cm.Val { return sockUnit(s.StartConnect(sockAddrOf(a[2]))) })
	sock("finish-connect", func(x *Ctx, s *TCPSocket, _ []cm.Val) cm.Val {
		in, out, err := s.FinishConnect()
		if err != nil {
			return sockResult(cm.Val{}, err)
		}
		return cm.OK(cm.Tuple(x.own(rtInputStream, in), x.own(rtOutputStream, out)))
	})
	// No grant admits inbound connections, so listening is refused.
	denyListen := func(*Ctx, *TCPSocket, []cm.Val) cm.Val { return cm.Err(cm.Enum(string(SockAccessDenied))) }
	sock("start-listen", denyListen)
	sock("finish-listen", func(*Ctx, *TCPSocket, []cm.Val) cm.Val { return cm.Err(cm.Enum(string(SockNotInProgress))) })
	sock("accept", func(*Ctx, *TCPSocket, []cm.Val) cm.Val { return cm.Err(cm.Enum(string(SockInvalidState))) })
	sock("is-listening", func(*Ctx, *TCPSocket, []cm.Val) cm.Val { return cm.Bool(false) })
	sock("set-listen-backlog-size", func(_ *Ctx, _ *TCPSocket, a []cm.Val) cm.Val {
		if a[1].U64() == 0 {
			return cm.Err(cm.Enum(string(SockInvalidArgument)))
		}
		return cm.Err(cm.Enum(string(SockNotSupported)))
	})
	sock("local-address", func(_ *Ctx, s *TCPSocket, _ []cm.Val) cm.Val {
		ap, err := s.LocalAddress()
		return sockResult(sockAddrVal(ap), err)
	})
	sock("remote-address", func(_ *Ctx, s *TCPSocket, _ []cm.Val) cm.Val {
		ap, err := s.RemoteAddress()
		return sockResult(sockAddrVal(ap), err)
	})
	sock("address-family", func(_ *Ctx, s *TCPSocket, _ []cm.Val) cm.Val { return familyVal(s.v6) })
	sock("subscribe", func(x *Ctx, s *TCPSocket, _ []cm.Val) cm.Val { return x.own(rtPollable, s.Subscribe()) })
	sock("shutdown", func(_ *Ctx, s *TCPSocket, a []cm.Val) cm.Val { return sockUnit(s.Shutdown(a[1].Str())) })

	positive := func(ok bool) error {
		if !ok {
			return sockErr(SockInvalidArgument, "value must be positive")
		}
		return nil
	}
	sock("keep-alive-enabled", func(_ *Ctx, s *TCPSocket, _ []cm.Val) cm.Val { return cm.OK(cm.Bool(s.Opts().keepAlive)) })
	sock("set-keep-alive-enabled", func(_ *Ctx, s *TCPSocket, a []cm.Val) cm.Val {
		return sockUnit(s.SetOpt(func(o *sockOpts) error { o.keepAlive, o.keepAliveIsSet = a[1].Bool(), true; return nil }))
	})
	sock("keep-alive-idle-time", func(_ *Ctx, s *TCPSocket, _ []cm.Val) cm.Val { return cm.OK(cm.U64(uint64(s.Opts().keepIdle))) })
	sock("set-keep-alive-idle-time", func(_ *Ctx, s *TCPSocket, a []cm.Val) cm.Val {
		return sockUnit(s.SetOpt(func(o *sockOpts) error {
			o.keepIdle, o.keepAliveIsSet = time.Duration(min(a[1].U64(), 1<<62)), true
			return positive(a[1].U64() > 0)
		}))
	})
	sock("keep-alive-interval", func(_ *Ctx, s *TCPSocket, _ []cm.Val) cm.Val { return cm.OK(cm.U64(uint64(s.Opts().keepInterval))) })
	sock("set-keep-alive-interval", func(_ *Ctx, s *TCPSocket, a []cm.Val) cm.Val {
		return sockUnit(s.SetOpt(func(o *sockOpts) error {
			o.keepInterval, o.keepAliveIsSet = time.Duration(min(a[1].U64(), 1<<62)), true
			return positive(a[1].U64() > 0)
		}))
	})
	sock("keep-alive-count", func(_ *Ctx, s *TCPSocket, _ []cm.Val) cm.Val { return cm.OK(cm.U32(s.Opts().keepCount)) })
	sock("set-keep-alive-count", func(_ *Ctx, s *TCPSocket, a []cm.Val) cm.Val {
		return sockUnit(s.SetOpt(func(o *sockOpts) error {
			o.keepCount, o.keepAliveIsSet = a[1].U32(), true
			return positive(a[1].U32() > 0)
		}))
	})
	sock("hop-limit", func(_ *Ctx, s *TCPSocket, _ []cm.Val) cm.Val { return cm.OK(cm.U8(s.Opts().hopLimit)) })
	sock("set-hop-limit", func(_ *Ctx, s *TCPSocket, a []cm.Val) cm.Val {
		return sockUnit(s.SetOpt(func(o *sockOpts) error { o.hopLimit = a[1].U8(); return positive(a[1].U8() > 0) }))
	})
	sock("receive-buffer-size", func(_ *Ctx, s *TCPSocket, _ []cm.Val) cm.Val { return cm.OK(cm.U64(s.Opts().recvBuf)) })
	sock("set-receive-buffer-size", func(_ *Ctx, s *TCPSocket, a []cm.Val) cm.Val {
		return sockUnit(s.SetOpt(func(o *sockOpts) error { o.recvBuf = a[1].U64(); return positive(a[1].U64() > 0) }))
	})
	sock("send-buffer-size", func(_ *Ctx, s *TCPSocket, _ []cm.Val) cm.Val { return cm.OK(cm.U64(s.Opts().sendBuf)) })
	sock("set-send-buffer-size", func(_ *Ctx, s *TCPSocket, a []cm.Val) cm.Val {
		return sockUnit(s.SetOpt(func(o *sockOpts) error { o.sendBuf = a[1].U64(); return positive(a[1].U64() > 0) }))
	})
}

func (d *definer) udp() {
	cr := d.iface("wasi:sockets/udp-create-socket")
	cr.resource("network", rtNetwork)
	cr.resource("udp-socket", rtUDPSocket)
	cr.fn("create-udp-socket", func(x *Ctx, _ *cm.Caller, a []cm.Val) (cm.Val, error) {
		return cm.OK(x.own(rtUDPSocket, newUDP(x.net, familyOf(a[0])))), nil
	})

	u := d.iface("wasi:sockets/udp")
	for name, ty := range map[string]cm.ResourceType{
		"network": rtNetwork, "pollable": rtPollable, "udp-socket": rtUDPSocket,
		"incoming-datagram-stream": rtDatagramIn, "outgoing-datagram-stream": rtDatagramOut,
	} {
		u.resource(name, ty)
	}
	sock := func(name string, f func(x *Ctx, s *UDPSocket, a []cm.Val) cm.Val) {
		u.fn("[method]udp-socket."+name, func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			s, _, err := handle[*UDPSocket](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			return f(x, s, a), nil
		})
	}
	u.fn("[method]udp-socket.start-bind", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		s, _, err := handle[*UDPSocket](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		if _, _, err := handle[network](x, c, a[1]); err != nil {
			return cm.Val{}, err
		}
		return sockUnit(s.StartBind(sockAddrOf(a[2]))), nil
	})
	sock("finish-bind", func(_ *Ctx, s *UDPSocket, _ []cm.Val) cm.Val { return sockUnit(s.FinishBind()) })
	sock("stream", func(x *Ctx, s *UDPSocket, a []cm.Val) cm.Val {
		var remote *netip.AddrPort
		if a[1].IsSome() {
			p, _ := a[1].Payload()
			ap := sockAddrOf(p)
			remote = &ap
		}
		in, out, err := s.Stream(remote)
		if err != nil {
			return sockResult(cm.Val{}, err)
		}
		return cm.OK(cm.Tuple(x.own(rtDatagramIn, in), x.own(rtDatagramOut, out)))
	})
	sock("local-address", func(_ *Ctx, s *UDPSocket, _ []cm.Val) cm.Val {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.bound {
			return cm.Err(cm.Enum(string(SockInvalidState)))
		}
		return cm.OK(sockAddrVal(s.local))
	})
	sock("remote-address", func(_ *Ctx, s *UDPSocket, _ []cm.Val) cm.Val {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.remote.IsValid() {
			return cm.Err(cm.Enum(string(SockInvalidState)))
		}
		return cm.OK(sockAddrVal(s.remote))
	})
	sock("address-family", func(_ *Ctx, s *UDPSocket, _ []cm.Val) cm.Val { return familyVal(s.v6) })
	sock("subscribe", func(x *Ctx, _ *UDPSocket, _ []cm.Val) cm.Val { return x.own(rtPollable, readyPollable{}) })
	setOpt := func(s *UDPSocket, f func(o *sockOpts) bool) cm.Val {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !f(&s.opts) {
			return cm.Err(cm.Enum(string(SockInvalidArgument)))
		}
		if s.conn != nil {
			return sockUnit(s.applyLocked())
		}
		return cm.OK()
	}
	sock("unicast-hop-limit", func(_ *Ctx, s *UDPSocket, _ []cm.Val) cm.Val { return cm.OK(cm.U8(s.opts.hopLimit)) })
	sock("set-unicast-hop-limit", func(_ *Ctx, s *UDPSocket, a []cm.Val) cm.Val {
		return setOpt(s, func(o *sockOpts) bool { o.hopLimit = a[1].U8(); return a[1].U8() > 0 })
	})
	sock("receive-buffer-size", func(_ *Ctx, s *UDPSocket, _ []cm.Val) cm.Val { return cm.OK(cm.U64(s.opts.recvBuf)) })
	sock("set-receive-buffer-size", func(_ *Ctx, s *UDPSocket, a []cm.Val) cm.Val {
		return setOpt(s, func(o *sockOpts) bool { o.recvBuf = a[1].U64(); return a[1].U64() > 0 })
	})
	sock("send-buffer-size", func(_ *Ctx, s *UDPSocket, _ []cm.Val) cm.Val { return cm.OK(cm.U64(s.opts.sendBuf)) })
	sock("set-send-buffer-size", func(_ *Ctx, s *UDPSocket, a []cm.Val) cm.Val {
		return setOpt(s, func(o *sockOpts) bool { o.sendBuf = a[1].U64(); return a[1].U64() > 0 })
	})

	u.fn("[method]incoming-datagram-stream.receive", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		in, _, err := handle[*DatagramIn](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		ds, err := in.Receive(min(a[1].U64(), 1024))
		if err != nil {
			return sockResult(cm.Val{}, err), nil
		}
		out := make([]cm.Val, len(ds))
		for i, d := range ds {
			out[i] = cm.Record(cm.Field{Name: "data", Val: cm.Bytes(d.Data)}, cm.Field{Name: "remote-address", Val: sockAddrVal(d.Remote)})
		}
		return cm.OK(cm.List(out...)), nil
	})
	u.fn("[method]incoming-datagram-stream.subscribe", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		in, _, err := handle[*DatagramIn](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		return x.own(rtPollable, in.Subscribe()), nil
	})
	u.fn("[method]outgoing-datagram-stream.check-send", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		o, _, err := handle[*DatagramOut](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		return cm.OK(cm.U64(o.CheckSend())), nil
	})
	u.fn("[method]outgoing-datagram-stream.send", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		o, _, err := handle[*DatagramOut](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		var ds []Datagram
		for _, v := range a[1].List() {
			data, _ := v.Field("data")
			b, _ := data.Bytes()
			d := Datagram{Data: b}
			if r, _ := v.Field("remote-address"); r.IsSome() {
				p, _ := r.Payload()
				d.Remote = sockAddrOf(p)
			}
			ds = append(ds, d)
		}
		n, err := o.Send(ds)
		return sockResult(cm.U64(n), err), nil
	})
	u.fn("[method]outgoing-datagram-stream.subscribe", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		if _, _, err := handle[*DatagramOut](x, c, a[0]); err != nil {
			return cm.Val{}, err
		}
		return x.own(rtPollable, readyPollable{}), nil
	})
}
