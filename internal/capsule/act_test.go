package capsule_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/murmur/mur/internal/act"
	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/mcp"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/wasm/cm"
)

// publishACT builds internal/act's kv fixture, with an act:component
// section, into an artifact and publishes it as murmur/kv.
func publishACT(t *testing.T, root string) {
	t.Helper()
	text, err := os.ReadFile("../act/testdata/kv.wat")
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := cm.Wat2Wasm(string(text))
	if err != nil {
		t.Fatal(err)
	}
	sec, err := act.EncodeSection(act.Info{Name: "kv", Version: "0.1.0", Description: "A key-value fixture."})
	if err != nil {
		t.Fatal(err)
	}
	publishDir(t, root, "kv", map[string][]byte{
		"kv.wasm":     act.AppendSection(wasm, sec),
		"murmur.yaml": []byte("name: kv\nversion: \"0.1.0\"\ndescription: An ACT component.\nruntime: tool\nrequires_files: [kv.wasm]\n"),
	})
}

const actManifest = `name: actcap
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      keyless: true
  - name: murmur/kv
    version: "0.1.0"
    config:
      namespace: notes
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 4
`

// TestACTToolsThroughRun: an ACT component is a capsule's tools — each
// listed tool offered to the model, its calls run with the config's
// session, its results and errors read back, a schema failure refused
// by the component's parameters-schema before the component runs (a type
// the loop's own required-field check does not see), the session closed at the end — and every
// call has the tool_call record any tool gets.
func TestACTToolsThroughRun(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	publishACT(t, root)
	prov := providertest.Start(t,
		providertest.Step{Calls: []providertest.Call{
			{ID: "c1", Name: "echo", Input: `{"text":"hi","n":18446744073709551616}`},
			{ID: "c2", Name: "session", Input: `{}`},
		}, InputTokens: 10, OutputTokens: 5},
		providertest.Step{Calls: []providertest.Call{
			{ID: "c3", Name: "echo", Input: `{"text":5}`},
			{ID: "c4", Name: "fail", Input: `{}`},
			{ID: "c5", Name: "session", Input: `{}`},
		}, InputTokens: 20, OutputTokens: 5},
		providertest.Step{Text: "Done.", InputTokens: 30, OutputTokens: 3},
	)
	manifestPath := installManifest(t, root, actManifest, prov.URL)
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "use the store"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	reqs := prov.Requests()
	if len(reqs) != 3 {
		t.Fatalf("provider saw %d requests, want 3", len(reqs))
	}
	first := string(reqs[0].Raw)
	for _, name := range []string{`"echo"`, `"fail"`, `"session"`, `"blob"`, `"stats"`, `Echo the arguments back, as CBOR.`} {
		if !strings.Contains(first, name) {
			t.Errorf("the model was not offered %s: %s", name, first)
		}
	}
	second := string(reqs[1].Raw)
	for _, want := range []string{`{\"n\":18446744073709551616,\"text\":\"hi\"}`, `\"kv-1\"`} {
		if !strings.Contains(second, want) {
			t.Errorf("second request lacks %s: %s", want, second)
		}
	}
	third := string(reqs[2].Raw)
	for _, want := range []string{`std:invalid-args: the arguments do not match the tool's parameters-schema: at /text: got number, want string`, `partial output\nstd:timeout: took too long`, `\"kv-1\"`} {
		if !strings.Contains(third, want) {
			t.Errorf("third request lacks %s: %s", want, third)
		}
	}
	calls := map[string][]string{}
	for _, l := range trace(t, home) {
		if l["event"] == "tool_call" {
			name, _ := l["tool"].(string)
			status, _ := l["status"].(string)
			calls[name] = append(calls[name], status)
		}
	}
	if got := strings.Join(calls["echo"], ","); got != "passed,failed" {
		t.Errorf("echo tool_call statuses %q", got)
	}
	if got := strings.Join(calls["fail"], ","); got != "failed" {
		t.Errorf("fail tool_call statuses %q", got)
	}
	var logs []string
	filepath.WalkDir(filepath.Join(home, ".murmur/records"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "kv.sessions.log" {
			logs = append(logs, p)
		}
		return nil
	})
	if len(logs) != 1 {
		t.Fatalf("session logs %v", logs)
	}
	if b, _ := os.ReadFile(logs[0]); string(b) != "session kv-1 opened\nsession kv-1 closed\n" {
		t.Fatalf("session log %q", b)
	}
}

