package wasi

import (
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"
	"time"

	"github.com/murmur/mur/internal/wasm/cm"
)

func (d *definer) cli() {
	env := d.iface("wasi:cli/environment")
	env.fn("get-environment", func(x *Ctx, _ *cm.Caller, _ []cm.Val) (cm.Val, error) {
		out := make([]cm.Val, len(x.pol.Env))
		for i, kv := range x.pol.Env {
			out[i] = cm.Tuple(cm.String(kv[0]), cm.String(kv[1]))
		}
		return cm.List(out...), nil
	})
	env.fn("get-arguments", func(x *Ctx, _ *cm.Caller, _ []cm.Val) (cm.Val, error) {
		out := make([]cm.Val, len(x.pol.Args))
		for i, a := range x.pol.Args {
			out[i] = cm.String(a)
		}
		return cm.List(out...), nil
	})
	env.fn("initial-cwd", func(x *Ctx, _ *cm.Caller, _ []cm.Val) (cm.Val, error) {
		if x.pol.Cwd == "" {
			return cm.None(), nil
		}
		return cm.Some(cm.String(x.pol.Cwd)), nil
	})

	exit := d.iface("wasi:cli/exit")
	exit.fn("exit", func(x *Ctx, _ *cm.Caller, a []cm.Val) (cm.Val, error) {
		code := 0
		if !a[0].IsOK() {
			code = 1
		}
		x.exit = &ExitError{Code: code}
		// The trap unwinds the guest; the caller sees the ExitError.
		return cm.Val{}, x.exit
	})
	exit.fn("exit-with-code", func(x *Ctx, _ *cm.Caller, a []cm.Val) (cm.Val, error) {
		x.exit = &ExitError{Code: int(a[0].U8())}
		return cm.Val{}, x.exit
	})

	in := d.iface("wasi:cli/stdin")
	in.resource("input-stream", rtInputStream)
	in.fn("get-stdin", func(x *Ctx, _ *cm.Caller, _ []cm.Val) (cm.Val, error) {
		return x.own(rtInputStream, sharedInput{x.stdin}), nil
	})
	out := d.iface("wasi:cli/stdout")
	out.resource("output-stream", rtOutputStream)
	out.fn("get-stdout", func(x *Ctx, _ *cm.Caller, _ []cm.Val) (cm.Val, error) {
		return x.own(rtOutputStream, x.stdout), nil
	})
	errs := d.iface("wasi:cli/stderr")
	errs.resource("output-stream", rtOutputStream)
	errs.fn("get-stderr", func(x *Ctx, _ *cm.Caller, _ []cm.Val) (cm.Val, error) {
		return x.own(rtOutputStream, x.stderr), nil
	})

	// The guest never runs on a terminal: its streams go to the caller.
	d.iface("wasi:cli/terminal-input").resource("terminal-input", rtTerminalInput)
	d.iface("wasi:cli/terminal-output").resource("terminal-output", rtTerminalOutput)
	for _, t := range []struct{ iface, fn, res string }{
		{"wasi:cli/terminal-stdin", "get-terminal-stdin", "terminal-input"},
		{"wasi:cli/terminal-stdout", "get-terminal-stdout", "terminal-output"},
		{"wasi:cli/terminal-stderr", "get-terminal-stderr", "terminal-output"},
	} {
		i := d.iface(t.iface)
		ty := rtTerminalOutput
		if t.res == "terminal-input" {
			ty = rtTerminalInput
		}
		i.resource(t.res, ty)
		i.fn(t.fn, func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) { return cm.None(), nil })
	}
}

// monoBase anchors the monotonic clock so instants are small and never
// reveal host uptime.
var monoBase = time.Now()

func monoNow() uint64 { return uint64(time.Since(monoBase)) }

func datetime(t time.Time) cm.Val {
	return cm.Record(
		cm.Field{Name: "seconds", Val: cm.U64(uint64(t.Unix()))},
		cm.Field{Name: "nanoseconds", Val: cm.U32(uint32(t.Nanosecond()))},
	)
}

func (d *definer) clocks() {
	m := d.iface("wasi:clocks/monotonic-clock")
	m.resource("pollable", rtPollable)
	m.fn("now", func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) { return cm.U64(monoNow()), nil })
	m.fn("resolution", func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) { return cm.U64(1), nil })
	m.fn("subscribe-instant", func(x *Ctx, _ *cm.Caller, a []cm.Val) (cm.Val, error) {
		d := time.Duration(int64(a[0].U64() - min(a[0].U64(), monoNow())))
		return x.own(rtPollable, newTimer(d)), nil
	})
	m.fn("subscribe-duration", func(x *Ctx, _ *cm.Caller, a []cm.Val) (cm.Val, error) {
		d := a[0].U64()
		if d > 1<<62 {
			d = 1 << 62
		}
		return x.own(rtPollable, newTimer(time.Duration(d))), nil
	})

	w := d.iface("wasi:clocks/wall-clock")
	w.fn("now", func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) { return datetime(time.Now()), nil })
	w.fn("resolution", func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) {
		return cm.Record(cm.Field{Name: "seconds", Val: cm.U64(0)}, cm.Field{Name: "nanoseconds", Val: cm.U32(1)}), nil
	})
}

// maxRandom bounds one random-bytes request so a guest cannot make the
// host allocate without limit.
const maxRandom = 1 << 20

func (d *definer) random() {
	r := d.iface("wasi:random/random")
	r.fn("get-random-bytes", func(_ *Ctx, _ *cm.Caller, a []cm.Val) (cm.Val, error) {
		b := make([]byte, min(a[0].U64(), maxRandom))
		rand.Read(b)
		return cm.Bytes(b), nil
	})
	r.fn("get-random-u64", func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) {
		var b [8]byte
		rand.Read(b[:])
		return cm.U64(binary.LittleEndian.Uint64(b[:])), nil
	})
	in := d.iface("wasi:random/insecure")
	in.fn("get-insecure-random-bytes", func(_ *Ctx, _ *cm.Caller, a []cm.Val) (cm.Val, error) {
		b := make([]byte, min(a[0].U64(), maxRandom))
		for i := range b {
			b[i] = byte(mrand.Uint32())
		}
		return cm.Bytes(b), nil
	})
	in.fn("get-insecure-random-u64", func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) {
		return cm.U64(mrand.Uint64()), nil
	})
	d.iface("wasi:random/insecure-seed").fn("insecure-seed", func(*Ctx, *cm.Caller, []cm.Val) (cm.Val, error) {
		return cm.Tuple(cm.U64(mrand.Uint64()), cm.U64(mrand.Uint64())), nil
	})
}

// sharedInput is a handle to the store's one stdin: dropping a handle does
// not end the stream for the next get-stdin.
type sharedInput struct{ InputStream }

func (sharedInput) Close() error { return nil }
