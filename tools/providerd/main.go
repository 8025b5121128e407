// Command providerd serves a scripted model provider on loopback: the
// provider double the offline demo and CLI tests run capsules against. It
// answers in the OpenAI Chat Completions and Anthropic Messages wire
// shapes (streamed or not, as asked), one scripted step per request, so
// the real driver components make real HTTP and nothing leaves the
// machine.
//
//	providerd -script steps.json [-addr 127.0.0.1:18080] [-loop]
//
// The script is a JSON array of steps (providertest.ScriptStep): {"text":
// "...", "calls": [{"id": "c1", "name": "tool", "input": "{...}"}],
// "input_tokens": 10, "output_tokens": 5}, {"status": 429, "body": "..."}
// for an error, {"drop": true}, {"text": "...", "break_after": 3}, …
// -loop starts the script again once it is used up.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/murmur/mur/internal/providertest"
)

func main() {
	script := flag.String("script", "", "JSON file of scripted steps (required)")
	addr := flag.String("addr", "127.0.0.1:18080", "loopback address to listen on")
	loop := flag.Bool("loop", false, "start the script again when it is used up")
	flag.Parse()
	if err := run(*script, *addr, *loop); err != nil {
		fmt.Fprintf(os.Stderr, "providerd: %v\n", err)
		os.Exit(1)
	}
}

func run(path, addr string, loop bool) error {
	if path == "" {
		return fmt.Errorf("-script is required")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	steps, err := providertest.ParseScript(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("refusing to listen on %s: the provider double serves loopback only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s := &providertest.Server{}
	s.Push(steps...)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loop && s.Remaining() == 0 {
			s.Push(steps...)
		}
		s.ServeHTTP(w, r)
	})
	fmt.Printf("providerd: serving %d scripted steps on http://%s\n", len(steps), ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}
