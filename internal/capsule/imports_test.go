package capsule_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/wasm/cm"
)

// publishWAT compiles testdata/<file> (with each old→new of subst
// replaced first) into a tool artifact named murmur/<name> and publishes
// it to the global store.
func publishWAT(t *testing.T, root, file, name string, subst ...string) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := cm.Wat2Wasm(strings.NewReplacer(subst...).Replace(string(text)))
	if err != nil {
		t.Fatal(err)
	}
	own := "name: " + name + "\nversion: \"0.1.0\"\ndescription: Test tool " + name + ".\nruntime: tool\nrequires_files: [" + name + ".wasm]\n"
	publishDir(t, root, name, map[string][]byte{name + ".wasm": wasm, "murmur.yaml": []byte(own)})
}

// publishRelay publishes testdata/relay.wat as murmur/<name>, a tool that
// invokes callee through murmur:tool-registry/invoke.
func publishRelay(t *testing.T, root, name, callee string) {
	t.Helper()
	publishWAT(t, root, "relay.wat", name, "%CALLEE%", callee, "%LEN%", strconv.Itoa(len(callee)))
}

// runCapsule writes manifest (with %ENDPOINT% set to a provider that asks
// for one call of tool with input {} and then answers), installs and runs
// it with HOME at home, and returns what the model read back from the tool
// and the trace.
func runCapsule(t *testing.T, root, home, manifest, tool string) (string, []map[string]any) {
	t.Helper()
	return runCall(t, root, home, manifest, tool, `{}`)
}

// runCall is runCapsule with the call's input.
func runCall(t *testing.T, root, home, manifest, tool, input string) (string, []map[string]any) {
	t.Helper()
	prov := providertest.Start(t,
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: tool, Input: input}}, InputTokens: 10, OutputTokens: 5},
		providertest.Step{Text: "Done.", InputTokens: 20, OutputTokens: 3},
	)
	manifestPath := installManifest(t, root, manifest, prov.URL)
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "run it"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	reqs := prov.Requests()
	if len(reqs) != 2 {
		t.Fatalf("provider saw %d requests, want 2", len(reqs))
	}
	return string(reqs[1].Raw), trace(t, home)
}

// importsHome is a fresh HOME with the driver published.
func importsHome(t *testing.T) (root, home string) {
	t.Helper()
	root = t.TempDir()
	home = filepath.Join(root, "home")
	t.Setenv("HOME", home)
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	return root, home
}

const invokeManifest = `name: relay
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      keyless: true
  - name: murmur/relay
    version: "0.1.0"
  - name: murmur/shx
    version: "0.1.0"
capabilities:
  shell:
    allow: [echo]
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 3
`

// toolCalls returns the trace's tool_call records.
func toolCalls(lines []map[string]any) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["event"] == "tool_call" {
			out = append(out, l)
		}
	}
	return out
}

// TestToolRegistryInvoke: a tool component's murmur:tool-registry/invoke
// runs another tool of the capsule through the task's dispatch path — the
// callee (a tool that runs echo through murmur:shell/execute) works under
// its own grants, its output reaches the caller and through it the model,
// and its tool_call record names the caller. A call back into a tool on
// the chain is refused as the import's err with nothing run; an unknown
// name is the same error result the model would get.
func TestToolRegistryInvoke(t *testing.T) {
	t.Run("callee runs", func(t *testing.T) {
		root, home := importsHome(t)
		publishRelay(t, root, "relay", "shx")
		publishShellExec(t, root)
		got, lines := runCapsule(t, root, home, invokeManifest, "relay")
		if !strings.Contains(got, "from-wasm") {
			t.Fatalf("the callee's output did not reach the model through the caller: %s", got)
		}
		calls := toolCalls(lines)
		if len(calls) != 2 {
			t.Fatalf("%d tool_call records, want the callee's and the caller's: %v", len(calls), calls)
		}
		inner, outer := calls[0], calls[1]
		if inner["tool"] != "shx" || inner["caller"] != "relay" || inner["status"] != "passed" || inner["call_id"] != "c1.1" {
			t.Errorf("callee record = %v", inner)
		}
		if outer["tool"] != "relay" || outer["caller"] != nil || outer["status"] != "passed" {
			t.Errorf("caller record = %v", outer)
		}
		shells := 0
		for _, l := range lines {
			if l["event"] == "shell" {
				shells++
			}
		}
		if shells != 1 {
			t.Errorf("%d shell records, want the callee's one", shells)
		}
	})
	t.Run("cycle refused", func(t *testing.T) {
		root, home := importsHome(t)
		publishRelay(t, root, "relay", "relay")
		publishShellExec(t, root)
		got, lines := runCapsule(t, root, home, invokeManifest, "relay")
		if !strings.Contains(got, "already on the call chain") {
			t.Fatalf("the model did not read the refusal: %s", got)
		}
		if calls := toolCalls(lines); len(calls) != 1 || calls[0]["status"] != "error" {
			t.Errorf("tool_call records = %v, want the caller's alone, status error", calls)
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		root, home := importsHome(t)
		publishRelay(t, root, "relay", "nosuch")
		publishShellExec(t, root)
		got, lines := runCapsule(t, root, home, invokeManifest, "relay")
		if !strings.Contains(got, "nosuch: no such tool") {
			t.Fatalf("the model did not read the callee's error: %s", got)
		}
		calls := toolCalls(lines)
		if len(calls) != 2 || calls[0]["tool"] != "nosuch" || calls[0]["caller"] != "relay" || calls[0]["status"] != "error" {
			t.Errorf("tool_call records = %v", calls)
		}
	})
}

const relayGoManifest = `name: relay
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      keyless: true
  - name: murmur/relay-go
    version: "0.1.0"
  - name: murmur/file-go
    version: "0.1.0"
    capabilities:
      filesystem:
        scope: notes
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 3
`

// TestGoGuestInvoke: a Go guest built with the SDK (examples/relay-go)
// calls tool.Invoke, and the callee (file-go) writes under its own
// filesystem.scope, not the caller's: the file lands in notes/ of the
// work folder, and its tool_call record names relay-go as the caller.
func TestGoGuestInvoke(t *testing.T) {
	root, home := importsHome(t)
	publish(t, root, "../../examples/relay-go", "relay-go")
	publish(t, root, "../../examples/file-go", "file-go")
	got, lines := runCall(t, root, home, relayGoManifest, "relay-go",
		`{"tool":"file-go","input":{"op":"write","path":"x.txt","content":"via relay"}}`)
	if !strings.Contains(got, "wrote x.txt") {
		t.Fatalf("the callee's result did not reach the model: %s", got)
	}
	calls := toolCalls(lines)
	if len(calls) != 2 || calls[0]["tool"] != "file-go" || calls[0]["caller"] != "relay-go" || calls[0]["state_effect"] != "mutate" {
		t.Fatalf("tool_call records = %v", calls)
	}
	written, _ := filepath.Glob(filepath.Join(root, "cap", "workdir", "*", "notes", "x.txt"))
	if len(written) != 1 {
		t.Errorf("the callee did not write under its own scope: %v", written)
	}
}
