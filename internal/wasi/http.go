package wasi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HTTPError is a wasi:http/types.error-code: Case is the variant case name
// (e.g. "HTTP-request-denied"); Msg, when set, is the payload of
// internal-error and the text behind the error.
type HTTPError struct {
	Case string
	Msg  string
	Err  error
}

func (e *HTTPError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Case, e.Err)
	}
	if e.Msg != "" {
		return e.Case + ": " + e.Msg
	}
	return e.Case
}

func (e *HTTPError) Unwrap() error { return e.Err }

// httpErr classifies a transport error as the wasi:http error-code a guest
// can act on.
func httpErr(err error) *HTTPError {
	var he *HTTPError
	if errors.As(err, &he) {
		return he
	}
	var (
		dnsErr   *net.DNSError
		certErr  *tls.CertificateVerificationError
		unkAuth  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		alertErr tls.AlertError
		recErr   tls.RecordHeaderError
		opErr    *net.OpError
	)
	switch {
	case errors.Is(err, ErrDenied):
		return &HTTPError{Case: "HTTP-request-denied", Err: err}
	case errors.As(err, &dnsErr):
		if dnsErr.IsTimeout {
			return &HTTPError{Case: "DNS-timeout", Err: err}
		}
		return &HTTPError{Case: "DNS-error", Err: err}
	case errors.As(err, &certErr), errors.As(err, &unkAuth), errors.As(err, &hostErr):
		return &HTTPError{Case: "TLS-certificate-error", Err: err}
	case errors.As(err, &alertErr):
		return &HTTPError{Case: "TLS-alert-received", Err: err}
	case errors.As(err, &recErr):
		return &HTTPError{Case: "TLS-protocol-error", Err: err}
	case errors.Is(err, errFirstByteTimeout):
		return &HTTPError{Case: "HTTP-response-timeout", Err: err}
	case errors.Is(err, errConnectTimeout):
		return &HTTPError{Case: "connection-timeout", Err: err}
	case errors.Is(err, errBetweenBytesTimeout):
		return &HTTPError{Case: "connection-read-timeout", Err: err}
	}
	switch SockCodeOf(err) {
	case SockConnectionRefused:
		return &HTTPError{Case: "connection-refused", Err: err}
	case SockConnectionReset:
		return &HTTPError{Case: "connection-terminated", Err: err}
	case SockRemoteUnreachable:
		return &HTTPError{Case: "destination-unavailable", Err: err}
	case SockAccessDenied:
		return &HTTPError{Case: "HTTP-request-denied", Err: err}
	case SockNameUnresolvable:
		return &HTTPError{Case: "destination-not-found", Err: err}
	case SockTimeout:
		return &HTTPError{Case: "connection-timeout", Err: err}
	}
	if errors.As(err, &opErr) {
		return &HTTPError{Case: "destination-unavailable", Err: err}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &HTTPError{Case: "HTTP-response-incomplete", Err: err}
	}
	return &HTTPError{Case: "internal-error", Msg: err.Error(), Err: err}
}

var (
	errFirstByteTimeout    = errors.New("no response headers within first-byte-timeout")
	errConnectTimeout      = errors.New("no connection within connect-timeout")
	errBetweenBytesTimeout = errors.New("no body bytes within between-bytes-timeout")
	errBodyAborted         = errors.New("outgoing body dropped before finish")
)

// forbiddenHeaders are the hop-by-hop and framing headers a guest may not
// set: the transport owns them.
var forbiddenHeaders = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true,
	"transfer-encoding": true, "upgrade": true, "host": true, "http2-settings": true,
	"te": true,
}

// HeaderError is a wasi:http header-error case name: "invalid-syntax",
// "forbidden" or "immutable".
type HeaderError string

func (e HeaderError) Error() string { return "header " + string(e) }

// Fields is wasi:http/types.fields: ordered, case-insensitive names, raw
// byte values, and immutable once attached to a request or response.
type Fields struct {
	mu        sync.Mutex
	entries   []fieldEntry
	immutable bool
}

type fieldEntry struct {
	name  string
	value []byte
}

