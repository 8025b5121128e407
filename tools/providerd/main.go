// Command providerd serves a scripted model provider on loopback: the
// provider double the offline demo and CLI tests run capsules against. It
// answers in the OpenAI Chat Completions and Anthropic Messages wire
// shapes (streamed or not, as asked), one scripted step per request, so
// the real driver components make real HTTP and nothing leaves the
// machine.
//
//	providerd -script steps.json [-addr 127.0.0.1:18080] [-loop]
//
// The script is a JSON array of steps: {"text": "...", "calls": [{"id":
// "c1", "name": "tool", "input": "{...}"}], "input_tokens": 10,
// "output_tokens": 5}, or {"status": 429, "body": "..."} for an error.
// -loop starts the script again once it is used up.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/murmur/mur/internal/providertest"
)

type call struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Input string `json:"input"`
}

type step struct {
	Text         string            `json:"text"`
	Calls        []call            `json:"calls"`
	Stop         string            `json:"stop"`
	InputTokens  int               `json:"input_tokens"`
	OutputTokens int               `json:"output_tokens"`
	Status       int               `json:"status"`
	Body         string            `json:"body"`
	Header       map[string]string `json:"header"`
}

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
	var raw []step
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	steps := make([]providertest.Step, len(raw))
	for i, s := range raw {
		st := providertest.Step{Text: s.Text, Stop: s.Stop, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
			Status: s.Status, Body: s.Body, Header: s.Header}
		for _, c := range s.Calls {
			st.Calls = append(st.Calls, providertest.Call{ID: c.ID, Name: c.Name, Input: c.Input})
		}
		steps[i] = st
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
