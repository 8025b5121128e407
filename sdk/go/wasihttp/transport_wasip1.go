//go:build wasip1

package wasihttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

// Raw imports, with the canonical ABI's flattened signatures. Results that
// do not fit one flat value are written to abi.RetArea; handles are i32.

//go:wasmimport wasi:http/types@0.2.12 [static]fields.from-list
func fieldsFromList(ptr unsafe.Pointer, n uint32, ret unsafe.Pointer)

//go:wasmimport wasi:http/types@0.2.12 [method]fields.entries
func fieldsEntries(self uint32, ret unsafe.Pointer)

//go:wasmimport wasi:http/types@0.2.12 [resource-drop]fields
func dropFields(self uint32)

//go:wasmimport wasi:http/types@0.2.12 [constructor]outgoing-request
func newOutgoingRequest(headers uint32) uint32

//go:wasmimport wasi:http/types@0.2.12 [method]outgoing-request.set-method
func setMethod(self, disc uint32, ptr unsafe.Pointer, n uint32) uint32

//go:wasmimport wasi:http/types@0.2.12 [method]outgoing-request.set-path-with-query
func setPathWithQuery(self, some uint32, ptr unsafe.Pointer, n uint32) uint32

//go:wasmimport wasi:http/types@0.2.12 [method]outgoing-request.set-scheme
func setScheme(self, some, disc uint32, ptr unsafe.Pointer, n uint32) uint32

//go:wasmimport wasi:http/types@0.2.12 [method]outgoing-request.set-authority
func setAuthority(self, some uint32, ptr unsafe.Pointer, n uint32) uint32

//go:wasmimport wasi:http/types@0.2.12 [method]outgoing-request.body
func outgoingRequestBody(self uint32, ret unsafe.Pointer)

//go:wasmimport wasi:http/types@0.2.12 [resource-drop]outgoing-request
func dropOutgoingRequest(self uint32)

//go:wasmimport wasi:http/types@0.2.12 [method]outgoing-body.write
func outgoingBodyWrite(self uint32, ret unsafe.Pointer)

//go:wasmimport wasi:http/types@0.2.12 [static]outgoing-body.finish
func outgoingBodyFinish(self, some, trailers uint32, ret unsafe.Pointer)

//go:wasmimport wasi:http/types@0.2.12 [resource-drop]outgoing-body
func dropOutgoingBody(self uint32)

//go:wasmimport wasi:http/outgoing-handler@0.2.12 handle
func handle(request, some, options uint32, ret unsafe.Pointer)

//go:wasmimport wasi:http/types@0.2.12 [method]future-incoming-response.subscribe
func futureSubscribe(self uint32) uint32

//go:wasmimport wasi:http/types@0.2.12 [method]future-incoming-response.get
func futureGet(self uint32, ret unsafe.Pointer)

//go:wasmimport wasi:http/types@0.2.12 [resource-drop]future-incoming-response
func dropFuture(self uint32)

//go:wasmimport wasi:http/types@0.2.12 [method]incoming-response.status
func responseStatus(self uint32) uint32

//go:wasmimport wasi:http/types@0.2.12 [method]incoming-response.headers
func responseHeaders(self uint32) uint32

//go:wasmimport wasi:http/types@0.2.12 [method]incoming-response.consume
func responseConsume(self uint32, ret unsafe.Pointer)

//go:wasmimport wasi:http/types@0.2.12 [resource-drop]incoming-response
func dropIncomingResponse(self uint32)

//go:wasmimport wasi:http/types@0.2.12 [method]incoming-body.stream
func incomingBodyStream(self uint32, ret unsafe.Pointer)

//go:wasmimport wasi:http/types@0.2.12 [resource-drop]incoming-body
func dropIncomingBody(self uint32)

//go:wasmimport wasi:io/poll@0.2.12 [method]pollable.block
func pollableBlock(self uint32)

//go:wasmimport wasi:io/poll@0.2.12 [resource-drop]pollable
func dropPollable(self uint32)

//go:wasmimport wasi:io/streams@0.2.12 [method]output-stream.blocking-write-and-flush
func blockingWriteAndFlush(self uint32, ptr unsafe.Pointer, n uint32, ret unsafe.Pointer)

//go:wasmimport wasi:io/streams@0.2.12 [resource-drop]output-stream
func dropOutputStream(self uint32)

//go:wasmimport wasi:io/streams@0.2.12 [method]input-stream.blocking-read
func blockingRead(self uint32, n uint64, ret unsafe.Pointer)

//go:wasmimport wasi:io/streams@0.2.12 [resource-drop]input-stream
func dropInputStream(self uint32)