// NewFields builds fields from entries, checking every name and value.
func NewFields(entries [][2][]byte) (*Fields, error) {
	f := &Fields{}
	for _, e := range entries {
		if err := f.Append(string(e[0]), e[1]); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func validName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

func validValue(v []byte) bool {
	for _, c := range v {
		if c == '\r' || c == '\n' || c == 0 {
			return false
		}
	}
	return true
}

func (f *Fields) check(name string, values ...[]byte) error {
	if f.immutable {
		return HeaderError("immutable")
	}
	if !validName(name) {
		return HeaderError("invalid-syntax")
	}
	for _, v := range values {
		if !validValue(v) {
			return HeaderError("invalid-syntax")
		}
	}
	if forbiddenHeaders[strings.ToLower(name)] {
		return HeaderError("forbidden")
	}
	return nil
}

// Get returns every value of name.
func (f *Fields) Get(name string) [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]byte
	for _, e := range f.entries {
		if strings.EqualFold(e.name, name) {
			out = append(out, e.value)
		}
	}
	return out
}

// Has reports whether name has a value.
func (f *Fields) Has(name string) bool { return len(f.Get(name)) > 0 }

// Set replaces every value of name.
func (f *Fields) Set(name string, values [][]byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(name, values...); err != nil {
		return err
	}
	f.deleteLocked(name)
	for _, v := range values {
		f.entries = append(f.entries, fieldEntry{name, append([]byte(nil), v...)})
	}
	return nil
}

// Delete removes every value of name.
func (f *Fields) Delete(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.immutable {
		return HeaderError("immutable")
	}
	f.deleteLocked(name)
	return nil
}

func (f *Fields) deleteLocked(name string) {
	kept := f.entries[:0]
	for _, e := range f.entries {
		if !strings.EqualFold(e.name, name) {
			kept = append(kept, e)
		}
	}
	f.entries = kept
}

// Append adds a value to name.
func (f *Fields) Append(name string, value []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(name, value); err != nil {
		return err
	}
	f.entries = append(f.entries, fieldEntry{name, append([]byte(nil), value...)})
	return nil
}

// Entries returns every (name, value) in order.
func (f *Fields) Entries() [][2][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([][2][]byte, len(f.entries))
	for i, e := range f.entries {
		out[i] = [2][]byte{[]byte(e.name), e.value}
	}
	return out
}

// Clone returns a mutable copy.
func (f *Fields) Clone() *Fields {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &Fields{entries: append([]fieldEntry(nil), f.entries...)}
}

func (f *Fields) header() http.Header {
	h := http.Header{}
	for _, e := range f.Entries() {
		h.Add(string(e[0]), string(e[1]))
	}
	return h
}

func fieldsFrom(h http.Header) *Fields {
	f := &Fields{immutable: true}
	for k, vs := range h {
		for _, v := range vs {
			f.entries = append(f.entries, fieldEntry{strings.ToLower(k), []byte(v)})
		}
	}
	return f
}

// OutgoingRequest is wasi:http/types.outgoing-request.
type OutgoingRequest struct {
	Method    string
	Scheme    string // "" means https, as wasmtime defaults
	Authority string
	Path      string // path-with-query; "" means "/"
	Headers   *Fields
	body      *OutgoingBody
	bodyTaken bool
}

// NewOutgoingRequest makes a request that owns h (made immutable).
func NewOutgoingRequest(h *Fields) *OutgoingRequest {
	h.mu.Lock()
	h.immutable = true
	h.mu.Unlock()
	return &OutgoingRequest{Method: "GET", Headers: h, body: newOutgoingBody()}
}

// Body hands out the request body once.
func (r *OutgoingRequest) Body() (*OutgoingBody, bool) {
	if r.bodyTaken {
		return nil, false
	}
	r.bodyTaken = true
	return r.body, true
}

// OutgoingBody is wasi:http/types.outgoing-body: what the guest writes is
// queued and read by the transport as the request streams out.
type OutgoingBody struct {
	mu          sync.Mutex
	q           [][]byte
	queued      int
	done        bool
	trailers    *Fields
	sig         signal
	streamTaken bool
	sent        bool
	trailerMap  http.Header
	aborted     bool
}

// outgoingLimit bounds how much of a body may wait for the transport once
// the request is on its way; unsentLimit bounds what a guest may queue
// before sending it (write first, send after), since this memory is the
// host's and not counted against the store's limit.
const (
	outgoingLimit = 1 << 20
	unsentLimit   = 16 << 20
)

func newOutgoingBody() *OutgoingBody { return &OutgoingBody{} }

// Stream hands out the body's output stream once.
func (b *OutgoingBody) Stream() (OutputStream, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.streamTaken {
		return nil, false
	}
	b.streamTaken = true
	return &bodyWriter{b}, true
}

// Finish ends the body, with trailers to send after it.
func (b *OutgoingBody) Finish(trailers *Fields) {
	b.mu.Lock()
	b.done, b.trailers = true, trailers
	// Once the request is on its way the transport holds trailerMap and
	// reads it after the body's end, which this Finish precedes.
	if b.trailerMap != nil && trailers != nil {
		for k, vs := range trailers.header() {
			b.trailerMap[k] = vs
		}
	}
	b.mu.Unlock()
	b.sig.notify()
}

// Abort ends the body with an error: the guest dropped it unfinished, so
// the request must not complete as if it were whole.
func (b *OutgoingBody) Abort() {
	b.mu.Lock()
	if !b.done {
		b.done, b.aborted = true, true
	}
	b.mu.Unlock()
	b.sig.notify()
}

// Read is the transport's side.
func (b *OutgoingBody) Read(p []byte) (int, error) {
	for {
		b.mu.Lock()
		if len(b.q) > 0 {
			n := copy(p, b.q[0])
			b.q[0] = b.q[0][n:]
			if len(b.q[0]) == 0 {
				b.q = b.q[1:]
			}
			b.queued -= n
			b.mu.Unlock()
			b.sig.notify()
			return n, nil
		}
		if b.done {
			aborted := b.aborted
			b.mu.Unlock()
			if aborted {
				return 0, errBodyAborted
			}
			return 0, io.EOF
		}
		ch := b.sig.wait()
		b.mu.Unlock()
		<-ch
	}
}

type bodyWriter struct{ b *OutgoingBody }

func (w *bodyWriter) CheckWrite() (uint64, error) {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	if w.b.done {
		return 0, ErrStreamClosed
	}
	return uint64(w.b.room()), nil
}

// room is how many more bytes may be queued now.
func (b *OutgoingBody) room() int {
	limit := outgoingLimit
	if !b.sent {
		limit = unsentLimit
	}
	return max(limit-b.queued, 0)
}

func (w *bodyWriter) Write(p []byte) error {
	w.b.mu.Lock()
	if w.b.done {
		w.b.mu.Unlock()
		return ErrStreamClosed
	}
	if len(p) > w.b.room() {
		w.b.mu.Unlock()
		return &StreamError{Err: fmt.Errorf("write of %d bytes exceeds the %d check-write allowed", len(p), w.b.room())}
	}
	w.b.q = append(w.b.q, append([]byte(nil), p...))
	w.b.queued += len(p)
	w.b.mu.Unlock()
	w.b.sig.notify()
	return nil
}

func (w *bodyWriter) Flush() error { return nil }

func (w *bodyWriter) BlockingFlush(ctx context.Context) error {
	return Block(ctx, w.Subscribe())
}

type bodyRoom struct{ b *OutgoingBody }

func (p bodyRoom) Ready() bool {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.b.done || p.b.room() > 0
}
func (p bodyRoom) Changed() <-chan struct{} { return p.b.sig.wait() }

func (w *bodyWriter) Subscribe() Pollable { return bodyRoom{w.b} }
func (w *bodyWriter) Close() error        { return nil }

// RequestOptions is wasi:http/types.request-options; zero means unset.
type RequestOptions struct {
	ConnectTimeout      time.Duration
	FirstByteTimeout    time.Duration
	BetweenBytesTimeout time.Duration
}

// IncomingResponse is wasi:http/types.incoming-response.
type IncomingResponse struct {
	Status   int
	Headers  *Fields
	body     *IncomingBody
	consumed bool
}

// Consume hands out the body once.
func (r *IncomingResponse) Consume() (*IncomingBody, bool) {
	if r.consumed {
		return nil, false
	}
	r.consumed = true
	return r.body, true
}

// IncomingBody is wasi:http/types.incoming-body: a response's body, or an
// incoming request's.
type IncomingBody struct {
	trailer     func() http.Header // read once the body has ended
	in          *asyncInput
	streamTaken bool
	cancel      context.CancelFunc
}

// Stream hands out the body stream once.
func (b *IncomingBody) Stream() (InputStream, bool) {
	if b.streamTaken {
		return nil, false
	}
	b.streamTaken = true
	return b.in, true
}

// Trailers is the future-trailers of a finished body: ready once the body
// has been read to its end. Whatever the guest left unread is discarded so
// the trailers can arrive.
func (b *IncomingBody) Trailers() *FutureTrailers {
	b.in.discard()
	return &FutureTrailers{b: b}
}

// Close stops the body and releases the connection.
func (b *IncomingBody) Close() error {
	err := b.in.Close()
	b.cancel()
	return err
}

// FutureTrailers is wasi:http/types.future-trailers.
type FutureTrailers struct {
	b     *IncomingBody
	taken bool
}

func (f *FutureTrailers) Ready() bool { return asyncReady{f.b.in}.Ready() && f.ended() }

func (f *FutureTrailers) ended() bool {
	s := f.b.in
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err != nil
}

func (f *FutureTrailers) Changed() <-chan struct{} { return f.b.in.sig.wait() }

// Get returns (trailers or nil, error) once ready; ok is false before that.
// taken reports a second call.
func (f *FutureTrailers) Get() (tr *Fields, herr *HTTPError, ok, taken bool) {
	if f.taken {
		return nil, nil, true, true
	}
	s := f.b.in
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	if err == nil {
		return nil, nil, false, false
	}
	f.taken = true
	if !errors.Is(err, io.EOF) {
		return nil, httpErr(err), true, false
	}
	h := f.b.trailer()
	if len(h) == 0 {
		return nil, nil, true, false
	}
	return fieldsFrom(h), nil, true, false
}

// FutureResponse is wasi:http/types.future-incoming-response.
type FutureResponse struct {
	mu    sync.Mutex
	done  bool
	resp  *IncomingResponse
	err   *HTTPError
	taken bool
	sig   signal
}

func (f *FutureResponse) Ready() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done
}

