//go:build cgo

package cm

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func limitsInstance(t *testing.T, e *Engine, l Limits) *Instance {
	t.Helper()
	s := newStore(t, e, l, nil)
	inst, err := e.NewLinker().Instantiate(context.Background(), s, fixture(t, e, "limits.wat"))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func call(t *testing.T, inst *Instance, ctx context.Context, name string) error {
	t.Helper()
	f, err := inst.Func(name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Call(ctx)
	return err
}

func TestDeadlineStopsSpin(t *testing.T) {
	e := newEngine(t, Config{})
	inst := limitsInstance(t, e, Limits{Deadline: 50 * time.Millisecond})
	// ErrDeadline is the deadline's own error: a spin it did not stop
	// never returns, and the test's timeout reports that.
	err := call(t, inst, context.Background(), "spin")
	if !errors.Is(err, ErrDeadline) {
		t.Fatalf("spin: %v, want ErrDeadline", err)
	}
	var te *TrapError
	if !errors.As(err, &te) || len(te.Frames) == 0 {
		t.Fatalf("want a TrapError with a backtrace, got %#v", err)
	}
}

func TestContextDeadlineAndCancel(t *testing.T) {
	e := newEngine(t, Config{})
	inst := limitsInstance(t, e, Limits{})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := call(t, inst, ctx, "spin"); !errors.Is(err, ErrDeadline) {
		t.Fatalf("spin under a context deadline: %v, want ErrDeadline", err)
	}

	// A trapped instance cannot be entered again; take a fresh one.
	inst = limitsInstance(t, e, Limits{})
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	err := call(t, inst, ctx, "spin")
	if !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("spin canceled: %v, want ErrCanceled and context.Canceled", err)
	}
	if err := call(t, inst, ctx, "spin"); !errors.Is(err, context.Canceled) {
		t.Fatalf("call with a done context: %v", err)
	}
}

func TestFuel(t *testing.T) {
	e := newEngine(t, Config{Fuel: true})
	inst := limitsInstance(t, e, Limits{Fuel: 100_000})
	if err := call(t, inst, context.Background(), "spin"); !errors.Is(err, ErrFuel) {
		t.Fatalf("spin with fuel: %v, want ErrFuel", err)
	}
}

func TestGrowthStoppedByLimits(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		fn    string
		want  error
		trace string
	}{
		// cm's memories know the limit refused the growth.
		{"balloon accounted", Config{AccountMemory: true}, "balloon", ErrMemoryLimit, "unreachable"},
		// wasmtime's limiter only makes memory.grow / table.grow return -1
		// (wasm semantics), on which the fixture traps.
		{"balloon", Config{}, "balloon", ErrTrap, "unreachable"},
		{"grow-table", Config{}, "grow-table", ErrTrap, "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, tt.cfg)
			inst := limitsInstance(t, e, Limits{MemoryBytes: 1 << 20, TableElements: 1000})
			err := call(t, inst, context.Background(), tt.fn)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.trace) {
				t.Fatalf("%s: %v, want %v", tt.fn, err, tt.want)
			}
		})
	}
}

func TestMemoryLimitCoversAllMemories(t *testing.T) {
	const page = 65536
	tests := []struct {
		cfg  Config
		want error
	}{
		{Config{AccountMemory: true}, ErrMemoryLimit}, // 6 pages in all > 5
		{Config{}, nil}, // each memory (3 pages) <= 5
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("accounted=%t", tt.cfg.AccountMemory), func(t *testing.T) {
			e := newEngine(t, tt.cfg)
			s := newStore(t, e, Limits{MemoryBytes: 5 * page}, nil)
			_, err := e.NewLinker().Instantiate(context.Background(), s, fixture(t, e, "twomem.wat"))
			if !errors.Is(err, tt.want) && (tt.want != nil || err != nil) {
				t.Fatalf("instantiate: %v, want %v", err, tt.want)
			}
		})
	}
	e := newEngine(t, Config{AccountMemory: true})
	s := newStore(t, e, Limits{MemoryBytes: 6 * page}, nil)
	if _, err := e.NewLinker().Instantiate(context.Background(), s, fixture(t, e, "twomem.wat")); err != nil {
		t.Fatal(err)
	}
	if got := s.MemoryUsed(); got != 6*page {
		t.Fatalf("MemoryUsed = %d, want %d", got, 6*page)
	}
}

