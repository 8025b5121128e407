package wasi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ErrStreamClosed is wasi:io/streams stream-error.closed: the other end is
// done and no more data will come or go.
var ErrStreamClosed = errors.New("stream closed")

// StreamError is stream-error.last-operation-failed; Err becomes the
// wasi:io/error resource the guest can ask about.
type StreamError struct{ Err error }

func (e *StreamError) Error() string { return "stream operation failed: " + e.Err.Error() }
func (e *StreamError) Unwrap() error { return e.Err }

// streamErr turns an I/O error into a stream error: io.EOF is closed,
// anything else is last-operation-failed.
func streamErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, ErrStreamClosed) {
		return ErrStreamClosed
	}
	var se *StreamError
	if errors.As(err, &se) {
		return err
	}
	return &StreamError{Err: err}
}

// InputStream is wasi:io/streams.input-stream.
type InputStream interface {
	// Read returns up to n bytes without blocking; an empty slice means
	// nothing is available yet.
	Read(n uint64) ([]byte, error)
	// BlockingRead waits for at least one byte (or the end).
	BlockingRead(ctx context.Context, n uint64) ([]byte, error)
	Subscribe() Pollable
	Close() error
}

// OutputStream is wasi:io/streams.output-stream.
type OutputStream interface {
	// CheckWrite reports how many bytes Write accepts now.
	CheckWrite() (uint64, error)
	Write(p []byte) error
	// Flush starts flushing; BlockingFlush waits for it.
	Flush() error
	BlockingFlush(ctx context.Context) error
	Subscribe() Pollable
	Close() error
}

// chunk is the most one read returns, so a guest asking for 4 GiB does not
// make the host allocate it.
const chunk = 1 << 20

// fileInput reads a host file from an offset; files are always ready.
type fileInput struct {
	r   io.ReaderAt
	off int64
}

func (s *fileInput) Read(n uint64) ([]byte, error) {
	if n > chunk {
		n = chunk
	}
	if n == 0 {
		return nil, nil
	}
	b := make([]byte, n)
	m, err := s.r.ReadAt(b, s.off)
	s.off += int64(m)
	if m > 0 {
		return b[:m], nil
	}
	if err == nil {
		err = io.EOF
	}
	return nil, streamErr(err)
}

func (s *fileInput) BlockingRead(_ context.Context, n uint64) ([]byte, error) { return s.Read(n) }
func (s *fileInput) Subscribe() Pollable                                      { return readyPollable{} }
func (s *fileInput) Close() error                                             { return nil }

// fileOutput writes a host file at an offset, or appends.
type fileOutput struct {
	w      io.WriterAt
	f      io.Writer // for append mode
	off    int64
	append bool
	// check refuses writes the policy forbids (read-only subtrees); it is
	// consulted on every write so a descriptor opened before cannot bypass it.
	check func() error
}

func (s *fileOutput) CheckWrite() (uint64, error) { return chunk, nil }

func (s *fileOutput) Write(p []byte) error {
	if s.check != nil {
		if err := s.check(); err != nil {
			return &StreamError{Err: err}
		}
	}
	if s.append {
		_, err := s.f.Write(p)
		return streamErr(err)
	}
	n, err := s.w.WriteAt(p, s.off)
	s.off += int64(n)
	return streamErr(err)
}

func (s *fileOutput) Flush() error                          { return nil }
func (s *fileOutput) BlockingFlush(_ context.Context) error { return nil }
func (s *fileOutput) Subscribe() Pollable                   { return readyPollable{} }
func (s *fileOutput) Close() error                          { return nil }

// writerOutput forwards to an io.Writer the caller supplied (stdout,
// stderr); a nil writer discards.
type writerOutput struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *writerOutput) CheckWrite() (uint64, error) { return chunk, nil }

func (s *writerOutput) Write(p []byte) error {
	if s.w == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.w.Write(p)
	return streamErr(err)
}

func (s *writerOutput) Flush() error                          { return nil }
func (s *writerOutput) BlockingFlush(_ context.Context) error { return nil }
func (s *writerOutput) Subscribe() Pollable                   { return readyPollable{} }
func (s *writerOutput) Close() error                          { return nil }

