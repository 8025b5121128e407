package wasi

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/wasm/cm"
)

// instantiate compiles testdata/name, defines WASI on a fresh linker and
// instantiates it in a store whose data is a Ctx built from pol.
func instantiate(t testing.TB, name string, pol Policy) (*cm.Instance, *cm.Store, *Ctx) {
	t.Helper()
	e, err := cm.NewEngine(cm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	text, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	comp, err := e.CompileText(string(text))
	if err != nil {
		t.Fatal(err)
	}
	l := e.NewLinker()
	if err := Define(l); err != nil {
		t.Fatal(err)
	}
	x, err := NewCtx(pol)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	s, err := e.NewStore(cm.Limits{}, x)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	inst, err := l.Instantiate(context.Background(), s, comp)
	if err != nil {
		t.Fatal(err)
	}
	return inst, s, x
}

func call(t testing.TB, inst *cm.Instance, name string, args ...cm.Val) cm.Val {
	t.Helper()
	f, err := inst.Func(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.Call(context.Background(), args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func TestFixtureFilesystemContainment(t *testing.T) {
	wd := t.TempDir()
	proj := filepath.Join(wd, "proj")
	os.MkdirAll(filepath.Join(proj, "tests"), 0o755)
	os.MkdirAll(filepath.Join(wd, "sibling"), 0o755)
	os.WriteFile(filepath.Join(proj, "hello.txt"), []byte("hi from inside"), 0o644)
	os.WriteFile(filepath.Join(wd, "sibling", "secret"), []byte("secret"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(proj, "passwd-link"))
	os.Symlink("../sibling", filepath.Join(proj, "sib-link"))
	inst, _, _ := instantiate(t, "fs.wat", Policy{Workdir: wd, Scope: "proj", ReadOnly: []string{"proj/tests"}})

	reads := []struct {
		path string
		want string // content, or "!code"
	}{
		{"hello.txt", "hi from inside"},
		{"/etc/passwd", "!not-permitted"},
		{"../sibling/secret", "!not-permitted"},
		{"../../../../etc/passwd", "!not-permitted"},
		{"passwd-link", "!not-permitted"},
		{"sib-link/secret", "!not-permitted"},
		{"missing", "!no-entry"},
	}
	for _, r := range reads {
		t.Run("read "+r.path, func(t *testing.T) {
			v := call(t, inst, "read-file", cm.String(r.path))
			p, _ := v.Payload()
			if strings.HasPrefix(r.want, "!") {
				if v.IsOK() || p.Str() != r.want[1:] {
					t.Fatalf("got %v, want error %s", v, r.want[1:])
				}
				return
			}
			b, _ := p.Bytes()
			if !v.IsOK() || string(b) != r.want {
				t.Fatalf("got %v, want %q", v, r.want)
			}
		})
	}
	writes := []struct {
		path, want string
	}{
		{"out.txt", ""},
		{"tests/new.txt", "access"},
		{"../sibling/planted", "not-permitted"},
		{"sib-link/planted", "not-permitted"},
	}
	for _, w := range writes {
		t.Run("write "+w.path, func(t *testing.T) {
			v := call(t, inst, "write-file", cm.String(w.path), cm.Bytes([]byte("data")))
			p, _ := v.Payload()
			if w.want == "" {
				if !v.IsOK() || p.U64() != 4 {
					t.Fatalf("got %v", v)
				}
				return
			}
			if v.IsOK() || p.Str() != w.want {
				t.Fatalf("got %v, want error %s", v, w.want)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "out.txt")); string(b) != "data" {
		t.Fatalf("allowed write landed as %q", b)
	}
	for _, p := range []string{filepath.Join(proj, "tests", "new.txt"), filepath.Join(wd, "sibling", "planted")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("refused write left %s", p)
		}
	}
}

func TestFixtureMissingInterfaceNamed(t *testing.T) {
	e, err := cm.NewEngine(cm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	comp, err := e.CompileText(`(component
  (import "wasi:config/store@0.2.0" (instance (export "get" (func (param "key" string) (result (option string))))))
  (import "wasi:cli/environment@0.2.3" (instance (export "get-arguments" (func (result (list string))))))
)`)
	if err != nil {
		t.Fatal(err)
	}
	l := e.NewLinker()
	Define(l)
	x, _ := NewCtx(Policy{})
	defer x.Close()
	s, _ := e.NewStore(cm.Limits{}, x)
	defer s.Close()
	_, err = l.Instantiate(context.Background(), s, comp)
	if !errors.Is(err, cm.ErrMissingImport) || !strings.Contains(err.Error(), "wasi:config/store@0.2.0") {
		t.Fatalf("instantiate: %v", err)
	}
	if strings.Contains(err.Error(), "environment") {
		t.Fatalf("a provided 0.2.3 interface was reported missing: %v", err)
	}
}

func TestFixtureTCPConnectGoverned(t *testing.T) {
	allowed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer allowed.Close()
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	got := make(chan string, 1)
	go func() {
		c, err := allowed.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(io.LimitReader(c, 4))
		got <- string(b)
	}()
	otherHit := make(chan struct{}, 1)
	go func() {
		if c, err := other.Accept(); err == nil {
			c.Close()
			otherHit <- struct{}{}
		}
	}()
	a, _ := ParseAllow([]string{allowed.Addr().String()})
	inst, _, _ := instantiate(t, "tcp.wat", Policy{Network: a})
	port := func(l net.Listener) cm.Val { return cm.U16(uint16(l.Addr().(*net.TCPAddr).Port)) }
	lo := []cm.Val{cm.U8(127), cm.U8(0), cm.U8(0), cm.U8(1)}

	v := call(t, inst, "connect", append(lo, port(allowed))...)
	if !v.IsOK() {
		t.Fatalf("allowed connect: %v", v)
	}
	select {
	case s := <-got:
		if s != "ping" {
			t.Fatalf("listener got %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("allowed listener got nothing")
	}

	v = call(t, inst, "connect", append(lo, port(other))...)
	if p, _ := v.Payload(); v.IsOK() || p.Str() != "access-denied" {
		t.Fatalf("connect to unlisted port: %v", v)
	}
	v = call(t, inst, "connect", cm.U8(10), cm.U8(255), cm.U8(255), cm.U8(1), port(allowed))
	if p, _ := v.Payload(); v.IsOK() || p.Str() != "access-denied" {
		t.Fatalf("connect to unlisted host: %v", v)
	}
	select {
	case <-otherHit:
		t.Fatal("the unlisted listener was reached")
	case <-time.After(100 * time.Millisecond):
	}
}

// limitsInstance instantiates limits.wat on a WASI-defined linker under
// limits.
func limitsInstance(t *testing.T, limits cm.Limits) (*cm.Instance, error) {
	t.Helper()
	e, err := cm.NewEngine(cm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	text, err := os.ReadFile(filepath.Join("testdata", "limits.wat"))
	if err != nil {
		t.Fatal(err)
	}
	comp, err := e.CompileText(string(text))
	if err != nil {
		t.Fatal(err)
	}
	l := e.NewLinker()
	if err := Define(l); err != nil {
		t.Fatal(err)
	}
	x, err := NewCtx(Policy{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	s, err := e.NewStore(limits, x)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return l.Instantiate(context.Background(), s, comp)
}

func TestFixtureExhaustionContained(t *testing.T) {
	t.Run("spin forever hits the deadline", func(t *testing.T) {
		inst, err := limitsInstance(t, cm.Limits{Deadline: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := inst.Func("spin")
		// ErrDeadline is the deadline's own error: a spin it did not stop
		// never returns, and the test's timeout reports that.
		_, err = f.Call(context.Background())
		if !errors.Is(err, cm.ErrDeadline) {
			t.Fatalf("spin: %v", err)
		}
	})
	t.Run("spin forever ends with its context", func(t *testing.T) {
		inst, err := limitsInstance(t, cm.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := inst.Func("spin")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if _, err = f.Call(ctx); err == nil {
			t.Fatal("spin returned")
		}
	})
	t.Run("balloon memory stops at the limit", func(t *testing.T) {
		const limit = 8 << 20
		inst, err := limitsInstance(t, cm.Limits{MemoryBytes: limit})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := inst.Func("balloon")
		v, err := f.Call(context.Background())
		if err != nil {
			if !errors.Is(err, cm.ErrMemoryLimit) {
				t.Fatalf("balloon: %v", err)
			}
			return
		}
		if pages := v.U32(); pages*65536 > limit {
			t.Fatalf("memory grew to %d pages past the %d-byte limit", pages, limit)
		}
	})
	t.Run("table growth stops at the limit", func(t *testing.T) {
		inst, err := limitsInstance(t, cm.Limits{TableElements: 5000})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := inst.Func("grow-table")
		v, err := f.Call(context.Background())
		if err != nil {
			if !errors.Is(err, cm.ErrTableLimit) {
				t.Fatalf("grow-table: %v", err)
			}
			return
		}
		if v.U32() > 5000 {
			t.Fatalf("table grew to %d past 5000", v.U32())
		}
	})
	t.Run("too many instances refused", func(t *testing.T) {
		_, err := limitsInstance(t, cm.Limits{Instances: 4})
		if !errors.Is(err, cm.ErrInstanceLimit) {
			t.Fatalf("instantiate: %v", err)
		}
	})
}

func TestFixturePollEndsWithCall(t *testing.T) {
	inst, _, _ := instantiate(t, "sleep.wat", Policy{})
	f, err := inst.Func("sleep")
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.Call(context.Background(), cm.U64(uint64(20*time.Millisecond)))
	if err != nil || time.Duration(v.U64()) < 20*time.Millisecond {
		t.Fatalf("20ms sleep: %v, %v", time.Duration(v.U64()), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	// Returning at all ends the hour-long poll early; the error says why.
	if _, err := f.Call(ctx, cm.U64(uint64(time.Hour))); err == nil {
		t.Fatal("an hour-long poll returned without error")
	}
}

func TestFixtureExitStatus(t *testing.T) {
	for _, tt := range []struct {
		failed bool
		code   int
	}{{false, 0}, {true, 1}} {
		inst, _, x := instantiate(t, "exit.wat", Policy{})
		f, _ := inst.Func("quit")
		_, err := f.Call(context.Background(), cm.Bool(tt.failed))
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != tt.code {
			t.Fatalf("quit(%v): %v, want ExitError %d", tt.failed, err, tt.code)
		}
		if code, ok := x.Exited(); !ok || code != tt.code {
			t.Fatalf("Exited() = %d, %v", code, ok)
		}
	}
}