//go:wasmimport wasi:io/error@0.2.12 [method]error.to-debug-string
func errorDebugString(self uint32, ret unsafe.Pointer)

//go:wasmimport wasi:io/error@0.2.12 [resource-drop]error
func dropIOError(self uint32)

// A stream writes at most this much per blocking-write-and-flush.
const writeChunk = 4096

// readChunk is the most one Read asks the host for.
const readChunk = 64 << 10

// retU8, retU32 read the return area.
func retU8(off uint32) uint8   { return abi.U8(abi.Mem, abi.RetAddr()+off) }
func retU32(off uint32) uint32 { return abi.U32(abi.Mem, abi.RetAddr()+off) }

// ok reports whether a flat result<_, _> (or result<_>) disc is ok.
func ok(disc uint32) bool { return disc == 0 }

func strPtr(s string) (unsafe.Pointer, uint32) {
	return unsafe.Pointer(unsafe.StringData(s)), uint32(len(s))
}

// Send sends req through wasi:http/outgoing-handler and returns once the
// response's head has arrived; its body streams. There is no connection
// pool and no timeout of its own: the host owns both. ctx is checked
// before the request goes out; once sent, the call blocks on the host.
func Send(ctx context.Context, req *Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	scheme, authority, pathQuery, err := splitURL(req.URL)
	if err != nil {
		return nil, err
	}
	headers, err := newFields(fieldList(req.Header, req.Body))
	if err != nil {
		return nil, err
	}
	out := newOutgoingRequest(headers) // takes ownership of headers

	disc, other := methodCase(req.Method)
	p, n := strPtr(other)
	if !ok(setMethod(out, disc, p, n)) {
		dropOutgoingRequest(out)
		return nil, fmt.Errorf("%w: method %q refused", ErrRequest, req.Method)
	}
	p, n = strPtr(pathQuery)
	if !ok(setPathWithQuery(out, 1, p, n)) {
		dropOutgoingRequest(out)
		return nil, fmt.Errorf("%w: path %q refused", ErrRequest, pathQuery)
	}
	sdisc, sother := schemeCase(scheme)
	p, n = strPtr(sother)
	if !ok(setScheme(out, 1, sdisc, p, n)) {
		dropOutgoingRequest(out)
		return nil, fmt.Errorf("%w: scheme %q refused", ErrRequest, scheme)
	}
	p, n = strPtr(authority)
	if !ok(setAuthority(out, 1, p, n)) {
		dropOutgoingRequest(out)
		return nil, fmt.Errorf("%w: authority %q refused", ErrRequest, authority)
	}

	outgoingRequestBody(out, abi.RetArea())
	if retU8(0) != 0 {
		dropOutgoingRequest(out)
		return nil, fmt.Errorf("%w: request body unavailable", ErrRequest)
	}
	body := retU32(4)

	handle(out, 0, 0, abi.RetArea()) // takes ownership of out
	if retU8(0) != 0 {
		code := retU8(8)
		dropOutgoingBody(body)
		return nil, codeError("handle", code)
	}
	future := retU32(8)

	if err := sendBody(body, req.Body); err != nil {
		dropFuture(future)
		return nil, err
	}
	return await(future)
}

// newFields builds the request's headers as a wasi:http fields resource.
func newFields(list [][2]string) (uint32, error) {
	// tuple<string, list<u8>>: 16 bytes each, pointing into Go memory that
	// stays referenced until the call returns.
	entries := make([]uint32, 4*len(list))
	for i, kv := range list {
		np, nn := strPtr(kv[0])
		vp, vn := strPtr(kv[1])
		entries[4*i] = uint32(uintptr(np))
		entries[4*i+1] = nn
		entries[4*i+2] = uint32(uintptr(vp))
		entries[4*i+3] = vn
	}
	var ptr unsafe.Pointer
	if len(entries) > 0 {
		ptr = unsafe.Pointer(&entries[0])
	}
	fieldsFromList(ptr, uint32(len(list)), abi.RetArea())
	keep(list, entries)
	if retU8(0) != 0 {
		return 0, fmt.Errorf("%w: headers refused (header-error %d)", ErrRequest, retU8(4))
	}
	return retU32(4), nil
}

// keep holds values the host reads through raw addresses alive until the
// call that reads them has returned.
//
//go:noinline
func keep(...any) {}