func (f *FutureResponse) Changed() <-chan struct{} { return f.sig.wait() }

// Get returns the response or its error once ready; ok is false before.
// taken reports a second call after a result was handed out.
func (f *FutureResponse) Get() (resp *IncomingResponse, herr *HTTPError, ok, taken bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.done {
		return nil, nil, false, false
	}
	if f.taken {
		return nil, nil, true, true
	}
	f.taken = true
	return f.resp, f.err, true, false
}

func (f *FutureResponse) settle(r *IncomingResponse, err *HTTPError) {
	f.mu.Lock()
	f.done, f.resp, f.err = true, r, err
	f.mu.Unlock()
	f.sig.notify()
}

type ctxKey int

const connectTimeoutKey ctxKey = iota

func (c *Ctx) newHTTPClient() *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if d, ok := ctx.Value(connectTimeoutKey).(time.Duration); ok && d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, d, errConnectTimeout)
			defer cancel()
			conn, err := c.net.DialContext(ctx, network, addr)
			if err != nil && context.Cause(ctx) == errConnectTimeout {
				return nil, fmt.Errorf("dial %s: %w", addr, errConnectTimeout)
			}
			return conn, err
		}
		return c.net.DialContext(ctx, network, addr)
	}
	tr := &http.Transport{
		// Never a proxy from the host's environment: the guest reaches
		// exactly the destination it named.
		Proxy:                 nil,
		DialContext:           dial,
		ForceAttemptHTTP2:     true,
		TLSClientConfig:       &tls.Config{RootCAs: c.pol.TLSRoots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   30 * time.Second,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       60 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: tr,
		// A 3xx goes back to the guest, which decides whether to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Handle sends r (wasi:http/outgoing-handler.handle). It returns at once;
// the response arrives on the future. Policy refusals settle the future
// with HTTP-request-denied rather than failing the call, except for a
// malformed request, which fails it.
func (c *Ctx) Handle(r *OutgoingRequest, opts RequestOptions) (*FutureResponse, *HTTPError) {
	scheme := strings.ToLower(r.Scheme)
	if scheme == "" {
		scheme = "https"
	}
	if scheme != "http" && scheme != "https" {
		return nil, &HTTPError{Case: "HTTP-protocol-error", Msg: "scheme " + r.Scheme + " is not http or https"}
	}
	if r.Authority == "" {
		return nil, &HTTPError{Case: "HTTP-request-URI-invalid", Msg: "no authority"}
	}
	p := r.Path
	if p == "" {
		p = "/"
	}
	u, err := url.Parse(scheme + "://" + r.Authority + p)
	if err != nil || u.User != nil || u.Host != r.Authority {
		return nil, &HTTPError{Case: "HTTP-request-URI-invalid", Msg: fmt.Sprintf("%s://%s%s is not a valid URL", scheme, r.Authority, p)}
	}
	if !validName(r.Method) {
		return nil, &HTTPError{Case: "HTTP-request-method-invalid", Msg: r.Method}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	if opts.ConnectTimeout > 0 {
		ctx = context.WithValue(ctx, connectTimeoutKey, opts.ConnectTimeout)
	}
	body := r.body
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		cancel(nil)
		return nil, &HTTPError{Case: "HTTP-request-URI-invalid", Msg: err.Error()}
	}
	req.Header = r.Headers.header()
	req.ContentLength = -1
	if cl := req.Header.Get("Content-Length"); cl != "" {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil || n < 0 {
			cancel(nil)
			return nil, &HTTPError{Case: "internal-error", Msg: "content-length " + strconv.Quote(cl) + " is not a length"}
		}
		req.ContentLength = n
		req.Header.Del("Content-Length")
	}
	if req.ContentLength == 0 {
		req.Body = http.NoBody
	}
	body.mu.Lock()
	switch {
	case !r.bodyTaken:
		// A guest that never asked for the body sends none.
		req.Body, req.ContentLength = http.NoBody, 0
	case body.done && req.ContentLength < 0:
		// Written and finished before sending: the length is known.
		req.ContentLength = int64(body.queued)
		if body.queued == 0 {
			req.Body = http.NoBody
		}
	}
	body.sent = true
	body.trailerMap = http.Header{}
	if body.trailers != nil {
		body.trailerMap = body.trailers.header()
	}
	req.Trailer = body.trailerMap
	body.mu.Unlock()
	body.sig.notify()

	fut := &FutureResponse{}
	go c.roundTrip(ctx, cancel, req, opts, fut)
	return fut, nil
}

func (c *Ctx) roundTrip(ctx context.Context, cancel context.CancelCauseFunc, req *http.Request, opts RequestOptions, fut *FutureResponse) {
	fail := func(err error) {
		cancel(err)
		fut.settle(nil, httpErr(err))
	}
	send, granted := c.http.Do, false
	if hook := c.pol.HTTPHook; hook != nil {
		r2, rt, err := hook(req)
		if err != nil {
			fail(fmt.Errorf("request refused: %w: %w", ErrDenied, err))
			return
		}
		if r2 != nil {
			req = r2
		}
		if rt != nil {
			send, granted = rt.RoundTrip, true
		}
	}
	if !granted {
		port, _ := strconv.Atoi(req.URL.Port())
		if !c.pol.Network.PermitsURL(req.URL.Scheme, req.URL.Hostname(), port) {
			fail(fmt.Errorf("%s://%s: %w", req.URL.Scheme, req.URL.Host, ErrDenied))
			return
		}
	}
	if opts.FirstByteTimeout > 0 {
		t := time.AfterFunc(opts.FirstByteTimeout, func() { cancel(errFirstByteTimeout) })
		defer t.Stop()
	}
	resp, err := send(req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = cause
		}
		fail(err)
		return
	}
	var rd io.Reader = resp.Body
	if opts.BetweenBytesTimeout > 0 {
		rd = &idleReader{r: resp.Body, d: opts.BetweenBytesTimeout, cancel: cancel}
	}
	ib := &IncomingBody{trailer: func() http.Header { return resp.Trailer }, in: newAsyncInput(rd, resp.Body), cancel: func() { cancel(nil) }}
	fut.settle(&IncomingResponse{Status: resp.StatusCode, Headers: fieldsFrom(resp.Header), body: ib}, nil)
}

// idleReader fails a read that waits longer than d for its first byte.
type idleReader struct {
	r      io.Reader
	d      time.Duration
	cancel context.CancelCauseFunc
}

func (r *idleReader) Read(p []byte) (int, error) {
	fired := make(chan struct{})
	t := time.AfterFunc(r.d, func() { close(fired); r.cancel(errBetweenBytesTimeout) })
	n, err := r.r.Read(p)
	if !t.Stop() {
		<-fired
		if n == 0 {
			return 0, errBetweenBytesTimeout
		}
	}
	return n, err
}

func asHTTP(err error, he **HTTPError) bool { return errors.As(err, he) }