const actGoManifest = `name: kvcap
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      keyless: true
  - name: murmur/act-kv-go
    version: "0.1.0"
    config:
      namespace: notes
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 4
`

// TestACTGoGuestThroughRun: the SDK's example, built by tools/guest and
// packed by mur build, is a capsule's tools with its session: a value put
// in one turn is read in the next, and the session is closed at the end.
func TestACTGoGuestThroughRun(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	publish(t, root, "../../examples/act-kv-go", "act-kv-go")
	prov := providertest.Start(t,
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "put", Input: `{"key":"color","value":"teal"}`}}, InputTokens: 10, OutputTokens: 5},
		providertest.Step{Calls: []providertest.Call{{ID: "c2", Name: "get", Input: `{"key":"color"}`}, {ID: "c3", Name: "list", Input: `{}`}}, InputTokens: 20, OutputTokens: 5},
		providertest.Step{Text: "teal", InputTokens: 30, OutputTokens: 3},
	)
	manifestPath := installManifest(t, root, actGoManifest, prov.URL)
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "remember teal"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	reqs := prov.Requests()
	if len(reqs) != 3 {
		t.Fatalf("provider saw %d requests, want 3", len(reqs))
	}
	if got := string(reqs[1].Raw); !strings.Contains(got, "stored color in notes") {
		t.Errorf("put's result: %s", got)
	}
	got := string(reqs[2].Raw)
	for _, want := range []string{`{"content":"teal","role":"tool","tool_call_id":"c2"}`, `{\"keys\":[\"color\"],\"namespace\":\"notes\",\"values\":{\"color\":\"teal\"}}`} {
		if !strings.Contains(got, want) {
			t.Errorf("third request lacks %s: %s", want, got)
		}
	}
	var logs []string
	filepath.WalkDir(filepath.Join(home, ".murmur/records"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "act-kv-go.sessions.log" {
			logs = append(logs, p)
		}
		return nil
	})
	if len(logs) != 1 {
		t.Fatalf("session logs %v", logs)
	}
	if b, _ := os.ReadFile(logs[0]); string(b) != "session notes-1 opened\nsession notes-1 closed\n" {
		t.Fatalf("session log %q", b)
	}
}