// sendBody streams the request body and finishes it.
func sendBody(body uint32, r io.Reader) error {
	outgoingBodyWrite(body, abi.RetArea())
	if retU8(0) != 0 {
		dropOutgoingBody(body)
		return fmt.Errorf("%w: request body stream unavailable", ErrRequest)
	}
	stream := retU32(4)
	if r != nil {
		buf := make([]byte, writeChunk)
		for {
			n, rerr := r.Read(buf)
			if n > 0 {
				if err := writeAll(stream, buf[:n]); err != nil {
					dropOutputStream(stream)
					dropOutgoingBody(body)
					return err
				}
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				dropOutputStream(stream)
				dropOutgoingBody(body)
				return fmt.Errorf("reading request body: %w", rerr)
			}
		}
	}
	dropOutputStream(stream) // a body's stream goes before its finish
	outgoingBodyFinish(body, 0, 0, abi.RetArea())
	if retU8(0) != 0 {
		return codeError("finish request body", retU8(8))
	}
	return nil
}

func writeAll(stream uint32, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), writeChunk)
		blockingWriteAndFlush(stream, unsafe.Pointer(&b[0]), uint32(n), abi.RetArea())
		keep(b)
		if retU8(0) != 0 {
			return streamError("write request body")
		}
		b = b[n:]
	}
	return nil
}

// streamError reads the stream-error at offset 4 of the return area,
// dropping its error resource.
func streamError(op string) error {
	if retU8(4) == 1 {
		return fmt.Errorf("%w: %s: stream closed", ErrRequest, op)
	}
	e := retU32(8)
	errorDebugString(e, abi.RetArea())
	msg := abi.GetString(abi.Mem, abi.RetAddr())
	abi.ResetArena()
	dropIOError(e)
	return fmt.Errorf("%w: %s: %s", ErrRequest, op, msg)
}

// await blocks until the response's head arrives and wraps it.
func await(future uint32) (*Response, error) {
	pollable := futureSubscribe(future)
	pollableBlock(pollable)
	dropPollable(pollable)
	futureGet(future, abi.RetArea())
	// option @0, outer result @8, inner result @16, payload @24.
	switch {
	case retU8(0) == 0:
		dropFuture(future)
		return nil, fmt.Errorf("%w: response not ready after its pollable fired", ErrRequest)
	case retU8(8) != 0:
		dropFuture(future)
		return nil, fmt.Errorf("%w: response already taken", ErrRequest)
	case retU8(16) != 0:
		code := retU8(24)
		dropFuture(future)
		return nil, codeError("response", code)
	}
	resp := retU32(24)
	dropFuture(future)

	status := int(responseStatus(resp))
	header := readHeaders(responseHeaders(resp))
	responseConsume(resp, abi.RetArea())
	if retU8(0) != 0 {
		dropIncomingResponse(resp)
		return nil, fmt.Errorf("%w: response body unavailable", ErrRequest)
	}
	body := retU32(4)
	incomingBodyStream(body, abi.RetArea())
	if retU8(0) != 0 {
		dropIncomingBody(body)
		dropIncomingResponse(resp)
		return nil, fmt.Errorf("%w: response body stream unavailable", ErrRequest)
	}
	stream := retU32(4)
	return &Response{
		StatusCode: status,
		Status:     statusLine(status),
		Header:     header,
		Body:       &bodyReader{stream: stream, body: body, resp: resp},
	}, nil
}

// readHeaders copies a fields resource into a Header and drops it.
func readHeaders(fields uint32) Header {
	fieldsEntries(fields, abi.RetArea())
	ptr, n := retU32(0), retU32(4)
	h := make(Header, 0, n)
	for i := uint32(0); i < n; i++ {
		e := ptr + 16*i
		h = append(h, [2]string{abi.GetString(abi.Mem, e), abi.GetString(abi.Mem, e+8)})
	}
	abi.ResetArena()
	dropFields(fields)
	return h
}

// bodyReader streams a response body; Close drops the stream, the body
// and the response, children first.
type bodyReader struct {
	stream, body, resp uint32
	closed, eof        bool
	pending            []byte
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.closed {
		return 0, errors.New("read of a closed response body")
	}
	if len(b.pending) == 0 {
		if b.eof {
			return 0, io.EOF
		}
		blockingRead(b.stream, uint64(min(len(p), readChunk)), abi.RetArea())
		if retU8(0) != 0 {
			if retU8(4) == 1 { // closed: the body is complete
				b.eof = true
				return 0, io.EOF
			}
			return 0, streamError("read response body")
		}
		b.pending = []byte(abi.String(abi.Mem, retU32(4), retU32(8)))
		abi.ResetArena()
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

func (b *bodyReader) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	dropInputStream(b.stream)
	dropIncomingBody(b.body)
	dropIncomingResponse(b.resp)
	return nil
}