func TestInstantiationLimits(t *testing.T) {
	e := newEngine(t, Config{})
	tests := []struct {
		name    string
		fixture string
		limits  Limits
		want    error
	}{
		{"memory", "bigmem.wat", Limits{MemoryBytes: 2 * 65536}, ErrMemoryLimit},
		{"table", "bigmem.wat", Limits{TableElements: 10}, ErrTableLimit},
		{"instances", "values.wat", Limits{Instances: 1}, ErrInstanceLimit},
	}
	accounted := newEngine(t, Config{AccountMemory: true})
	tests = append(tests, struct {
		name    string
		fixture string
		limits  Limits
		want    error
	}{"memory accounted", "bigmem.wat", Limits{MemoryBytes: 2 * 65536}, ErrMemoryLimit})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e
			if strings.HasSuffix(tt.name, "accounted") {
				e = accounted
			}
			s := newStore(t, e, tt.limits, nil)
			_, err := echoLinker(e, nil).Instantiate(context.Background(), s, fixture(t, e, tt.fixture))
			if !errors.Is(err, tt.want) {
				t.Fatalf("instantiate: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestTrapMessage(t *testing.T) {
	e := newEngine(t, Config{})
	inst := limitsInstance(t, e, Limits{})
	err := call(t, inst, context.Background(), "trap")
	if !errors.Is(err, ErrTrap) || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("trap: %v", err)
	}
}

func TestHostPanicBecomesTrap(t *testing.T) {
	e := newEngine(t, Config{})
	c := fixture(t, e, "add.wat")
	s := newStore(t, e, Limits{}, nil)
	l := e.NewLinker()
	panicking := true
	l.Func([]string{"mur:test/host@0.1.2"}, "double", func(c *Caller, args []Val) (Val, error) {
		if panicking {
			panic("boom")
		}
		return U32(args[0].U32() * 2), nil
	})
	inst, err := l.Instantiate(context.Background(), s, c)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := inst.Func("add")
	_, err = f.Call(context.Background(), U32(1), U32(2))
	if !errors.Is(err, ErrHostPanic) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("call with panicking host: %v, want ErrHostPanic naming the panic", err)
	}
	// The process and a fresh store still work.
	panicking = false
	s2 := newStore(t, e, Limits{}, nil)
	inst, err = l.Instantiate(context.Background(), s2, c)
	if err != nil {
		t.Fatal(err)
	}
	f, _ = inst.Func("add")
	if v, err := f.Call(context.Background(), U32(1), U32(2)); err != nil || v.U32() != 6 {
		t.Fatalf("after panic: %v, %v", v, err)
	}
}

func TestHostErrorKeepsCause(t *testing.T) {
	e := newEngine(t, Config{})
	sentinel := errors.New("exit 3")
	l := e.NewLinker()
	l.Func([]string{"mur:test/host@0.1.2"}, "double", func(c *Caller, args []Val) (Val, error) {
		if c.Data() != "policy" || c.Context().Value(ctxKey{}) != "v" {
			return Val{}, errors.New("caller does not carry the store data and call context")
		}
		return Val{}, sentinel
	})
	s := newStore(t, e, Limits{}, "policy")
	inst, err := l.Instantiate(context.Background(), s, fixture(t, e, "add.wat"))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := inst.Func("add")
	_, err = f.Call(context.WithValue(context.Background(), ctxKey{}, "v"), U32(1), U32(2))
	if !errors.Is(err, sentinel) || !errors.Is(err, ErrHost) {
		t.Fatalf("call: %v, want the host's error", err)
	}
}

type ctxKey struct{}