// asyncInput pumps an io.Reader (a socket, a response body, stdin) on a
// goroutine into a bounded buffer, so Read never blocks the guest and
// Subscribe can say when data is there.
type asyncInput struct {
	mu         sync.Mutex
	buf        []byte
	err        error
	closed     bool
	discarding bool // read to the end, keeping nothing
	sig        signal
	room       chan struct{} // wakes the pump when the buffer drains
	src        io.Reader
	closer     io.Closer
}

// asyncLimit bounds what the pump reads ahead of the guest.
const asyncLimit = 4 << 20

func newAsyncInput(r io.Reader, c io.Closer) *asyncInput {
	s := &asyncInput{src: r, closer: c, room: make(chan struct{}, 1)}
	go s.pump()
	return s
}

func (s *asyncInput) pump() {
	b := make([]byte, 256<<10)
	for {
		n, err := s.src.Read(b)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		if !s.discarding {
			s.buf = append(s.buf, b[:n]...)
		}
		if err != nil {
			s.err = err
		}
		full := len(s.buf) >= asyncLimit
		s.mu.Unlock()
		s.sig.notify()
		if err != nil {
			return
		}
		if full {
			<-s.room
		}
	}
}

// discard drops what is buffered and everything still to come, reading
// the source to its end.
func (s *asyncInput) discard() {
	s.mu.Lock()
	s.discarding, s.buf = true, nil
	s.mu.Unlock()
	select {
	case s.room <- struct{}{}:
	default:
	}
}

func (s *asyncInput) Read(n uint64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) == 0 {
		if s.err != nil {
			return nil, streamErr(s.err)
		}
		return nil, nil
	}
	if n > uint64(len(s.buf)) {
		n = uint64(len(s.buf))
	}
	if n > chunk {
		n = chunk
	}
	out := append([]byte(nil), s.buf[:n]...)
	wasFull := len(s.buf) >= asyncLimit
	s.buf = s.buf[n:]
	if len(s.buf) == 0 {
		s.buf = nil
	}
	if wasFull && len(s.buf) < asyncLimit {
		select {
		case s.room <- struct{}{}:
		default:
		}
	}
	return out, nil
}

func (s *asyncInput) BlockingRead(ctx context.Context, n uint64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	for {
		b, err := s.Read(n)
		if len(b) > 0 || err != nil {
			return b, err
		}
		if err := Block(ctx, s.Subscribe()); err != nil {
			return nil, &StreamError{Err: fmt.Errorf("read interrupted: %w", err)}
		}
	}
}

type asyncReady struct{ s *asyncInput }

func (p asyncReady) Ready() bool {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	return len(p.s.buf) > 0 || p.s.err != nil
}
func (p asyncReady) Changed() <-chan struct{} { return p.s.sig.wait() }

func (s *asyncInput) Subscribe() Pollable { return asyncReady{s} }

func (s *asyncInput) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.room <- struct{}{}:
	default:
	}
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// emptyInput is a stream that is at its end (stdin when none is given).
type emptyInput struct{}

func (emptyInput) Read(uint64) ([]byte, error)                          { return nil, ErrStreamClosed }
func (emptyInput) BlockingRead(context.Context, uint64) ([]byte, error) { return nil, ErrStreamClosed }
func (emptyInput) Subscribe() Pollable                                  { return readyPollable{} }
func (emptyInput) Close() error                                         { return nil }

// Splice moves up to n bytes from in to out (output-stream.splice), without
// blocking when blocking is false.
func Splice(ctx context.Context, out OutputStream, in InputStream, n uint64, blocking bool) (uint64, error) {
	room, err := out.CheckWrite()
	if err != nil {
		return 0, err
	}
	if n > room {
		n = room
	}
	var b []byte
	if blocking {
		b, err = in.BlockingRead(ctx, n)
	} else {
		b, err = in.Read(n)
	}
	if err != nil {
		return 0, err
	}
	if len(b) == 0 {
		return 0, nil
	}
	return uint64(len(b)), out.Write(b)
}
