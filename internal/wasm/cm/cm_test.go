//go:build cgo

package cm

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func newEngine(t testing.TB, cfg Config) *Engine {
	t.Helper()
	e, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func fixture(t testing.TB, e *Engine, name string) *Component {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.CompileText(string(text))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func newStore(t testing.TB, e *Engine, l Limits, data any) *Store {
	t.Helper()
	s, err := e.NewStore(l, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func addLinker(e *Engine) *Linker {
	l := e.NewLinker()
	l.Func([]string{"mur:test/host@0.1.0"}, "double", func(c *Caller, args []Val) (Val, error) {
		return U32(args[0].U32() * 2), nil
	})
	return l
}

func TestAddThroughHost(t *testing.T) {
	e := newEngine(t, Config{})
	c := fixture(t, e, "add.wat")
	s := newStore(t, e, Limits{}, nil)
	l := addLinker(e)
	defer l.Close()
	inst, err := l.Instantiate(context.Background(), s, c)
	if err != nil {
		t.Fatal(err)
	}
	f, err := inst.Func("add")
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Call(context.Background(), U32(3), U32(4))
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind() != KindU32 || got.U32() != 14 {
		t.Fatalf("add(3, 4) = %v, want 14", got)
	}
}

func mustRead(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestImportsExports(t *testing.T) {
	e := newEngine(t, Config{})
	c := fixture(t, e, "resource.wat")
	imps := c.Imports()
	if len(imps) != 1 || !imps[0].Instance || imps[0].Name != "mur:test/res@0.1.0" {
		t.Fatalf("imports = %+v", imps)
	}
	if got := strings.Join(imps[0].Funcs, ","); got != "consume,get,make" && got != "make,get,consume" {
		t.Errorf("imported funcs = %s", got)
	}
	if len(imps[0].Resources) != 1 || imps[0].Resources[0] != "counter" {
		t.Errorf("imported resources = %v", imps[0].Resources)
	}
	var names []string
	for _, x := range c.Exports() {
		if !x.Func {
			t.Errorf("export %q is not a function", x.Name)
		}
		names = append(names, x.Name)
	}
	sort.Strings(names)
	if got := strings.Join(names, ","); got != "keep,run" {
		t.Errorf("exports = %s", got)
	}
	g := fixture(t, e, "guestres.wat")
	var res []string
	for _, x := range g.Exports() {
		if x.Resource {
			res = append(res, x.Name)
		}
	}
	if len(res) != 1 || res[0] != "thing" {
		t.Errorf("guestres exports resources %v, want [thing]", res)
	}
}
