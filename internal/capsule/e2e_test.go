package capsule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/guesttest"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main() // shell tools re-exec this binary as the sandbox init
	os.Exit(m.Run())
}

func mur(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	if code := cli.Main(context.Background(), args, nil, &out, &errb); code != 0 {
		t.Fatalf("mur %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String()
}

// publish packs an artifact from its source manifest and built component
// and publishes it to the global store under scope murmur.
func publish(t *testing.T, root, srcDir, name string) {
	t.Helper()
	files := map[string][]byte{}
	for from, to := range map[string]string{filepath.Join(srcDir, "murmur.yaml"): "murmur.yaml", guesttest.File(t, name): name + ".wasm"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		files[to] = b
	}
	publishDir(t, root, name, files)
}

// publishDir writes files into root/src/<name> (those named in exec with
// mode 0755), builds the artifact and publishes it to the global store
// under scope murmur.
func publishDir(t *testing.T, root, name string, files map[string][]byte, exec ...string) {
	t.Helper()
	if home := os.Getenv("HOME"); strings.HasPrefix(home, root+string(filepath.Separator)) {
		shareCompileCache(t, home)
	}
	dir := filepath.Join(root, "src", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, b := range files {
		mode := os.FileMode(0o644)
		if slices.Contains(exec, file) {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(dir, file), b, mode); err != nil {
			t.Fatal(err)
		}
	}
	zip := filepath.Join(root, name+".mur.zip")
	mur(t, root, "build", dir, "-o", zip)
	mur(t, root, "publish", zip, "--scope", "murmur")
}

const e2eManifest = `name: e2e
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      api_key: ${E2E_KEY}
  - name: murmur/file-go
    version: "0.1.0"
  - name: murmur/greet
    version: "0.1.0"
    config:
      greeting: Howdy
capabilities:
  shell:
    allow: [sh]
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 5
`

func trace(t *testing.T, home string) []map[string]any {
	t.Helper()
	var found string
	filepath.WalkDir(filepath.Join(home, ".murmur/records"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "trace.jsonl" {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatal("no trace.jsonl written")
	}
	b, err := os.ReadFile(found)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("trace line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// e2eHome publishes the driver, the file tool and the native tool into a
// fresh HOME and returns the root directory.
func e2eHome(t *testing.T, envKey string) (root, home string) {
	t.Helper()
	root = t.TempDir()
	home = filepath.Join(root, "home")
	t.Setenv("HOME", home)
	t.Setenv("E2E_KEY", envKey)
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	publish(t, root, "../../examples/file-go", "file-go")
	publishNative(t, root)
	return root, home
}

// installCapsule writes the e2e capsule pointing at the provider and
// installs its artifacts; it returns the manifest's path.
func installCapsule(t *testing.T, root string, prov *providertest.Server) string {
	t.Helper()
	return installManifest(t, root, e2eManifest, prov.URL)
}

// installManifest writes manifest, its %ENDPOINT% set to endpoint, as
// root/cap/murmur.yaml and installs its artifacts; it returns the
// manifest's path.
func installManifest(t *testing.T, root, manifest, endpoint string) string {
	t.Helper()
	capDir := filepath.Join(root, "cap")
	if err := os.MkdirAll(capDir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifestPath := filepath.Join(capDir, "murmur.yaml")
	if err := os.WriteFile(manifestPath, []byte(strings.ReplaceAll(manifest, "%ENDPOINT%", endpoint)), 0o644); err != nil {
		t.Fatal(err)
	}
	mur(t, capDir, "install")
	return manifestPath
}

// TestRunEndToEnd builds, publishes and installs the real driver and a
// real tool component, then runs a capsule whose model (a scripted
// provider on loopback) asks for a WASM tool call and a sandboxed shell
// command. The key travels only from the config file through the gateway.
func TestRunEndToEnd(t *testing.T) {
	root, home := e2eHome(t, "")
	const key = "sk-e2e-secret-0123456789"
	mur(t, root, "config", "set", "-g", "credentials.E2E_KEY", key)

	prov := providertest.Start(t,
		providertest.Step{Text: "Writing it.", Calls: []providertest.Call{{ID: "c1", Name: "file-go", Input: `{"op":"write","path":"out.txt","content":"hi there"}`}}, InputTokens: 10, OutputTokens: 5},
		providertest.Step{Calls: []providertest.Call{{ID: "c2", Name: "sh", Input: `{"command":"cat out.txt; echo; env"}`}}, InputTokens: 20, OutputTokens: 5},
		providertest.Step{Calls: []providertest.Call{{ID: "c3", Name: "greet", Input: `{"who":"world"}`}}, InputTokens: 25, OutputTokens: 5},
		providertest.Step{Text: "All done.", InputTokens: 30, OutputTokens: 3},
	)
	manifestPath := installCapsule(t, root, prov)
	capDir := filepath.Dir(manifestPath)

	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "write out.txt"}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "Writing it.") || !strings.Contains(stdout.String(), "All done.") {
		t.Errorf("streamed text = %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "status: ok") {
		t.Errorf("status line missing: %s", stderr.String())
	}

	reqs := prov.Requests()
	if len(reqs) != 4 {
		t.Fatalf("provider saw %d requests, want 4", len(reqs))
	}
	for _, r := range reqs {
		if r.Path != "/v1/chat/completions" {
			t.Errorf("request path %q", r.Path)
		}
		if got := r.Header.Values("Authorization"); len(got) != 1 || got[0] != "Bearer "+key {
			t.Errorf("Authorization = %q: the gateway attaches exactly one key header", got)
		}
	}
	// The shell command's output (it printed its whole environment) went
	// back to the model in the third request: the key must not be in it.
	if raw := string(reqs[2].Raw); strings.Contains(raw, key) || !strings.Contains(raw, "hi there") {
		t.Errorf("third request: key leaked=%v, tool output present=%v", strings.Contains(raw, key), strings.Contains(raw, "hi there"))
	}
	// Row 2 of the shell environment: the session's identity and the
	// primary inference choice.
	for _, want := range []string{"MURMUR_CAPSULE_NAME=e2e", "MURMUR_SESSION_ID=ses_", "MURMUR_INFERENCE_MODEL=gpt-4o-mini", "MURMUR_INFERENCE_DRIVER=murmur/driver-openai"} {
		if !strings.Contains(string(reqs[2].Raw), want) {
			t.Errorf("shell environment lacks %s", want)
		}
	}

	lines := trace(t, home)
	types := map[string]int{}
	for _, l := range lines {
		types[l["event"].(string)]++
		b, _ := json.Marshal(l)
		if strings.Contains(string(b), key) {
			t.Errorf("trace line %s carries the key", l["event"])
		}
	}
	// The native tool got its JSON input as its argument and its config
	// in MURMUR_ARTIFACT_CONFIG, and ran contained like a shell command.
	if raw := string(reqs[3].Raw); !strings.Contains(raw, `Howdy, world`) {
		t.Errorf("native tool output missing from the fourth request: %s", raw)
	}
	for ev, n := range map[string]int{"session_start": 1, "task_start": 1, "inference": 4, "tool_call": 3, "task_end": 1, "session_end": 1} {
		if types[ev] != n {
			t.Errorf("trace has %d %s lines, want %d (all: %v)", types[ev], ev, n, types)
		}
	}
	if types["shell"] < 1 {
		t.Errorf("no shell line: %v", types)
	}
	if c, ok := lines[0]["containment"].(map[string]any); !ok || c["achieved"] == "" {
		t.Errorf("session_start.containment = %v", lines[0]["containment"])
	}
	if g, ok := lines[0]["effective_grants"].(map[string]any); !ok || g["capsule"] != "e2e" {
		t.Errorf("session_start.effective_grants = %v", lines[0]["effective_grants"])
	}
	gws := lines[0]["gateways"].([]any)
	if g := gws[0].(map[string]any); g["credential_source"] != "config" || g["artifact"] != "murmur/driver-openai" {
		t.Errorf("session_start.gateways = %v", gws)
	}
	for _, l := range lines {
		if l["event"] == "tool_call" && l["tool"] == "file-go" {
			if l["state_effect"] != "mutate" || l["resource_id"] != "file:out.txt" {
				t.Errorf("file-go tool_call = %v", l)
			}
		}
	}
	work, _ := filepath.Glob(filepath.Join(capDir, "workdir", "ses_*", "out.txt"))
	if len(work) != 1 {
		t.Fatalf("work folder file: %v", work)
	}
	if b, _ := os.ReadFile(work[0]); string(b) != "hi there" {
		t.Errorf("out.txt = %q", b)
	}
}

// TestRunRefusesBeforeAnySession: refusals leave no session directory.
func TestRunRefusesBeforeAnySession(t *testing.T) {
	cases := []struct {
		name, manifest, code string
	}{
		{"invalid manifest", "name: x\nversion: \"1\"\nregistry: foo\n", "E-MAN-003"},
		{"no driver", "name: x\nversion: \"1\"\n", "E-MAN-003"},
		{"hook", "name: x\nversion: \"1\"\nartifacts:\n  - name: murmur/driver-openai\n    version: \"0.1.0\"\n    runtime: driver\n    gateway:\n      endpoint: http://127.0.0.1:1/v1\n      keyless: true\n  - name: murmur/hook-debug\n    version: \"0.1.0\"\n    runtime: hook\ninference:\n  model: m\n  driver:\n    artifact: murmur/driver-openai\n", "E-RUN-006"},
		{"driver not installed", "name: x\nversion: \"1\"\nartifacts:\n  - name: murmur/driver-openai\n    version: \"0.1.0\"\n    runtime: driver\n    gateway:\n      endpoint: http://127.0.0.1:1/v1\n      keyless: true\ninference:\n  model: m\n  driver:\n    artifact: murmur/driver-openai\n", "E-RUN-006"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			t.Setenv("HOME", filepath.Join(root, "home"))
			p := filepath.Join(root, "murmur.yaml")
			os.WriteFile(p, []byte(c.manifest), 0o644)
			var stdout, stderr bytes.Buffer
			code := cli.Main(context.Background(), []string{"run", "--manifest", p, "--task", "x"}, nil, &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), c.code) {
				t.Fatalf("exit %d, stderr %q; want 2 with %s", code, stderr.String(), c.code)
			}
			for _, d := range []string{filepath.Join(root, "home", ".murmur", "records"), filepath.Join(root, "workdir")} {
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					t.Errorf("%s exists after a refusal", d)
				}
			}
		})
	}
}

// publishNative publishes murmur/greet: a native tool (a shell script)
// that greets from its config.
func publishNative(t *testing.T, root string) {
	t.Helper()
	publishDir(t, root, "greet", map[string][]byte{
		"murmur.yaml": []byte(`name: greet
version: "0.1.0"
description: Greets someone.
runtime: tool
implementation: native
requires_files: [greet.sh]
input_schema:
  type: object
  properties:
    who: {type: string}
`),
		"greet.sh": []byte("#!/bin/sh\n" +
			"g=$(printf '%s' \"$MURMUR_ARTIFACT_CONFIG\" | sed 's/.*\"greeting\":\"\\([^\"]*\\)\".*/\\1/')\n" +
			"w=$(printf '%s' \"$1\" | sed 's/.*\"who\":\"\\([^\"]*\\)\".*/\\1/')\n" +
			"echo \"$g, $w\"\n"),
	}, "greet.sh")
}

// TestRunCredentialRejected: a 401 from the serving driver's upstream ends
// the task with E-RUN-027 and exit status 1.
func TestRunCredentialRejected(t *testing.T) {
	root, _ := e2eHome(t, "sk-from-env")
	prov := providertest.Start(t, providertest.Step{Status: 401, Body: providertest.ErrorBody("invalid api key")})
	manifestPath := installCapsule(t, root, prov)
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "x"}, nil, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "E-RUN-027") {
		t.Fatalf("exit %d, stderr:\n%s\nwant 1 with E-RUN-027", code, stderr.String())
	}
	// The key came from the environment: W-SEC-027 says so.
	if !strings.Contains(stderr.String(), "W-SEC-027") {
		t.Errorf("no W-SEC-027 for a key read from the environment:\n%s", stderr.String())
	}
	if n := len(prov.Requests()); n != 1 {
		t.Errorf("a rejected credential was retried: %d requests", n)
	}
}

// shareCompileCache links home's compile cache to one folder every test of
// this package (and every later run on this machine) shares. Compiling
// the driver, the tools and the hooks is most of a scenario's CPU — under
// -race three quarters of it, all in wasmtime's compiler — and the cache
// is keyed by each component's digest, wasmtime's version and the engine's
// settings, so a shared entry is never stale. A home that already has a
// cache keeps it (a test that wants a cold compile makes its own).
func shareCompileCache(t *testing.T, home string) {
	t.Helper()
	link := filepath.Join(home, ".murmur", "cache")
	if _, err := os.Lstat(link); err == nil {
		return
	}
	shared := filepath.Join(os.TempDir(), "mur-test-compile-cache-capsule")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
}
