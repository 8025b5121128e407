package wasi

import (
	"strings"
	"time"

	"github.com/murmur/mur/internal/wasm/cm"
)

// httpErrVal renders an HTTPError as the wasi:http error-code variant.
func httpErrVal(e *HTTPError) cm.Val {
	switch e.Case {
	case "DNS-error":
		return cm.Variant(e.Case, cm.Record(
			cm.Field{Name: "rcode", Val: cm.None()},
			cm.Field{Name: "info-code", Val: cm.None()},
		))
	case "TLS-alert-received":
		return cm.Variant(e.Case, cm.Record(
			cm.Field{Name: "alert-id", Val: cm.None()},
			cm.Field{Name: "alert-message", Val: cm.Some(cm.String(e.Error()))},
		))
	case "internal-error":
		return cm.Variant(e.Case, cm.Some(cm.String(e.Error())))
	}
	return cm.Variant(e.Case)
}

func headerErr(err error) cm.Val {
	if err == nil {
		return cm.OK()
	}
	if he, ok := err.(HeaderError); ok {
		return cm.Err(cm.Variant(string(he)))
	}
	return cm.Err(cm.Variant("invalid-syntax"))
}

func fieldsVal(f *Fields) cm.Val {
	es := f.Entries()
	out := make([]cm.Val, len(es))
	for i, e := range es {
		out[i] = cm.Tuple(cm.String(string(e[0])), cm.Bytes(e[1]))
	}
	return cm.List(out...)
}

var methods = []string{"get", "head", "post", "put", "delete", "connect", "options", "trace", "patch"}

func methodVal(m string) cm.Val {
	for _, k := range methods {
		if strings.EqualFold(m, k) {
			return cm.Variant(k)
		}
	}
	return cm.Variant("other", cm.String(m))
}

func methodOf(v cm.Val) string {
	if v.Str() == "other" {
		p, _ := v.Payload()
		return p.Str()
	}
	return strings.ToUpper(v.Str())
}

// RequestOptions as a resource is mutable until handed to handle.
type requestOptions struct{ o RequestOptions }

func optDuration(d time.Duration) cm.Val {
	if d == 0 {
		return cm.None()
	}
	return cm.Some(cm.U64(uint64(d)))
}

func durationOf(v cm.Val) time.Duration {
	if !v.IsSome() {
		return 0
	}
	p, _ := v.Payload()
	n := p.U64()
	if n > 1<<62 {
		n = 1 << 62
	}
	return time.Duration(n)
}

