package wasi

import (
	"errors"
	"fmt"

	"github.com/murmur/mur/internal/wasm/cm"
)

// Version is the WASI 0.2 patch every interface is defined at; the linker
// serves any 0.2.x import from it.
const Version = "0.2.6"

// The host resource types. The numbers are private to the host; they only
// have to be distinct from other host resources on the same linker.
const (
	rtError cm.ResourceType = 0x57410000 + iota
	rtPollable
	rtInputStream
	rtOutputStream
	rtTerminalInput
	rtTerminalOutput
	rtDescriptor
	rtDirEntryStream
	rtNetwork
	rtResolveStream
	rtTCPSocket
	rtFields
	rtOutgoingRequest
	rtRequestOptions
	rtFutureResponse
	rtIncomingResponse
	rtIncomingBody
	rtFutureTrailers
	rtOutgoingBody
	rtIncomingRequest
	rtOutgoingResponse
	rtResponseOutparam
	rtUDPSocket
	rtDatagramIn
	rtDatagramOut
)

// StoreCtx is what a store's data implements so host functions find the
// store's WASI context; a *Ctx is itself a valid store data.
type StoreCtx interface {
	WASI() *Ctx
}

// WASI returns c, so a *Ctx can be a store's data directly.
func (c *Ctx) WASI() *Ctx { return c }

// ErrNoCtx is a store whose data carries no WASI context.
var ErrNoCtx = errors.New("store has no wasi context")

func ctxOf(c *cm.Caller) (*Ctx, error) {
	if s, ok := c.Data().(StoreCtx); ok && s.WASI() != nil {
		return s.WASI(), nil
	}
	return nil, fmt.Errorf("%w (store data is %T)", ErrNoCtx, c.Data())
}

// iface collects one interface's definitions.
type iface struct {
	l    *cm.Linker
	path []string
}

func (d *definer) iface(name string) iface {
	return iface{l: d.l, path: []string{name + "@" + Version}}
}

// definer registers definitions on one linker.
type definer struct{ l *cm.Linker }

// hostFn adapts a function of the store's Ctx.
func (i iface) fn(name string, f func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error)) {
	i.l.Func(i.path, name, func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		x, err := ctxOf(c)
		if err != nil {
			return cm.Val{}, err
		}
		return f(x, c, a)
	})
}

// resource defines a resource type whose drop closes the host object.
func (i iface) resource(name string, ty cm.ResourceType) {
	i.l.Resource(i.path, name, ty, func(c *cm.Caller, rep uint32) error {
		x, err := ctxOf(c)
		if err != nil {
			return err
		}
		if v, ok := x.res.remove(rep); ok {
			if cl, ok := v.(interface{ Close() error }); ok {
				// A close failure on drop has nobody to report to.
				_ = cl.Close()
			}
		}
		return nil
	})
}

// Define registers every WASI 0.2 interface this package implements on l.
// One linker serves any number of stores; each store's data must be a
// *Ctx or implement StoreCtx. A component importing an interface (or a
// function of one) that is not defined fails to instantiate with
// cm.ErrMissingImport naming it.
func Define(l *cm.Linker) error {
	d := &definer{l: l}
	d.io()
	d.cli()
	d.clocks()
	d.random()
	d.filesystem()
	d.http()
	d.sockets()
	return nil
}

// own stores v in x's table and returns an own handle of type ty.
func (x *Ctx) own(ty cm.ResourceType, v any) cm.Val {
	return cm.Own(ty, x.res.add(v))
}

// handle resolves a resource argument to its host object.
func handle[T any](x *Ctx, c *cm.Caller, v cm.Val) (T, uint32, error) {
	h, err := c.HostHandle(v)
	if err != nil {
		var zero T
		return zero, 0, err
	}
	t, err := lookup[T](x, h.Rep)
	return t, h.Rep, err
}

// take resolves an own argument and removes it from the table: the guest
// has given it up.
func take[T any](x *Ctx, c *cm.Caller, v cm.Val) (T, error) {
	t, rep, err := handle[T](x, c, v)
	if err == nil {
		x.res.remove(rep)
	}
	return t, err
}

func unit() cm.Val { return cm.Val{} }
