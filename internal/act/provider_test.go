package act

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/wasm/cm"
)

// kvRuntime compiles the kv fixture once per test.
func kvRuntime(t testing.TB) (*component.Runtime, *cm.Component) {
	t.Helper()
	rt, err := component.New(cm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	src, err := os.ReadFile("testdata/kv.wat")
	if err != nil {
		t.Fatal(err)
	}
	c, err := rt.CompileText(string(src))
	if err != nil {
		t.Fatal(err)
	}
	return rt, c
}

func kvInstance(t testing.TB, rt *component.Runtime, c *cm.Component) *component.Instance {
	t.Helper()
	inst, err := rt.Instantiate(context.Background(), c, component.Options{Name: "test/kv"})
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// kvComponent lists the fixture's tools on one instance and serves them
// from another, as a capsule does.
func kvComponent(t testing.TB, args map[string]any, opts ...func(*Options)) (*Component, map[string]agent.Tool) {
	t.Helper()
	rt, c := kvRuntime(t)
	lister := kvInstance(t, rt, c)
	defs, err := List(context.Background(), lister)
	lister.Close()
	if err != nil {
		t.Fatal(err)
	}
	files := t.TempDir()
	var made *component.Instance
	o := Options{Name: "test/kv", Info: Info{Name: "kv", Version: "1", DefaultLanguage: "en"}, Language: "fr", SessionArgs: args,
		Files: func() string { return files },
		Instance: func(ctx context.Context) (*component.Instance, error) {
			inst, err := rt.Instantiate(ctx, c, component.Options{Name: "test/kv"})
			made = inst
			return inst, err
		},
		Drop: func() { made.Close(); made = nil }}
	for _, f := range opts {
		f(&o)
	}
	comp, err := New(o, defs)
	if err != nil {
		t.Fatal(err)
	}
	// The session closes before its instance goes, as in a capsule.
	t.Cleanup(func() {
		comp.Close()
		if made != nil {
			made.Close()
		}
	})
	tools := map[string]agent.Tool{}
	for _, tl := range comp.Tools() {
		tools[tl.Def().Name] = tl
	}
	return comp, tools
}

func TestListTools(t *testing.T) {
	_, tools := kvComponent(t, map[string]any{"namespace": "n"})
	if len(tools) != 7 {
		t.Fatalf("%d tools", len(tools))
	}
	echo := tools["echo"].Def()
	if echo.Description != "Renvoie les arguments, en CBOR." {
		t.Fatalf("localized description for fr: %q", echo.Description)
	}
	if !strings.Contains(string(echo.InputSchema), `"required":["text"]`) || echo.Kind != agent.KindTool {
		t.Fatalf("def %+v", echo)
	}
	if d := tools["fail"].Def().Description; d != "Write partial output, then fail with std:timeout." {
		t.Fatalf("plain description %q", d)
	}
}

func call(t *testing.T, tl agent.Tool, input string) agent.Result {
	t.Helper()
	r, err := tl.Call(context.Background(), json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCallRoundTrip(t *testing.T) {
	_, tools := kvComponent(t, map[string]any{"namespace": "n"})
	tests := []struct{ name, in, out string }{
		{"text and int", `{"text":"héllo","n":3}`, `{"n":3,"text":"héllo"}`},
		{"big integer", `{"text":"x","big":18446744073709551616}`, `{"big":18446744073709551616,"text":"x"}`},
		{"float and nested", `{"text":"x","f":[1.5,0.1,-0.0],"o":{"b":null,"a":true}}`, `{"f":[1.5,0.1,-0],"o":{"a":true,"b":null},"text":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, tools["echo"], tt.in)
			if r.Status != agent.StatusPassed || r.Data != tt.out {
				t.Fatalf("got %s %q, want %q", r.Status, r.Data, tt.out)
			}
		})
	}
}

func TestSchemaFailuresNeverReachTheComponent(t *testing.T) {
	comp, tools := kvComponent(t, map[string]any{"namespace": "n"})
	for name, in := range map[string]string{
		"missing required": `{"n":1}`,
		"wrong type":       `{"text":5}`,
		"not an object":    `[1]`,
		"duplicate key":    `{"text":"a","text":"b"}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := call(t, tools["echo"], in)
			if r.Status != agent.StatusFailed || !strings.HasPrefix(r.Data, KindInvalidArgs+": ") || r.Summary != KindInvalidArgs {
				t.Fatalf("%+v", r)
			}
		})
	}
	comp.mu.Lock()
	defer comp.mu.Unlock()
	if comp.inst != nil {
		t.Fatal("a refused call instantiated the component")
	}
}

func TestResultShapes(t *testing.T) {
	comp, tools := kvComponent(t, map[string]any{"namespace": "n"})
	r := call(t, tools["fail"], `{}`)
	if r.Status != agent.StatusFailed || r.Summary != KindTimeout || !strings.HasPrefix(r.Data, "partial output\nstd:timeout: took too long\n") {
		t.Fatalf("fail: %+v", r)
	}
	r = call(t, tools["blob"], `{}`)
	lines := strings.Split(r.Data, "\n")
	if r.Status != agent.StatusPassed || len(lines) != 2 || !strings.Contains(lines[0], "8 bytes of image/png saved as ") || !strings.Contains(lines[1], "3 bytes of application/octet-stream saved as ") {
		t.Fatalf("blob: %+v", r)
	}
	// The PNG also travels as an image (MCP's image items); the untyped
	// part does not.
	if len(r.Images) != 1 || r.Images[0].MediaType != "image/png" || string(r.Images[0].Data) != "\x89PNG\r\n\x1a\n" {
		t.Fatalf("blob images: %+v", r.Images)
	}
	png := strings.TrimSuffix(lines[0][strings.Index(lines[0], "saved as ")+len("saved as "):], "]")
	if b, err := os.ReadFile(png); err != nil || string(b[:4]) != "\x89PNG" || !strings.HasSuffix(png, ".png") {
		t.Fatalf("image file %s: %q %v", png, b, err)
	}
	if v, _ := call(t, tools["stats"], `{}`).Meta(agent.MetaStateEffect); v != "read" {
		t.Fatal("std:read-only did not mark the call read")
	}
	_ = comp
}

func TestSessionLifecycle(t *testing.T) {
	comp, tools := kvComponent(t, map[string]any{"namespace": "n"})
	for range 2 {
		r := call(t, tools["session"], `{}`)
		if r.Status != agent.StatusPassed || r.Data != `"kv-1"` {
			t.Fatalf("session id seen by the tool: %+v", r)
		}
	}
	if r := call(t, tools["stats"], `{}`); r.Data != "opened=1 closed=0" {
		t.Fatalf("one session for both calls: %q", r.Data)
	}
	comp.mu.Lock()
	if err := comp.closeSession(); err != nil {
		t.Fatal(err)
	}
	comp.mu.Unlock()
	if r := call(t, tools["stats"], `{}`); r.Data != "opened=2 closed=1" {
		// stats itself opened the next session after the close.
		t.Fatalf("after close: %q", r.Data)
	}
	if err := comp.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(comp.Log(), "|"); got != "session kv-1 opened|session kv-1 closed|session kv-2 opened|session kv-2 closed" {
		t.Fatalf("log %q", got)
	}
	if _, err := tools["stats"].Call(context.Background(), json.RawMessage(`{}`)); err == nil {
		t.Fatal("a call after Close ran")
	}
}

// TestSessionClosedOnCancel: a session's task ends canceled; Close still
// calls close-session, on a context of its own.
func TestSessionClosedOnCancel(t *testing.T) {
	comp, tools := kvComponent(t, map[string]any{"namespace": "n"})
	ctx, cancel := context.WithCancel(context.Background())
	if r, err := tools["session"].Call(ctx, json.RawMessage(`{}`)); err != nil || r.Status != agent.StatusPassed {
		t.Fatal(r, err)
	}
	cancel()
	if err := comp.Close(); err != nil {
		t.Fatal(err)
	}
	if got := comp.Log(); len(got) != 2 || got[1] != "session kv-1 closed" {
		t.Fatalf("log %q", got)
	}
}

func TestSessionArgsChecked(t *testing.T) {
	comp, tools := kvComponent(t, map[string]any{"wrong": 1})
	r := call(t, tools["session"], `{}`)
	if r.Status != agent.StatusFailed || !strings.Contains(r.Data, "std:invalid-args: the session args from artifacts[test/kv].config do not match") {
		t.Fatalf("%+v", r)
	}
	if len(comp.Log()) != 0 {
		t.Fatalf("open-session was called: %q", comp.Log())
	}
}

func TestNotFoundAndSessionLost(t *testing.T) {
	rt, c := kvRuntime(t)
	inst := kvInstance(t, rt, c)
	defer inst.Close()
	p, err := Bind(inst)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := p.CallTool(context.Background(), "nope", []byte{0xa0}, nil)
	if err != nil || len(ev) != 1 || ev[0].Err == nil || ev[0].Err.Kind != KindNotFound {
		t.Fatalf("%+v %v", ev, err)
	}
	ev, err = p.CallTool(context.Background(), "session", []byte{0xa0}, nil)
	if err != nil || len(ev) != 1 || ev[0].Err.Kind != KindSessionNotFound {
		t.Fatalf("%+v %v", ev, err)
	}
	if _, err := p.OpenSession(context.Background(), nil, nil); !errors.As(err, new(*Error)) || !strings.Contains(err.Error(), "namespace is required") {
		t.Fatalf("open-session without args: %v", err)
	}
}

func TestBindRefusals(t *testing.T) {
	rt, err := component.New(cm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	src, _ := os.ReadFile("../component/testdata/echo-tool.wat")
	c, err := rt.CompileText(string(src))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := rt.Instantiate(context.Background(), c, component.Options{Name: "test/echo"})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	if _, err := Bind(inst); !errors.Is(err, ErrNotACT) {
		t.Fatalf("a murmur tool bound as ACT: %v", err)
	}
}

func TestLocalizedResolve(t *testing.T) {
	l := Localized{Tags: [][2]string{{"en", "hello"}, {"fr-CA", "allo"}, {"de", "hallo"}}}
	for _, tt := range []struct{ lang, def, want string }{
		{"fr-CA", "", "allo"}, {"fr", "", "allo"}, {"es", "de", "hallo"}, {"", "", "hello"}, {"EN", "", "hello"},
	} {
		if got := l.Resolve(tt.lang, tt.def); got != tt.want {
			t.Errorf("Resolve(%q,%q) = %q, want %q", tt.lang, tt.def, got, tt.want)
		}
	}
}

// TestToolTimeoutMS: a tool's own std:timeout-ms stops a call that runs
// past it; the model reads std:timeout with the limit, and the session
// the stopped guest held is recorded lost.
func TestToolTimeoutMS(t *testing.T) {
	comp, tools := kvComponent(t, map[string]any{"namespace": "n"})
	if r := call(t, tools["session"], `{}`); r.Data != `"kv-1"` {
		t.Fatalf("session: %+v", r)
	}
	r := call(t, tools["spin"], `{}`)
	if r.Status != agent.StatusFailed || r.Summary != KindTimeout || !strings.HasPrefix(r.Data, "std:timeout: the call ran past the tool's std:timeout-ms (50ms) and was stopped\nThe tool ran out of time") {
		t.Fatalf("spin: %+v", r)
	}
	// The stopped guest cannot be entered again: the next call runs on a
	// fresh instance, in a new session.
	if r := call(t, tools["stats"], `{}`); r.Status != agent.StatusPassed || r.Data != "opened=1 closed=0" {
		t.Fatalf("the call after the stop: %+v", r)
	}
	if got := comp.Log(); len(got) != 3 || !strings.HasPrefix(got[1], "session kv-1 lost: ") || got[2] != "session kv-1 opened" {
		t.Fatalf("log %q", got)
	}
}

// TestToolTimeoutMSMalformed: a std:timeout-ms that is not an unsigned
// integer refuses the component's tools.
func TestToolTimeoutMSMalformed(t *testing.T) {
	for name, v := range map[string][]byte{"text": {0x62, 0x35, 0x30}, "zero": {0x00}, "negative": {0x20}} {
		_, err := New(Options{Name: "test/kv"}, []ToolDefinition{{Name: "spin", ParametersSchema: `{}`, Metadata: Metadata{{Key: MetaTimeoutMS, Value: v}}}})
		if !errors.Is(err, ErrComponent) || !strings.Contains(err.Error(), "std:timeout-ms must be a CBOR unsigned integer") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSessionCredential: a session arg written as a credential reference
// reaches open-session as the credential's value (ACT-AUTH's session
// args), resolved again at each open so a rotated key reaches the next
// session; the log keeps no value, and one that resolves nowhere fails
// the call without opening a session.
func TestSessionCredential(t *testing.T) {
	key := "s3cret-1"
	secret := func(o *Options) {
		o.Secret = func(name string) (string, error) {
			if name != "KV_TOKEN" {
				return "", errors.New("credentials." + name + " is not set")
			}
			return key, nil
		}
	}
	comp, tools := kvComponent(t, map[string]any{"namespace": "n", "std:bearer-token": "${KV_TOKEN}"}, secret)
	if r := call(t, tools["args"], `{}`); r.Data != `"s3cret-1"` {
		t.Fatalf("open-session's last arg: %+v", r)
	}
	key = "s3cret-2"
	comp.mu.Lock()
	comp.closeSession()
	comp.mu.Unlock()
	if r := call(t, tools["args"], `{}`); r.Data != `"s3cret-2"` {
		t.Fatalf("after rotation: %+v", r)
	}
	if log := strings.Join(comp.Log(), "|"); strings.Contains(log, "s3cret") {
		t.Fatalf("the log holds the value: %s", log)
	}

	comp, tools = kvComponent(t, map[string]any{"namespace": "n", "std:bearer-token": "${NOPE}"}, secret)
	r := call(t, tools["args"], `{}`)
	if r.Status != agent.StatusFailed || !strings.Contains(r.Data, `std:capability-denied: the session arg "std:bearer-token" of artifacts[test/kv].config names the credential ${NOPE}, which does not resolve: credentials.NOPE is not set`) {
		t.Fatalf("unresolved: %+v", r)
	}
	if len(comp.Log()) != 0 {
		t.Fatalf("a session was opened: %q", comp.Log())
	}

	// Without a resolver the reference is handed over as text.
	_, tools = kvComponent(t, map[string]any{"namespace": "n", "std:bearer-token": "${KV_TOKEN}"})
	if r := call(t, tools["args"], `{}`); r.Data != `"${KV_TOKEN}"` {
		t.Fatalf("no resolver: %+v", r)
	}
}