func (d *definer) http() {
	t := d.iface("wasi:http/types")
	for name, ty := range map[string]cm.ResourceType{
		"input-stream": rtInputStream, "output-stream": rtOutputStream, "io-error": rtError,
		"pollable": rtPollable, "fields": rtFields, "outgoing-request": rtOutgoingRequest,
		"request-options": rtRequestOptions, "future-incoming-response": rtFutureResponse,
		"incoming-response": rtIncomingResponse, "incoming-body": rtIncomingBody,
		"future-trailers": rtFutureTrailers, "headers": rtFields, "trailers": rtFields,
		"incoming-request": rtIncomingRequest, "outgoing-response": rtOutgoingResponse,
		"response-outparam": rtResponseOutparam,
	} {
		t.resource(name, ty)
	}
	// An outgoing body dropped unfinished aborts its request.
	t.l.Resource(t.path, "outgoing-body", rtOutgoingBody, func(c *cm.Caller, rep uint32) error {
		x, err := ctxOf(c)
		if err != nil {
			return err
		}
		if v, ok := x.res.remove(rep); ok {
			v.(*OutgoingBody).Abort()
		}
		return nil
	})

	t.fn("[constructor]fields", func(x *Ctx, _ *cm.Caller, _ []cm.Val) (cm.Val, error) {
		return x.own(rtFields, &Fields{}), nil
	})
	t.fn("[static]fields.from-list", func(x *Ctx, _ *cm.Caller, a []cm.Val) (cm.Val, error) {
		var es [][2][]byte
		for _, e := range a[0].List() {
			kv := e.List()
			v, _ := kv[1].Bytes()
			es = append(es, [2][]byte{[]byte(kv[0].Str()), v})
		}
		f, err := NewFields(es)
		if err != nil {
			return headerErr(err), nil
		}
		return cm.OK(x.own(rtFields, f)), nil
	})
	fields := func(name string, f func(x *Ctx, fl *Fields, a []cm.Val) cm.Val) {
		t.fn("[method]fields."+name, func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			fl, _, err := handle[*Fields](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			return f(x, fl, a), nil
		})
	}
	fields("get", func(_ *Ctx, f *Fields, a []cm.Val) cm.Val {
		vs := f.Get(a[1].Str())
		out := make([]cm.Val, len(vs))
		for i, v := range vs {
			out[i] = cm.Bytes(v)
		}
		return cm.List(out...)
	})
	fields("has", func(_ *Ctx, f *Fields, a []cm.Val) cm.Val { return cm.Bool(f.Has(a[1].Str())) })
	fields("set", func(_ *Ctx, f *Fields, a []cm.Val) cm.Val {
		var vs [][]byte
		for _, v := range a[2].List() {
			b, _ := v.Bytes()
			vs = append(vs, b)
		}
		return headerErr(f.Set(a[1].Str(), vs))
	})
	fields("delete", func(_ *Ctx, f *Fields, a []cm.Val) cm.Val { return headerErr(f.Delete(a[1].Str())) })
	fields("append", func(_ *Ctx, f *Fields, a []cm.Val) cm.Val {
		b, _ := a[2].Bytes()
		return headerErr(f.Append(a[1].Str(), b))
	})
	fields("entries", func(_ *Ctx, f *Fields, _ []cm.Val) cm.Val { return fieldsVal(f) })
	fields("clone", func(x *Ctx, f *Fields, _ []cm.Val) cm.Val { return x.own(rtFields, f.Clone()) })

	t.fn("[constructor]outgoing-request", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		h, err := take[*Fields](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		return x.own(rtOutgoingRequest, NewOutgoingRequest(h)), nil
	})
	req := func(name string, f func(x *Ctx, r *OutgoingRequest, a []cm.Val) cm.Val) {
		t.fn("[method]outgoing-request."+name, func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			r, _, err := handle[*OutgoingRequest](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			return f(x, r, a), nil
		})
	}
	req("body", func(x *Ctx, r *OutgoingRequest, _ []cm.Val) cm.Val {
		b, ok := r.Body()
		if !ok {
			return cm.Err()
		}
		return cm.OK(x.own(rtOutgoingBody, b))
	})
	req("method", func(_ *Ctx, r *OutgoingRequest, _ []cm.Val) cm.Val { return methodVal(r.Method) })
	req("set-method", func(_ *Ctx, r *OutgoingRequest, a []cm.Val) cm.Val {
		m := methodOf(a[1])
		if !validName(m) {
			return cm.Err()
		}
		r.Method = m
		return cm.OK()
	})
	optStr := func(s string) cm.Val {
		if s == "" {
			return cm.None()
		}
		return cm.Some(cm.String(s))
	}
	strOf := func(v cm.Val) string {
		if !v.IsSome() {
			return ""
		}
		p, _ := v.Payload()
		return p.Str()
	}
	req("path-with-query", func(_ *Ctx, r *OutgoingRequest, _ []cm.Val) cm.Val { return optStr(r.Path) })
	req("set-path-with-query", func(_ *Ctx, r *OutgoingRequest, a []cm.Val) cm.Val {
		p := strOf(a[1])
		if p != "" && !strings.HasPrefix(p, "/") && p != "*" {
			return cm.Err()
		}
		r.Path = p
		return cm.OK()
	})
	req("scheme", func(_ *Ctx, r *OutgoingRequest, _ []cm.Val) cm.Val {
		switch strings.ToLower(r.Scheme) {
		case "":
			return cm.None()
		case "http":
			return cm.Some(cm.Variant("HTTP"))
		case "https":
			return cm.Some(cm.Variant("HTTPS"))
		}
		return cm.Some(cm.Variant("other", cm.String(r.Scheme)))
	})
	req("set-scheme", func(_ *Ctx, r *OutgoingRequest, a []cm.Val) cm.Val {
		if !a[1].IsSome() {
			r.Scheme = ""
			return cm.OK()
		}
		p, _ := a[1].Payload()
		switch p.Str() {
		case "HTTP":
			r.Scheme = "http"
		case "HTTPS":
			r.Scheme = "https"
		default:
			o, _ := p.Payload()
			r.Scheme = o.Str()
		}
		return cm.OK()
	})
	req("authority", func(_ *Ctx, r *OutgoingRequest, _ []cm.Val) cm.Val { return optStr(r.Authority) })
	req("set-authority", func(_ *Ctx, r *OutgoingRequest, a []cm.Val) cm.Val {
		s := strOf(a[1])
		if strings.ContainsAny(s, "/?#@ ") {
			return cm.Err()
		}
		r.Authority = s
		return cm.OK()
	})
	req("headers", func(x *Ctx, r *OutgoingRequest, _ []cm.Val) cm.Val { return x.own(rtFields, r.Headers) })

	t.fn("[constructor]request-options", func(x *Ctx, _ *cm.Caller, _ []cm.Val) (cm.Val, error) {
		return x.own(rtRequestOptions, &requestOptions{}), nil
	})
	for _, o := range []struct {
		name string
		p    func(*RequestOptions) *time.Duration
	}{
		{"connect-timeout", func(o *RequestOptions) *time.Duration { return &o.ConnectTimeout }},
		{"first-byte-timeout", func(o *RequestOptions) *time.Duration { return &o.FirstByteTimeout }},
		{"between-bytes-timeout", func(o *RequestOptions) *time.Duration { return &o.BetweenBytesTimeout }},
	} {
		t.fn("[method]request-options."+o.name, func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			ro, _, err := handle[*requestOptions](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			return optDuration(*o.p(&ro.o)), nil
		})
		t.fn("[method]request-options.set-"+o.name, func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			ro, _, err := handle[*requestOptions](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			*o.p(&ro.o) = durationOf(a[1])
			return cm.OK(), nil
		})
	}

	t.fn("[method]outgoing-body.write", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		b, _, err := handle[*OutgoingBody](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		s, ok := b.Stream()
		if !ok {
			return cm.Err(), nil
		}
		return cm.OK(x.own(rtOutputStream, s)), nil
	})
	t.fn("[static]outgoing-body.finish", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		b, err := take[*OutgoingBody](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		var tr *Fields
		if a[1].IsSome() {
			p, _ := a[1].Payload()
			if tr, err = take[*Fields](x, c, p); err != nil {
				return cm.Val{}, err
			}
		}
		b.Finish(tr)
		return cm.OK(), nil
	})

	t.fn("[method]future-incoming-response.subscribe", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		f, _, err := handle[*FutureResponse](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		return x.own(rtPollable, Pollable(f)), nil
	})
	t.fn("[method]future-incoming-response.get", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		f, _, err := handle[*FutureResponse](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		resp, herr, ok, taken := f.Get()
		switch {
		case !ok:
			return cm.None(), nil
		case taken:
			return cm.Some(cm.Err()), nil
		case herr != nil:
			return cm.Some(cm.OK(cm.Err(httpErrVal(herr)))), nil
		}
		return cm.Some(cm.OK(cm.OK(x.own(rtIncomingResponse, resp)))), nil
	})
	resp := func(name string, f func(x *Ctx, r *IncomingResponse) cm.Val) {
		t.fn("[method]incoming-response."+name, func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			r, _, err := handle[*IncomingResponse](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			return f(x, r), nil
		})
	}
	resp("status", func(_ *Ctx, r *IncomingResponse) cm.Val { return cm.U16(uint16(r.Status)) })
	resp("headers", func(x *Ctx, r *IncomingResponse) cm.Val { return x.own(rtFields, r.Headers) })
	resp("consume", func(x *Ctx, r *IncomingResponse) cm.Val {
		b, ok := r.Consume()
		if !ok {
			return cm.Err()
		}
		return cm.OK(x.own(rtIncomingBody, b))
	})
	t.fn("[method]incoming-body.stream", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		b, _, err := handle[*IncomingBody](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		s, ok := b.Stream()
		if !ok {
			return cm.Err(), nil
		}
		// The stream is a child of the body: dropping it must not close
		// the body, whose trailers may still be wanted.
		return cm.OK(x.own(rtInputStream, sharedInput{s})), nil
	})
	t.fn("[static]incoming-body.finish", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		b, err := take[*IncomingBody](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		return x.own(rtFutureTrailers, b.Trailers()), nil
	})
	t.fn("[method]future-trailers.subscribe", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		f, _, err := handle[*FutureTrailers](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		return x.own(rtPollable, Pollable(f)), nil
	})
	t.fn("[method]future-trailers.get", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		f, _, err := handle[*FutureTrailers](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		tr, herr, ok, taken := f.Get()
		switch {
		case !ok:
			return cm.None(), nil
		case taken:
			return cm.Some(cm.Err()), nil
		case herr != nil:
			return cm.Some(cm.OK(cm.Err(httpErrVal(herr)))), nil
		case tr == nil:
			return cm.Some(cm.OK(cm.OK(cm.None()))), nil
		}
		return cm.Some(cm.OK(cm.OK(cm.Some(x.own(rtFields, tr))))), nil
	})
	t.fn("http-error-code", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		e, _, err := handle[*ioError](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		var he *HTTPError
		if asHTTP(e.err, &he) {
			return cm.Some(httpErrVal(he)), nil
		}
		return cm.None(), nil
	})

	d.httpServer(t)

	h := d.iface("wasi:http/outgoing-handler")
	h.resource("outgoing-request", rtOutgoingRequest)
	h.resource("request-options", rtRequestOptions)
	h.resource("future-incoming-response", rtFutureResponse)
	h.fn("handle", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		r, err := take[*OutgoingRequest](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		var opts RequestOptions
		if a[1].IsSome() {
			p, _ := a[1].Payload()
			ro, err := take[*requestOptions](x, c, p)
			if err != nil {
				return cm.Val{}, err
			}
			opts = ro.o
		}
		f, herr := x.Handle(r, opts)
		if herr != nil {
			return cm.Err(httpErrVal(herr)), nil
		}
		return cm.OK(x.own(rtFutureResponse, f)), nil
	})
}
