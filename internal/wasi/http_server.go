package wasi

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/murmur/mur/internal/wasm/cm"
)

// IncomingRequest is wasi:http/types.incoming-request: a request the host
// hands to a guest's wasi:http/incoming-handler export.
type IncomingRequest struct {
	Method    string
	Scheme    string
	Authority string
	Path      string
	Headers   *Fields
	body      *IncomingBody
	consumed  bool
}

// OutgoingResponse is wasi:http/types.outgoing-response, built by the guest.
type OutgoingResponse struct {
	Status    int
	Headers   *Fields
	body      *OutgoingBody
	bodyTaken bool
}

// Body is the response body as the guest writes it; it ends when the guest
// finishes the body (and fails if the guest drops it unfinished).
func (r *OutgoingResponse) Body() io.Reader { return r.body }

// Trailers returns the trailers the guest finished the body with; valid
// after Body has reached its end.
func (r *OutgoingResponse) Trailers() http.Header {
	r.body.mu.Lock()
	defer r.body.mu.Unlock()
	if r.body.trailers == nil {
		return nil
	}
	return r.body.trailers.header()
}

// IncomingResult is what a guest set on its response-outparam.
type IncomingResult struct {
	Response *OutgoingResponse
	Err      *HTTPError
}

// ResponseOutparam is wasi:http/types.response-outparam: set once by the
// guest, read by the host.
type ResponseOutparam struct {
	once sync.Once
	ch   chan IncomingResult
}

// ErrNoResponse means the guest returned without setting its response.
var ErrNoResponse = errors.New("guest dropped response-outparam without setting a response")

// Close runs when the guest drops the outparam; an unset outparam reports
// ErrNoResponse to the waiting host.
func (o *ResponseOutparam) Close() error {
	o.once.Do(func() {
		o.ch <- IncomingResult{Err: &HTTPError{Case: "internal-error", Err: ErrNoResponse}}
	})
	return nil
}

func (o *ResponseOutparam) set(r IncomingResult) {
	o.once.Do(func() { o.ch <- r })
}

// Incoming prepares r for a guest's incoming-handler.handle(request,
// response-out): it returns the two handles to pass and a channel that
// delivers what the guest sets.
func (x *Ctx) Incoming(r *http.Request) (request, responseOut cm.Val, result <-chan IncomingResult) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	body := r.Body
	if body == nil {
		body = http.NoBody
	}
	ir := &IncomingRequest{
		Method: r.Method, Scheme: scheme, Authority: r.Host, Path: r.URL.RequestURI(),
		Headers: fieldsFrom(r.Header),
		body:    &IncomingBody{trailer: func() http.Header { return r.Trailer }, in: newAsyncInput(body, body), cancel: func() {}},
	}
	out := &ResponseOutparam{ch: make(chan IncomingResult, 1)}
	return x.own(rtIncomingRequest, ir), x.own(rtResponseOutparam, out), out.ch
}

func (d *definer) httpServer(t iface) {
	in := func(name string, f func(x *Ctx, r *IncomingRequest) cm.Val) {
		t.fn("[method]incoming-request."+name, func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			r, _, err := handle[*IncomingRequest](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			return f(x, r), nil
		})
	}
	in("method", func(_ *Ctx, r *IncomingRequest) cm.Val { return methodVal(r.Method) })
	in("path-with-query", func(_ *Ctx, r *IncomingRequest) cm.Val { return cm.Some(cm.String(r.Path)) })
	in("scheme", func(_ *Ctx, r *IncomingRequest) cm.Val {
		if strings.EqualFold(r.Scheme, "https") {
			return cm.Some(cm.Variant("HTTPS"))
		}
		return cm.Some(cm.Variant("HTTP"))
	})
	in("authority", func(_ *Ctx, r *IncomingRequest) cm.Val {
		if r.Authority == "" {
			return cm.None()
		}
		return cm.Some(cm.String(r.Authority))
	})
	in("headers", func(x *Ctx, r *IncomingRequest) cm.Val { return x.own(rtFields, r.Headers) })
	in("consume", func(x *Ctx, r *IncomingRequest) cm.Val {
		if r.consumed {
			return cm.Err()
		}
		r.consumed = true
		return cm.OK(x.own(rtIncomingBody, r.body))
	})

	t.fn("[constructor]outgoing-response", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		h, err := take[*Fields](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		h.mu.Lock()
		h.immutable = true
		h.mu.Unlock()
		return x.own(rtOutgoingResponse, &OutgoingResponse{Status: 200, Headers: h, body: newOutgoingBody()}), nil
	})
	out := func(name string, f func(x *Ctx, r *OutgoingResponse, a []cm.Val) cm.Val) {
		t.fn("[method]outgoing-response."+name, func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			r, _, err := handle[*OutgoingResponse](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			return f(x, r, a), nil
		})
	}
	out("status-code", func(_ *Ctx, r *OutgoingResponse, _ []cm.Val) cm.Val { return cm.U16(uint16(r.Status)) })
	out("set-status-code", func(_ *Ctx, r *OutgoingResponse, a []cm.Val) cm.Val {
		s := a[1].U16()
		if s < 100 || s > 999 {
			return cm.Err()
		}
		r.Status = int(s)
		return cm.OK()
	})
	out("headers", func(x *Ctx, r *OutgoingResponse, _ []cm.Val) cm.Val { return x.own(rtFields, r.Headers) })
	out("body", func(x *Ctx, r *OutgoingResponse, _ []cm.Val) cm.Val {
		if r.bodyTaken {
			return cm.Err()
		}
		r.bodyTaken = true
		// The host reads the body as soon as the response is set.
		r.body.mu.Lock()
		r.body.sent = true
		r.body.mu.Unlock()
		return cm.OK(x.own(rtOutgoingBody, r.body))
	})
	t.fn("[static]response-outparam.set", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		o, err := take[*ResponseOutparam](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		p, _ := a[1].Payload()
		if !a[1].IsOK() {
			o.set(IncomingResult{Err: httpErrOf(p)})
			return unit(), nil
		}
		r, err := take[*OutgoingResponse](x, c, p)
		if err != nil {
			return cm.Val{}, err
		}
		if !r.bodyTaken {
			// A response whose body was never asked for has none.
			r.body.Finish(nil)
		}
		o.set(IncomingResult{Response: r})
		return unit(), nil
	})
}

// httpErrOf reads a guest's error-code variant.
func httpErrOf(v cm.Val) *HTTPError {
	e := &HTTPError{Case: v.Str()}
	if p, ok := v.Payload(); ok && p.Kind() == cm.KindOption && p.IsSome() {
		if s, _ := p.Payload(); s.Kind() == cm.KindString {
			e.Msg = s.Str()
		}
	}
	return e
}
