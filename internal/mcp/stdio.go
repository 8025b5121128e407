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
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(s.admitLines(in, pw, w))
	}()
	err := s.sdk.Run(ctx, &sdk.IOTransport{Reader: pr, Writer: w, MaxLineLength: -1})
	pr.Close()
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// admitLines copies in to sdkIn line by line, answering each refused line
// on out instead. A line over the limit is drained without being kept.
func (s *Server) admitLines(in io.Reader, sdkIn io.Writer, out *lineWriter) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		line = line[:0]
		over := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if !over {
				line = append(line, chunk...)
				if len(line) > s.limit+1 {
					// Past the limit: keep only enough to say it is.
					over, line = true, line[:s.limit+1]
				}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if len(bytes.TrimSpace(line)) > 0 {
			msg := bytes.TrimRight(line, "\r\n")
			if over {
				msg = line
			}
			if r := admit(msg, s.limit); r != nil {
				if werr := out.writeLine(r.reply()); werr != nil {
					return werr
				}
			} else if _, werr := sdkIn.Write(append(msg, '\n')); werr != nil {
				return werr
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
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
