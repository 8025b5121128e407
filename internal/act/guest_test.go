package act

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/guesttest"
	"github.com/murmur/mur/internal/wasm/cm"
)

// guestKV compiles examples/act-kv-go as tools/guest/build.sh built it
// (make guests); the test skips without it unless MUR_REQUIRE_GUESTS.
func guestKV(t *testing.T) []byte {
	t.Helper()
	return guesttest.Read(t, "act-kv-go")
}

// TestGoGuestKV: the SDK's example, built by the repository's Go guest
// toolchain, carries its section, lists its tools and keeps a store per
// session across calls; the host closes the session and the component
// then no longer knows it.
func TestGoGuestKV(t *testing.T) {
	wasm := guestKV(t)
	info, err := ReadSection(wasm)
	if err != nil || info.Name != "act-kv-go" || info.Version != "0.1.0" || !strings.Contains(info.Description, "key-value store per session") {
		t.Fatalf("section %+v %v", info, err)
	}
	rt, err := component.New(cm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	c, err := rt.Compile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lister, err := rt.Instantiate(context.Background(), c, component.Options{Name: "act-kv-go"})
	if err != nil {
		t.Fatal(err)
	}
	defs, err := List(context.Background(), lister)
	lister.Close()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "put,get,list,delete" {
		t.Fatalf("tools %v", names)
	}
	var inst *component.Instance
	comp, err := New(Options{Name: "act-kv-go", Info: info, SessionArgs: map[string]any{"namespace": "notes"},
		Instance: func(ctx context.Context) (*component.Instance, error) {
			inst, err = rt.Instantiate(ctx, c, component.Options{Name: "act-kv-go"})
			return inst, err
		}}, defs)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]agent.Tool{}
	for _, tl := range comp.Tools() {
		tools[tl.Def().Name] = tl
	}
	steps := []struct{ tool, in, status, out string }{
		{"put", `{"key":"a","value":"1"}`, "passed", "stored a in notes"},
		{"put", `{"key":"b","value":"2"}`, "passed", "stored b in notes"},
		{"get", `{"key":"a"}`, "passed", "1"},
		{"get", `{"key":"zz"}`, "failed", "std:not-found: no key zz in notes"},
		{"put", `{"key":"a"}`, "error", ""},
		{"put", `{"key":"a","value":7}`, "failed", "std:invalid-args: "},
		{"delete", `{"key":"b"}`, "passed", "deleted b"},
		{"list", `{}`, "passed", `{"keys":["a"],"namespace":"notes","values":{"a":"1"}}`},
	}
	for _, s := range steps {
		r, err := tools[s.tool].Call(context.Background(), json.RawMessage(s.in))
		if err != nil {
			t.Fatalf("%s %s: %v", s.tool, s.in, err)
		}
		if s.status == "error" {
			// The loop's required-field check, not the host's, refuses
			// this one in a capsule; here the host's schema check does.
			s.status, s.out = "failed", "std:invalid-args: "
		}
		if string(r.Status) != s.status || !strings.HasPrefix(r.Data, s.out) {
			t.Fatalf("%s %s: %s %q, want %s %q", s.tool, s.in, r.Status, r.Data, s.status, s.out)
		}
	}
	if err := comp.Close(); err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	if got := strings.Join(comp.Log(), "|"); got != "session notes-1 opened|session notes-1 closed" {
		t.Fatalf("log %q", got)
	}
	// close-session dropped the store: the same id is unknown now.
	p, err := Bind(inst)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := encMode.Marshal("notes-1")
	args, _ := JSONToCBOR([]byte(`{}`))
	ev, err := p.CallTool(context.Background(), "list", args, Metadata{{Key: MetaSessionID, Value: id}})
	if err != nil || len(ev) != 1 || ev[0].Err == nil || ev[0].Err.Kind != KindSessionNotFound {
		t.Fatalf("after close: %+v %v", ev, err)
	}
}