// TestPolicyHookDeniesACTCall: an on-tool-call policy hook gates an ACT
// component's calls as it gates every tool's. The denied call runs
// nothing — the component is never instantiated, so no session is opened
// and no session log is written — the model reads the reason, and the
// trace records the denial; the component's other tools still run.
func TestPolicyHookDeniesACTCall(t *testing.T) {
	for name, tc := range map[string]struct {
		steps   []providertest.Step
		session string // the session log, "" for none
	}{
		"only the denied call": {steps: []providertest.Step{
			{Calls: []providertest.Call{{ID: "c1", Name: "echo", Input: `{"text":"hi"}`}}, InputTokens: 10, OutputTokens: 5},
			{Text: "Done.", InputTokens: 20, OutputTokens: 3},
		}},
		"then an allowed call": {steps: []providertest.Step{
			{Calls: []providertest.Call{{ID: "c1", Name: "echo", Input: `{"text":"hi"}`}}, InputTokens: 10, OutputTokens: 5},
			{Calls: []providertest.Call{{ID: "c2", Name: "stats", Input: `{}`}}, InputTokens: 20, OutputTokens: 5},
			{Text: "Done.", InputTokens: 30, OutputTokens: 3},
		}, session: "session kv-1 opened\nsession kv-1 closed\n"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			home := filepath.Join(root, "home")
			t.Setenv("HOME", home)
			publish(t, root, "../../drivers/driver-openai", "driver-openai")
			publishACT(t, root)
			publishHook(t, root, hookDecl{name: "gate", contract: "binding: on-tool-call\ncommit_policy: deny\n"})
			prov := providertest.Start(t, tc.steps...)
			m := strings.Replace(actManifest, "inference:", "  - name: murmur/gate\n    version: \"0.1.0\"\n    runtime: hook\n"+config(`{"deny_tools":["echo"]}`)+"inference:", 1)
			manifestPath := installManifest(t, root, m, prov.URL)
			var stdout, stderr bytes.Buffer
			if code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "use the store"}, nil, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
			reqs := prov.Requests()
			if raw := string(reqs[1].Raw); !strings.Contains(raw, "denied by the policy hook murmur/gate") || !strings.Contains(raw, "the tool echo is not allowed by hook-probe") || strings.Contains(raw, `"content":"{\"text\":\"hi\"}"`) {
				t.Fatalf("the model did not read the denial alone: %s", raw)
			}
			var denied []map[string]any
			for _, l := range trace(t, home) {
				if l["event"] == "hook_denied" {
					denied = append(denied, l)
				}
			}
			if len(denied) != 1 || denied[0]["tool"] != "echo" || denied[0]["handler"] != "on-tool-call" {
				t.Fatalf("hook_denied = %v", denied)
			}
			var logs []string
			filepath.WalkDir(filepath.Join(home, ".murmur/records"), func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == "kv.sessions.log" {
					logs = append(logs, p)
				}
				return nil
			})
			if tc.session == "" {
				if len(logs) != 0 {
					b, _ := os.ReadFile(logs[0])
					t.Fatalf("the denied call opened a session: %s", b)
				}
				return
			}
			if len(logs) != 1 {
				t.Fatalf("session logs %v", logs)
			}
			if b, _ := os.ReadFile(logs[0]); string(b) != tc.session {
				t.Fatalf("session log %q", b)
			}
			if raw := string(reqs[2].Raw); !strings.Contains(raw, "opened=1 closed=0") {
				t.Fatalf("the allowed stats call: %s", raw)
			}
		})
	}
}

// TestACTTimeoutMSThroughRun: a tool's std:timeout-ms stops its call in
// a capsule too; the model reads std:timeout, and the next call of the
// component runs on a fresh instance with a new session (the stopped
// guest cannot be entered again), each recorded in the session log.
func TestACTTimeoutMSThroughRun(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	publishACT(t, root)
	prov := providertest.Start(t,
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "spin", Input: `{}`}}, InputTokens: 10, OutputTokens: 5},
		providertest.Step{Calls: []providertest.Call{{ID: "c2", Name: "stats", Input: `{}`}}, InputTokens: 20, OutputTokens: 5},
		providertest.Step{Text: "Done.", InputTokens: 30, OutputTokens: 3},
	)
	manifestPath := installManifest(t, root, actManifest, prov.URL)
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "spin"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	reqs := prov.Requests()
	if raw := string(reqs[1].Raw); !strings.Contains(raw, "std:timeout: the call ran past the tool's std:timeout-ms (50ms) and was stopped") {
		t.Fatalf("the model did not read std:timeout: %s", raw)
	}
	if raw := string(reqs[2].Raw); !strings.Contains(raw, "opened=1 closed=0") {
		t.Fatalf("the call after the stop: %s", raw)
	}
	var logs []string
	filepath.WalkDir(filepath.Join(home, ".murmur/records"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "kv.sessions.log" {
			logs = append(logs, p)
		}
		return nil
	})
	if len(logs) != 1 {
		t.Fatalf("session logs %v", logs)
	}
	b, _ := os.ReadFile(logs[0])
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 || lines[0] != "session kv-1 opened" || !strings.HasPrefix(lines[1], "session kv-1 lost: ") || lines[2] != "session kv-1 opened" || lines[3] != "session kv-1 closed" {
		t.Fatalf("session log %q", b)
	}
}

