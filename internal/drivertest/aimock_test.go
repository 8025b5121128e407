package drivertest

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// aimock starts tools/aimock/start.mjs (the pinned @copilotkit/aimock) on
// a loopback port and returns its base URL. It runs only under
// MUR_AIMOCK=1 (make test-drivers-aimock, which installs it first).
func aimock(t *testing.T) string {
	t.Helper()
	if os.Getenv("MUR_AIMOCK") == "" {
		t.Skip("aimock runs under make test-drivers-aimock (MUR_AIMOCK=1)")
	}
	cmd := exec.Command("node", "start.mjs", "fixtures.json")
	cmd.Dir = "../../tools/aimock"
	cmd.Stderr = os.Stderr
	// The server stops when its stdin closes: killing the test process
	// cannot leave it running.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting aimock (run make test-drivers-aimock): %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case u, ok := <-line:
		if !ok || !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Fatalf("aimock printed %q, not its URL", u)
		}
		return u
	case <-time.After(60 * time.Second):
		t.Fatal("aimock did not start within 60s")
	}
	return ""
}

func TestAimock(t *testing.T) {
	base := aimock(t)
	weather := map[string]any{"name": "get_weather", "description": "The weather at a place.",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"location": map[string]any{"type": "string"}, "unit": map[string]any{"type": "string"}}}}
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			in := start(t, w, setup{Upstream: base + w.base, Key: testKey})

			o := in.call(request(w.model, "aimock: greet"))
			if r := o.response(t); r.Text != "Hello from aimock, streamed in pieces." || r.StopReason != "end_turn" {
				t.Fatalf("greet: %+v", r)
			}
			if len(o.chunks) < 2 || strings.Join(o.chunks, "") != "Hello from aimock, streamed in pieces." {
				t.Fatalf("greet chunks %q", o.chunks)
			}
			if o.meta("output_tokens") == "" {
				t.Fatalf("greet reported no usage: %v", o.res.Metadata)
			}

			req := request(w.model, "aimock: weather")
			req["tools"] = []any{weather}
			r := in.call(req).response(t)
			if r.StopReason != "tool_use" || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "get_weather" || r.ToolCalls[0].ID == "" ||
				!strings.Contains(string(r.ToolCalls[0].Input), `"Lisbon"`) {
				t.Fatalf("weather: %+v", r)
			}

			if r := in.call(request(w.model, "aimock: long")).response(t); r.StopReason != "max_tokens" || r.Text != "This answer was cut" {
				t.Fatalf("long: %+v", r)
			}

			// A cut inside a tool call's arguments (spec 004, When a turn
			// hits the cap): aimock streams OpenAI's arguments verbatim, so
			// they end unfinished; on the Anthropic wire it sends the input
			// it could parse. Either way the answer is capped, not malformed,
			// streamed and (OpenAI) whole.
			for _, stream := range []bool{true, false} {
				req := request(w.model, "aimock: cut tool")
				req["tools"] = []any{weather}
				req["config"] = map[string]any{"stream": stream}
				r := in.call(req).response(t)
				if r.StopReason != "max_tokens" || r.Text != "Checking the" || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "get_weather" ||
					r.ToolCalls[0].ID == "" || string(r.ToolCalls[0].Input) != `{}` {
					t.Fatalf("cut tool (stream %v): %+v", stream, r)
				}
			}

			for _, c := range []struct{ msg, status string }{{"aimock: rate limited", "429"}, {"aimock: overloaded", "529"}} {
				o := in.call(request(w.model, c.msg))
				if o.res.Status != "failed" || o.meta("http_status") != c.status || o.meta("transient") != "true" {
					t.Fatalf("%s: %s %q %v", c.msg, o.res.Status, o.summary(), o.res.Metadata)
				}
			}
			if saw := in.guestSaw(); strings.Contains(saw, testKey) {
				t.Fatalf("the key reached the guest:\n%s", saw)
			}
		})
	}
}
