// Command floor is the baseline launchbench measures mur against: a
// static Go program (CGO_ENABLED=0) that makes the same first POST the
// capsule's driver makes — same URL, headers and body, captured from a
// mur run — reads the answer and exits. What it costs from exec to the
// provider seeing the request is the floor a Go runtime can launch at on
// this machine: runtime start, net/http's package inits, one connection.
//
//	floor -url http://127.0.0.1:port/v1/chat/completions -body req.json [-H 'Authorization: Bearer k']...
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

func main() {
	url := flag.String("url", "", "where to POST")
	bodyFile := flag.String("body", "", "file holding the request body")
	var hs headers
	flag.Var(&hs, "H", "a request header, 'Name: value' (repeatable)")
	flag.Parse()
	if err := post(*url, *bodyFile, hs); err != nil {
		fmt.Fprintf(os.Stderr, "floor: %v\n", err)
		os.Exit(1)
	}
}

func post(url, bodyFile string, hs headers) error {
	body, err := os.ReadFile(bodyFile)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range hs {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return fmt.Errorf("header %q is not 'Name: value'", h)
		}
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("provider answered %s", resp.Status)
	}
	return nil
}
