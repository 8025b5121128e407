package capsule_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/guesttest"
	"github.com/murmur/mur/internal/providertest"
)

const relayJSManifest = `name: relay-js-capsule
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      keyless: true
  - name: murmur/relay-js
    version: "0.1.0"
  - name: murmur/echo-go
    version: "0.1.0"
capabilities:
  shell:
    allow: [echo]
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 4
`

// TestJSToolImports: examples/relay-js, a tool written in JavaScript,
// imports murmur:tool-registry/invoke, murmur:shell/execute and
// murmur:message/send by name. Under mur run it calls echo-go through
// invoke (whose tool_call record names relay-js as the caller) and runs
// echo under the capsule's shell grant (one shell record), and the model
// reads both outputs; a binary not in shell.allow and a peer not in
// network.allow come back to the model as the host's refusals, with
// nothing run. Without the imports in the JS tool's world the guest does
// not build.
func TestJSToolImports(t *testing.T) {
	root, home := importsHome(t)
	guesttest.File(t, "relay-js")
	publish(t, root, "../../examples/relay-js", "relay-js")
	publish(t, root, "../../examples/echo-go", "echo-go")
	prov := providertest.Start(t,
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "relay-js", Input: `{"tool":"echo-go","input":{"text":"ping-through-invoke"},"shell":["echo","said-by-the-shell"]}`}}, InputTokens: 10, OutputTokens: 5},
		providertest.Step{Calls: []providertest.Call{
			{ID: "c2", Name: "relay-js", Input: `{"shell":["cat","/etc/hostname"]}`},
			{ID: "c3", Name: "relay-js", Input: `{"peer":"http://127.0.0.1:9/","text":"hello"}`},
		}, InputTokens: 20, OutputTokens: 5},
		providertest.Step{Text: "Done.", InputTokens: 30, OutputTokens: 3},
	)
	manifestPath := installManifest(t, root, relayJSManifest, prov.URL)
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "relay it"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	reqs := prov.Requests()
	if len(reqs) != 3 {
		t.Fatalf("provider saw %d requests, want 3", len(reqs))
	}
	first := string(reqs[1].Raw)
	if !strings.Contains(first, "ping-through-invoke") || !strings.Contains(first, "said-by-the-shell") {
		t.Fatalf("the model did not read the invoked tool's and the shell's output: %s", first)
	}
	second := string(reqs[2].Raw)
	if !strings.Contains(second, `shell cat: \"cat\": binary not in capabilities.shell.allow`) {
		t.Errorf("the model did not read the shell refusal: %s", second)
	}
	if !strings.Contains(second, "not in capabilities.network.allow") {
		t.Errorf("the model did not read the message/send refusal: %s", second)
	}
	lines := trace(t, home)
	calls := toolCalls(lines)
	if len(calls) != 4 {
		t.Fatalf("%d tool_call records, want echo-go's and relay-js's three: %v", len(calls), calls)
	}
	if c := calls[0]; c["tool"] != "echo-go" || c["caller"] != "relay-js" || c["status"] != "passed" || c["call_id"] != "c1.1" {
		t.Errorf("the invoked tool's record = %v", c)
	}
	for i, want := range []string{"passed", "failed", "failed"} {
		if c := calls[i+1]; c["tool"] != "relay-js" || c["caller"] != nil || c["status"] != want {
			t.Errorf("relay-js record %d = %v, want status %s", i, c, want)
		}
	}
	var shells []map[string]any
	for _, l := range lines {
		if l["event"] == "shell" {
			shells = append(shells, l)
		}
	}
	if len(shells) != 1 || !strings.HasSuffix(fmt.Sprint(shells[0]["binary"]), "/echo") || shells[0]["command"] != "said-by-the-shell" || shells[0]["exit_code"] != float64(0) {
		t.Fatalf("shell records = %v, want the allowed echo's alone", shells)
	}
}