// TestACTSessionCredential: an ACT entry's config value written as a
// credential reference reaches open-session as the credential, from
// config.yaml or, with W-SEC-027 at launch, from the environment; a
// reference that resolves nowhere refuses the launch with E-MAN-003
// naming the field, before any session.
func TestACTSessionCredential(t *testing.T) {
	for name, from := range map[string]string{"env": "env", "config": "config", "unresolved": ""} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			home := filepath.Join(root, "home")
			t.Setenv("HOME", home)
			set := from != ""
			want := "s3cret-" + from
			switch from {
			case "env":
				t.Setenv("KV_TOKEN", want)
			case "config":
				var out bytes.Buffer
				if code := cli.Main(context.Background(), []string{"config", "set", "-g", "credentials.KV_TOKEN", want}, nil, &out, &out); code != 0 {
					t.Fatalf("config set: exit %d: %s", code, out.String())
				}
			}
			publish(t, root, "../../drivers/driver-openai", "driver-openai")
			publishACT(t, root)
			prov := providertest.Start(t,
				providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "args", Input: `{}`}}, InputTokens: 10, OutputTokens: 5},
				providertest.Step{Text: "Done.", InputTokens: 20, OutputTokens: 3},
			)
			m := strings.Replace(actManifest, "      namespace: notes\n", "      namespace: notes\n      \"std:bearer-token\": ${KV_TOKEN}\n", 1)
			manifestPath := installManifest(t, root, m, prov.URL)
			var stdout, stderr bytes.Buffer
			code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "use the store"}, nil, &stdout, &stderr)
			if !set {
				if code != 2 || !strings.Contains(stderr.String(), "E-MAN-003") || !strings.Contains(stderr.String(), "artifacts[1].config.std:bearer-token") || !strings.Contains(stderr.String(), "KV_TOKEN is set in neither credentials.KV_TOKEN") {
					t.Fatalf("exit %d\n%s", code, stderr.String())
				}
				if n := len(prov.Requests()); n != 0 {
					t.Fatalf("%d requests before the refusal", n)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
			if raw := string(prov.Requests()[1].Raw); !strings.Contains(raw, `\"`+want+`\"`) {
				t.Fatalf("open-session did not get the credential: %s", raw)
			}
			warned := regexp.MustCompile(`(?m)^W-SEC-027 \S+:\d+:\d+ artifacts\[1\]\.config\.std:bearer-token: artifact "\S+" takes KV_TOKEN from the environment`).MatchString(stderr.String())
			if warned != (from == "env") {
				t.Errorf("from %s: W-SEC-027 printed = %v\n%s", from, warned, stderr.String())
			}
			if strings.Contains(stderr.String(), want) {
				t.Errorf("the credential's value reached stderr:\n%s", stderr.String())
			}
		})
	}
}

// TestACTImageThroughMCP: an ACT component's image part reaches an MCP
// client of the capsule's tool server (the one mur mcp and a process
// harness use) as an image item after the call's text, through the
// session's dispatch path; the untyped part stays a file and a line.
func TestACTImageThroughMCP(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	publishACT(t, root)
	prov := providertest.Start(t)
	manifestPath := installManifest(t, root, actManifest, prov.URL)
	ctx := context.Background()
	s, err := capsule.Open(ctx, capsule.Options{Manifest: manifestPath})
	if err != nil {
		t.Fatal(err)
	}
	l, err := mcp.ServeLoopback(s, mcp.Options{Name: "actcap"})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: l.URL, HTTPClient: &http.Client{Transport: bearer(l.Token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "blob", Arguments: map[string]any{}})
	cs.Close()
	l.Close()
	if cerr := s.Close(capsule.Outcome{Status: agent.ExitOK}); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil || res.IsError || len(res.Content) != 2 {
		t.Fatalf("blob: %+v %v", res, err)
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok || !strings.Contains(text.Text, "8 bytes of image/png saved as ") || !strings.Contains(text.Text, "3 bytes of application/octet-stream saved as ") {
		t.Fatalf("text item %#v", res.Content[0])
	}
	img, ok := res.Content[1].(*sdk.ImageContent)
	if !ok || img.MIMEType != "image/png" || string(img.Data) != "\x89PNG\r\n\x1a\n" {
		t.Fatalf("image item %#v", res.Content[1])
	}
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
