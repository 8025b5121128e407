package component

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/wasm/cm"
)

func newRuntime(t *testing.T) *Runtime {
	t.Helper()
	r, err := New(cm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func compileFixture(t *testing.T, r *Runtime, name string) *cm.Component {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.CompileText(string(b))
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return c
}

func str(s string) *string { return &s }

// toolOf instantiates c under o and resolves its run export; the instance
// is closed when the test ends.
func toolOf(t *testing.T, r *Runtime, c *cm.Component, o Options) (*Instance, *Tool) {
	t.Helper()
	inst, err := r.Instantiate(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	tool, err := inst.Tool()
	if err != nil {
		t.Fatal(err)
	}
	return inst, tool
}

func TestToolRunRoundTrip(t *testing.T) {
	r := newRuntime(t)
	c := compileFixture(t, r, "echo-tool.wat")
	ctx := context.Background()
	chunks := make(chan string, 4)
	_, tool := toolOf(t, r, c, Options{Name: "test/echo", Host: &Host{Text: TextChan{Ctx: ctx, C: chunks}}})
	res, err := tool.Run(ctx, ToolInput{Data: str(`{"msg":"héllo"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusPassed || res.Summary == nil || *res.Summary != "echoed" {
		t.Fatalf("result = %+v", res)
	}
	if res.Data == nil || *res.Data != `{"msg":"héllo"}` {
		t.Fatalf("data = %v", res.Data)
	}
	if res.DataPath != nil || res.Truncated {
		t.Fatalf("data-path/truncated = %v/%v", res.DataPath, res.Truncated)
	}
	if v, ok := res.Meta("state_effect"); !ok || v != "read" {
		t.Fatalf("state_effect = %q, %v", v, ok)
	}
	if v, _ := res.Meta("resource_id"); v != "echo" {
		t.Fatalf("resource_id = %q", v)
	}
	select {
	case got := <-chunks:
		if got != `{"msg":"héllo"}` {
			t.Fatalf("chunk = %q", got)
		}
	default:
		t.Fatal("no text chunk delivered")
	}
	// A second call on the same instance, with no data: option none lifts.
	res, err = tool.Run(ctx, ToolInput{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Data != nil {
		t.Fatalf("data = %q, want none", *res.Data)
	}
}

func TestChunksWithoutFollowerErrToGuestNotTrap(t *testing.T) {
	r := newRuntime(t)
	c := compileFixture(t, r, "echo-tool.wat")
	ctx := context.Background()
	inst, err := r.Instantiate(ctx, c, Options{Name: "test/echo"})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	tool, _ := inst.Tool()
	// Nobody follows text: emit returns err to the guest, which ignores it.
	if _, err := tool.Run(ctx, ToolInput{Data: str("x")}); err != nil {
		t.Fatalf("run without a text sink: %v", err)
	}
}

func TestUnversionedExportRefusedWithHint(t *testing.T) {
	r := newRuntime(t)
	b, err := os.ReadFile("testdata/echo-tool.wat")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), `(export "murmur:tool/run@0.1.0" (instance $tool))`, `(export "murmur:tool/run" (instance $tool))`, 1)
	c, err := r.CompileText(src)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := r.Instantiate(context.Background(), c, Options{Name: "old/echo"})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	_, err = inst.Tool()
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("err = %v, want ErrVersion", err)
	}
	for _, want := range []string{"murmur:tool/run@0.1.0", "unversioned", "mur install", "rebuild"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestOtherVersionExportRefused(t *testing.T) {
	r := newRuntime(t)
	b, _ := os.ReadFile("testdata/echo-tool.wat")
	src := strings.Replace(string(b), `"murmur:tool/run@0.1.0" (instance`, `"murmur:tool/run@0.2.0" (instance`, 1)
	c, err := r.CompileText(src)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := r.Instantiate(context.Background(), c, Options{Name: "new/echo"})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	_, err = inst.Tool()
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "exports murmur:tool/run@0.2.0") || !strings.Contains(err.Error(), "resolves only murmur:tool/run@0.1.0") {
		t.Fatalf("err = %v", err)
	}
}

type echoInvoker struct {
	name string
	in   ToolInput
	fail error
}

func (e *echoInvoker) Invoke(_ context.Context, name string, in ToolInput) (ToolResult, error) {
	e.name, e.in = name, in
	if e.fail != nil {
		return ToolResult{}, e.fail
	}
	return ToolResult{Status: StatusPassed, Data: in.Data}, nil
}

// TestCapsuleWorldInvokesTools runs a script capsule whose run calls
// tool-registry/invoke: the host's invoker sees the call, and the guest
// sees the result (it traps otherwise).
func TestCapsuleWorldInvokesTools(t *testing.T) {
	r := newRuntime(t)
	c := compileFixture(t, r, "capsule.wat")
	ctx := context.Background()
	run := func(host *Host) error {
		inst, err := r.Instantiate(ctx, c, Options{Name: "test/script", Host: host})
		if err != nil {
			t.Fatal(err)
		}
		defer inst.Close()
		entry, err := inst.Capsule()
		if err != nil {
			t.Fatal(err)
		}
		return entry(ctx)
	}
	inv := &echoInvoker{}
	if err := run(&Host{Tools: inv}); err != nil {
		t.Fatalf("capsule run: %v", err)
	}
	if inv.name != "echo" || inv.in.Data == nil || *inv.in.Data != "ping" || inv.in.LogPath != nil {
		t.Fatalf("invoker saw %q %+v", inv.name, inv.in)
	}
	// An invoke error reaches the guest as err (it traps on it), and so
	// does a capsule that was granted no tools.
	if err := run(&Host{Tools: &echoInvoker{fail: errors.New("tool \"echo\" is not allowlisted")}}); err == nil {
		t.Fatal("capsule run passed though invoke failed")
	}
	if err := run(nil); err == nil {
		t.Fatal("capsule run passed with no tool registry")
	}
}
