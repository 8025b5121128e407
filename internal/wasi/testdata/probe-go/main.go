//go:build wasip1

// Command wasi-probe-go is a test guest for internal/wasi: each call reports
// one thing the WASI host lets it see, so the host's tests can check the
// policy from inside a real Go guest. Input is JSON {"op": ..., "arg": ...}:
// env (the value of arg, "<unset>" when absent), environ (every NAME=value),
// args, print (arg to stdout, then "err:"+arg to stderr), read (file arg).
// For the stream throughput benchmarks: drain (read file arg to its end in
// 64 KiB reads), fill (write n bytes to file arg in 64 KiB writes) and get
// (GET the URL arg through wasi:http, reading the body to its end), each
// reporting the byte count; hash (the SHA-256 of file or http(s) URL arg,
// read through a bufio.Reader of odd size, so reads land at odd addresses).
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp/nethttp"
)

type request struct {
	Op  string `json:"op"`
	Arg string `json:"arg"`
	N   int64  `json:"n"`
}

// chunk is the buffer the throughput ops move bytes in, as io.Copy would.
const chunk = 64 << 10

func init() { tool.Run(handle) }

func handle(in tool.Input) tool.Result {
	var req request
	if err := json.Unmarshal([]byte(in.Text()), &req); err != nil {
		return tool.Failed("bad input: " + err.Error())
	}
	switch req.Op {
	case "env":
		v, ok := os.LookupEnv(req.Arg)
		if !ok {
			v = "<unset>"
		}
		return tool.Passed(v)
	case "environ":
		return tool.Passed(strings.Join(os.Environ(), "\n"))
	case "args":
		return tool.Passed(strings.Join(os.Args, " "))
	case "print":
		fmt.Fprint(os.Stdout, req.Arg)
		fmt.Fprint(os.Stderr, "err:"+req.Arg)
		return tool.Passed("printed")
	case "read":
		b, err := os.ReadFile(req.Arg)
		if err != nil {
			return tool.Failed(err.Error())
		}
		return tool.Passed(string(b))
	case "drain":
		f, err := os.Open(req.Arg)
		if err != nil {
			return tool.Failed(err.Error())
		}
		defer f.Close()
		return counted(io.CopyBuffer(io.Discard, onlyReader{f}, make([]byte, chunk)))
	case "fill":
		f, err := os.Create(req.Arg)
		if err != nil {
			return tool.Failed(err.Error())
		}
		buf := make([]byte, chunk)
		for i := range buf {
			buf[i] = byte(i * 7)
		}
		var n int64
		for n < req.N {
			w, err := f.Write(buf[:min(int64(len(buf)), req.N-n)])
			n += int64(w)
			if err != nil {
				f.Close()
				return tool.Failed(err.Error())
			}
		}
		return counted(n, f.Close())
	case "get":
		resp, err := nethttp.Client().Get(req.Arg)
		if err != nil {
			return tool.Failed(err.Error())
		}
		defer resp.Body.Close()
		return counted(io.CopyBuffer(io.Discard, onlyReader{resp.Body}, make([]byte, chunk)))
	case "hash":
		var r io.ReadCloser
		if strings.HasPrefix(req.Arg, "http") {
			resp, err := nethttp.Client().Get(req.Arg)
			if err != nil {
				return tool.Failed(err.Error())
			}
			r = resp.Body
		} else {
			f, err := os.Open(req.Arg)
			if err != nil {
				return tool.Failed(err.Error())
			}
			r = f
		}
		defer r.Close()
		h := sha256.New()
		if _, err := io.Copy(h, bufio.NewReaderSize(r, 4099)); err != nil {
			return tool.Failed(err.Error())
		}
		return tool.Passed(hex.EncodeToString(h.Sum(nil)))
	}
	return tool.Failed("unknown op " + req.Op)
}

// onlyReader hides WriterTo/ReaderFrom so io.CopyBuffer uses the buffer
// it is given, the way a guest's own read loop would.
type onlyReader struct{ io.Reader }

func counted(n int64, err error) tool.Result {
	if err != nil {
		return tool.Failed(err.Error())
	}
	return tool.Passed(strconv.FormatInt(n, 10))
}

func main() {}
