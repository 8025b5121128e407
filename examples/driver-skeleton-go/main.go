//go:build wasip1

// Command driver-skeleton-go is the shape of an inference driver: it posts
// the runtime's request to the provider through the credential gateway
// (MURMUR_INFERENCE_ENDPOINT), reads the streamed answer as server-sent
// events, emits each text delta through murmur:text/chunks as it arrives,
// and returns the whole text. A real driver (murmur/driver-anthropic,
// murmur/driver-openai) translates the request and the events to and from
// its provider's wire format in the two marked places.
//
// The skeleton's own wire format, which the guest tests' fake provider
// speaks: POST {endpoint}/v1/complete with the request as the body;
// events "delta" with data {"text": "..."} and a final "done" with data
// {"id": "..."}.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/murmur/mur/sdk/go/driver"
	"github.com/murmur/mur/sdk/go/wasihttp"
)

func init() { driver.Run(turn) }

func turn(c *driver.Call) (driver.Reply, error) {
	if c.Endpoint == "" {
		return driver.Reply{}, fmt.Errorf("MURMUR_INFERENCE_ENDPOINT is not set: the driver has no gateway to reach its provider through")
	}
	// Translate the runtime's request into the provider's here.
	req := &wasihttp.Request{
		Method: "POST",
		URL:    c.Endpoint + "/v1/complete",
		Header: wasihttp.Header{{"content-type", "application/json"}, {"accept", "text/event-stream"}},
		Body:   bytes.NewReader(c.Request),
	}
	if c.Model != "" {
		req.Header = append(req.Header, [2]string{"x-model", c.Model})
	}
	resp, err := c.Send(context.Background(), req)
	if err != nil {
		return driver.Reply{}, fmt.Errorf("calling the provider: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return driver.Reply{}, fmt.Errorf("provider answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}

	// Translate the provider's events back here.
	var text strings.Builder
	var id string
	for ev, err := range driver.Events(resp.Body) {
		if err != nil {
			return driver.Reply{}, err
		}
		switch ev.Type {
		case "delta":
			var d struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
				return driver.Reply{}, fmt.Errorf("provider sent a malformed delta: %w", err)
			}
			text.WriteString(d.Text)
			// A closed stream means nobody watches; the turn still
			// completes.
			_ = c.Emit(d.Text)
		case "done":
			var d struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
				return driver.Reply{}, fmt.Errorf("provider sent a malformed done: %w", err)
			}
			id = d.ID
		}
	}
	out, err := json.Marshal(map[string]string{"text": text.String(), "id": id})
	if err != nil {
		return driver.Reply{}, err
	}
	return driver.Reply{Data: string(out)}, nil
}

func main() {}