func TestMissingImportNamed(t *testing.T) {
	e := newEngine(t, Config{})
	c := fixture(t, e, "add.wat")
	tests := []struct {
		name string
		l    *Linker
		want string
	}{
		{"nothing defined", e.NewLinker(), `instance "mur:test/host@0.1.2"`},
		{"incompatible version", func() *Linker {
			l := e.NewLinker()
			l.Func([]string{"mur:test/host@0.2.0"}, "double", nil)
			return l
		}(), `instance "mur:test/host@0.1.2"`},
		{"function missing", func() *Linker {
			l := e.NewLinker()
			l.Func([]string{"mur:test/host@0.1.2"}, "triple", nil)
			return l
		}(), `function "double" in "mur:test/host@0.1.2"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, e, Limits{}, nil)
			_, err := tt.l.Instantiate(context.Background(), s, c)
			if !errors.Is(err, ErrMissingImport) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("instantiate: %v, want ErrMissingImport naming %s", err, tt.want)
			}
		})
	}
}

func TestResourceLifecycle(t *testing.T) {
	e := newEngine(t, Config{})
	const counterType ResourceType = 7
	var dropped []uint32
	l := e.NewLinker()
	path := []string{"mur:test/res@0.1.0"}
	l.Resource(path, "counter", counterType, func(c *Caller, rep uint32) error {
		dropped = append(dropped, rep)
		return nil
	})
	l.Func(path, "make", func(c *Caller, args []Val) (Val, error) {
		return Own(counterType, args[0].U32()*10), nil
	})
	l.Func(path, "get", func(c *Caller, args []Val) (Val, error) {
		h, err := c.HostHandle(args[0])
		if err != nil {
			return Val{}, err
		}
		if h.Type != counterType || h.Owned {
			return Val{}, errors.New("get expects a borrowed counter")
		}
		return U32(h.Rep + 1), nil
	})
	l.Func(path, "consume", func(c *Caller, args []Val) (Val, error) {
		h, err := c.HostHandle(args[0])
		if err != nil {
			return Val{}, err
		}
		if !h.Owned {
			return Val{}, errors.New("consume expects an owned counter")
		}
		return U32(h.Rep), nil
	})
	s := newStore(t, e, Limits{}, nil)
	inst, err := l.Instantiate(context.Background(), s, fixture(t, e, "resource.wat"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := inst.Func("run")
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.Call(context.Background(), U32(4))
	if err != nil {
		t.Fatal(err)
	}
	if v.U32() != 41 {
		t.Fatalf("run(4) = %v, want 41", v)
	}
	if len(dropped) != 1 || dropped[0] != 40 {
		t.Fatalf("destructor saw %v, want [40]", dropped)
	}

	keep, err := inst.Func("keep")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := keep.Call(context.Background(), U32(2)); err != nil || v.U32() != 20 {
		t.Fatalf("keep(2) = %v, %v; want 20", v, err)
	}
	if len(dropped) != 1 {
		t.Fatalf("destructor ran for a handle the host took over: %v", dropped)
	}
}

func TestGuestResource(t *testing.T) {
	e := newEngine(t, Config{})
	s := newStore(t, e, Limits{}, nil)
	inst, err := e.NewLinker().Instantiate(context.Background(), s, fixture(t, e, "guestres.wat"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mk, _ := inst.Func("make")
	peek, _ := inst.Func("peek")
	last, _ := inst.Func("last-dropped")
	v, err := mk.Call(ctx, U32(7))
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind() != KindResource || !v.Resource().Owned() {
		t.Fatalf("make(7) = %v, want an own handle", v)
	}
	if got, err := peek.Call(ctx, v); err != nil || got.U32() != 7 {
		t.Fatalf("peek = %v, %v; want 7", got, err)
	}
	if err := s.DropResource(ctx, U32(1)); !errors.Is(err, ErrBadValue) {
		t.Fatalf("dropping a non-resource: %v, want ErrBadValue", err)
	}
	if err := s.DropResource(ctx, v); err != nil {
		t.Fatal(err)
	}
	if got, err := last.Call(ctx); err != nil || got.U32() != 7 {
		t.Fatalf("last-dropped = %v, %v; want 7 (the guest destructor ran)", got, err)
	}
}

func TestStoreServesOneGoroutine(t *testing.T) {
	e := newEngine(t, Config{})
	inst := limitsInstance(t, e, Limits{Deadline: 200 * time.Millisecond})
	spin, _ := inst.Func("spin")
	trap, _ := inst.Func("trap")
	done := make(chan error)
	go func() {
		_, err := spin.Call(context.Background())
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	_, err := trap.Call(context.Background())
	if err == nil || !strings.Contains(err.Error(), "in use by another call") {
		t.Fatalf("concurrent call on one store: %v, want a refusal", err)
	}
	if err := <-done; !errors.Is(err, ErrDeadline) {
		t.Fatalf("spin: %v", err)
	}
}

func TestParallelStores(t *testing.T) {
	e := newEngine(t, Config{})
	c := fixture(t, e, "add.wat")
	l := addLinker(e)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := e.NewStore(Limits{}, nil)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			inst, err := l.Instantiate(context.Background(), s, c)
			if err != nil {
				errs <- err
				return
			}
			f, _ := inst.Func("add")
			for i := range 200 {
				v, err := f.Call(context.Background(), U32(uint32(i)), U32(1))
				if err != nil || v.U32() != uint32(2*(i+1)) {
					errs <- fmt.Errorf("add(%d, 1) = %v, %v", i, v, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestRedefineWhileInstantiating: a definition added while another
// goroutine instantiates must not free the wasmtime linker in use.
func TestRedefineWhileInstantiating(t *testing.T) {
	e := newEngine(t, Config{})
	c := fixture(t, e, "add.wat")
	l := addLinker(e)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			l.Func([]string{"mur:test/other@0.1.0"}, fmt.Sprint("f", i), nil)
			runtime.GC()
		}
	}()
	for range 100 {
		s := newStore(t, e, Limits{}, nil)
		inst, err := l.Instantiate(context.Background(), s, c)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := inst.Func("add")
		if v, err := f.Call(context.Background(), U32(1), U32(1)); err != nil || v.U32() != 4 {
			t.Fatalf("add = %v, %v", v, err)
		}
	}
	<-done
}

// TestHostResultMismatch: a host function returning the wrong type or an
// invalid value traps the guest; it never reaches wasmtime as a value that
// would abort the process.
func TestHostResultMismatch(t *testing.T) {
	e := newEngine(t, Config{})
	c := fixture(t, e, "add.wat")
	for _, tt := range []struct {
		name string
		out  Val
		want error
	}{
		{"wrong type", String("not a u32"), ErrTrap},
		{"invalid utf-8", String("\xff\xfe"), ErrBadValue},
		{"surrogate char", Char(0xd800), ErrBadValue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := e.NewLinker()
			l.Func([]string{"mur:test/host@0.1.2"}, "double", func(*Caller, []Val) (Val, error) { return tt.out, nil })
			s := newStore(t, e, Limits{}, nil)
			inst, err := l.Instantiate(context.Background(), s, c)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := inst.Func("add")
			_, err = f.Call(context.Background(), U32(1), U32(2))
			var te *TrapError
			if !errors.As(err, &te) || !errors.Is(err, tt.want) {
				t.Fatalf("call: %v, want a trap matching %v", err, tt.want)
			}
		})
	}
}
