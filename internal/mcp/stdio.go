package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one client over newline-delimited JSON-RPC on in and
// out (mur mcp's stdin and stdout) until in ends or ctx is done. Each line
// is admitted first: a line that is too long, not JSON or not JSON-RPC is
// answered with a coded error on out and the connection goes on (the
// SDK's own reader would end the connection on it).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &lineWriter{w: out}
	// The admission runs in the SDK's own reader goroutine, as its
	// io.Reader: no extra goroutine or pipe between the client and the SDK.
	err := s.sdk.Run(ctx, &sdk.IOTransport{Reader: s.newAdmitter(in, w), Writer: w, MaxLineLength: -1})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// admitter reads in line by line and yields only the admitted lines,
// answering each refused one on out. A line over the limit is drained
// without being kept.
type admitter struct {
	s       *Server
	br      *bufio.Reader
	out     *lineWriter
	line    []byte
	pending []byte
	err     error
}

func (s *Server) newAdmitter(in io.Reader, out *lineWriter) *admitter {
	return &admitter{s: s, br: bufio.NewReaderSize(in, 64<<10), out: out}
}

// Read implements io.Reader.
func (a *admitter) Read(p []byte) (int, error) {
	for len(a.pending) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		msg, err := a.next()
		a.err = err
		if len(bytes.TrimSpace(msg)) == 0 {
			continue
		}
		if r := admit(msg, a.s.limit); r != nil {
			if werr := a.out.writeLine(r.reply()); werr != nil {
				a.err = werr
			}
			continue
		}
		a.pending = append(msg, '\n')
	}
	n := copy(p, a.pending)
	a.pending = a.pending[n:]
	return n, nil
}

// next reads one line without its line ending, or the first limit+1
// bytes of a longer one (which admit refuses as too large).
func (a *admitter) next() ([]byte, error) {
	a.line = a.line[:0]
	over := false
	for {
		chunk, err := a.br.ReadSlice('\n')
		if !over {
			a.line = append(a.line, chunk...)
			if len(a.line) > a.s.limit+1 {
				over, a.line = true, a.line[:a.s.limit+1]
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if over {
			return a.line, err
		}
		return bytes.TrimRight(a.line, "\r\n"), err
	}
}

// Close leaves in open: it is the process's stdin.
func (a *admitter) Close() error { return nil }

// admitLines copies what the admitter yields from in to sdkIn: the stdio
// entry without the SDK, for FuzzMCPEntry.
func (s *Server) admitLines(in io.Reader, sdkIn io.Writer, out *lineWriter) error {
	_, err := io.Copy(sdkIn, s.newAdmitter(in, out))
	return err
}

// lineWriter is out shared by the SDK's replies and the admission's
// refusals, one whole line at a time.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lineWriter) writeLine(b []byte) error {
	_, err := l.Write(append(b, '\n'))
	return err
}

// Close leaves out open: it is the process's stdout.
func (l *lineWriter) Close() error { return nil }
