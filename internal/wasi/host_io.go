package wasi

import (
	"github.com/murmur/mur/internal/wasm/cm"
)

// ioError is the host object behind a wasi:io/error resource.
type ioError struct{ err error }

func (x *Ctx) streamResult(err error, ok cm.Val) cm.Val {
	if err == nil {
		return cm.OK(ok)
	}
	if err == ErrStreamClosed {
		return cm.Err(cm.Variant("closed"))
	}
	return cm.Err(cm.Variant("last-operation-failed", x.own(rtError, &ioError{err})))
}

func (x *Ctx) streamUnit(err error) cm.Val {
	if err == nil {
		return cm.OK()
	}
	return x.streamResult(err, cm.Val{})
}

func (d *definer) io() {
	e := d.iface("wasi:io/error")
	e.resource("error", rtError)
	e.fn("[method]error.to-debug-string", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		er, _, err := handle[*ioError](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		return cm.String(er.err.Error()), nil
	})

	p := d.iface("wasi:io/poll")
	p.resource("pollable", rtPollable)
	p.fn("[method]pollable.ready", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		pl, _, err := handle[Pollable](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		return cm.Bool(pl.Ready()), nil
	})
	p.fn("[method]pollable.block", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		pl, _, err := handle[Pollable](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		return unit(), Block(c.Context(), pl)
	})
	p.fn("poll", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		in := a[0].List()
		ps := make([]Pollable, len(in))
		for i, v := range in {
			pl, _, err := handle[Pollable](x, c, v)
			if err != nil {
				return cm.Val{}, err
			}
			ps[i] = pl
		}
		ready, err := Poll(c.Context(), ps)
		if err != nil {
			return cm.Val{}, err
		}
		out := make([]cm.Val, len(ready))
		for i, r := range ready {
			out[i] = cm.U32(r)
		}
		return cm.List(out...), nil
	})

	s := d.iface("wasi:io/streams")
	s.resource("error", rtError)
	s.resource("pollable", rtPollable)
	s.resource("input-stream", rtInputStream)
	s.resource("output-stream", rtOutputStream)
	read := func(blocking bool) func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) {
		return func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			in, _, err := handle[InputStream](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			var b []byte
			if blocking {
				b, err = in.BlockingRead(c.Context(), a[1].U64())
			} else {
				b, err = in.Read(a[1].U64())
			}
			return x.streamResult(err, cm.Bytes(b)), nil
		}
	}
	skip := func(blocking bool) func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) {
		return func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			in, _, err := handle[InputStream](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			var b []byte
			if blocking {
				b, err = in.BlockingRead(c.Context(), a[1].U64())
			} else {
				b, err = in.Read(a[1].U64())
			}
			return x.streamResult(err, cm.U64(uint64(len(b)))), nil
		}
	}
	s.fn("[method]input-stream.read", read(false))
	s.fn("[method]input-stream.blocking-read", read(true))
	s.fn("[method]input-stream.skip", skip(false))
	s.fn("[method]input-stream.blocking-skip", skip(true))
	s.fn("[method]input-stream.subscribe", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		in, _, err := handle[InputStream](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		return x.own(rtPollable, in.Subscribe()), nil
	})

	out := func(f func(x *Ctx, c *cm.Caller, o OutputStream, a []cm.Val) cm.Val) func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) {
		return func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			o, _, err := handle[OutputStream](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			return f(x, c, o, a), nil
		}
	}
	s.fn("[method]output-stream.check-write", out(func(x *Ctx, _ *cm.Caller, o OutputStream, _ []cm.Val) cm.Val {
		n, err := o.CheckWrite()
		return x.streamResult(err, cm.U64(n))
	}))
	s.fn("[method]output-stream.write", out(func(x *Ctx, _ *cm.Caller, o OutputStream, a []cm.Val) cm.Val {
		b, _ := a[1].Bytes()
		return x.streamUnit(o.Write(b))
	}))
	s.fn("[method]output-stream.blocking-write-and-flush", out(func(x *Ctx, c *cm.Caller, o OutputStream, a []cm.Val) cm.Val {
		b, _ := a[1].Bytes()
		return x.streamUnit(blockingWrite(c, o, b))
	}))
	s.fn("[method]output-stream.flush", out(func(x *Ctx, _ *cm.Caller, o OutputStream, _ []cm.Val) cm.Val {
		return x.streamUnit(o.Flush())
	}))
	s.fn("[method]output-stream.blocking-flush", out(func(x *Ctx, c *cm.Caller, o OutputStream, _ []cm.Val) cm.Val {
		return x.streamUnit(o.BlockingFlush(c.Context()))
	}))
	s.fn("[method]output-stream.subscribe", out(func(x *Ctx, _ *cm.Caller, o OutputStream, _ []cm.Val) cm.Val {
		return x.own(rtPollable, o.Subscribe())
	}))
	s.fn("[method]output-stream.write-zeroes", out(func(x *Ctx, _ *cm.Caller, o OutputStream, a []cm.Val) cm.Val {
		return x.streamUnit(o.Write(make([]byte, min(a[1].U64(), chunk))))
	}))
	s.fn("[method]output-stream.blocking-write-zeroes-and-flush", out(func(x *Ctx, c *cm.Caller, o OutputStream, a []cm.Val) cm.Val {
		return x.streamUnit(blockingWrite(c, o, make([]byte, min(a[1].U64(), chunk))))
	}))
	splice := func(blocking bool) func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) {
		return func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			o, _, err := handle[OutputStream](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			in, _, err := handle[InputStream](x, c, a[1])
			if err != nil {
				return cm.Val{}, err
			}
			n, err := Splice(c.Context(), o, in, a[2].U64(), blocking)
			return x.streamResult(err, cm.U64(n)), nil
		}
	}
	s.fn("[method]output-stream.splice", splice(false))
	s.fn("[method]output-stream.blocking-splice", splice(true))
}

// blockingWrite writes b (at most 4096 bytes by contract, but any size is
// accepted) waiting for room as it goes, then flushes.
func blockingWrite(c *cm.Caller, o OutputStream, b []byte) error {
	for len(b) > 0 {
		n, err := o.CheckWrite()
		if err != nil {
			return err
		}
		if n == 0 {
			if err := Block(c.Context(), o.Subscribe()); err != nil {
				return &StreamError{Err: err}
			}
			continue
		}
		k := min(uint64(len(b)), n)
		if err := o.Write(b[:k]); err != nil {
			return err
		}
		b = b[k:]
	}
	return o.BlockingFlush(c.Context())
}
