package capsule

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/wasm/cm"
)

// emptyComponent is a valid component with no exports: it compiles and
// instantiates, and has no tool interface to call.
func emptyComponent(t *testing.T) (*component.Runtime, *lazyComponent) {
	t.Helper()
	b, err := cm.Wat2Wasm("(component)")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "c.wasm")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := component.New(cm.Config{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	lc := &lazyComponent{rt: rt, wasm: file, g: grant{name: "t/c"}, dirs: &sessionDirs{workdir: t.TempDir()},
		host: func() *component.Host { return &component.Host{} }}
	return rt, lc
}

// A prepared component is compiled before its first call: the call uses
// that compilation, not the file (gone by then).
func TestPreparedCompileServesFirstCall(t *testing.T) {
	_, lc := emptyComponent(t)
	prepare([]*lazyComponent{lc})
	r := <-lc.compiled
	lc.compiled <- r
	if r.err != nil {
		t.Fatal(r.err)
	}
	os.Remove(lc.wasm)
	_, err := lc.Run(context.Background(), component.ToolInput{})
	if err == nil || errors.Is(err, os.ErrNotExist) {
		t.Fatalf("first call = %v, want the component's missing export, not its file", err)
	}
	lc.Close()
}

// Close waits for a compilation prepare started (the engine closes after
// it) and later calls are refused.
func TestCloseWaitsForPreparedCompile(t *testing.T) {
	rt, lc := emptyComponent(t)
	prepare([]*lazyComponent{lc})
	lc.Close()
	rt.Close()
	if _, err := lc.Run(context.Background(), component.ToolInput{}); !errors.Is(err, errClosed) {
		t.Fatalf("call after close = %v", err)
	}
}

// warmCache compiles lc's component into rt's compile cache under lc.id.
func warmCache(t *testing.T, rt *component.Runtime, lc *lazyComponent) {
	t.Helper()
	c, err := rt.CompileFrom(*lc.id, func() ([]byte, error) { return os.ReadFile(lc.wasm) })
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// A tool the compile cache already holds is not loaded by prepare (its
// code stays unmapped until the model calls it); the driver (eager) is.
func TestPrepareLeavesCachedToolToFirstCall(t *testing.T) {
	for _, eager := range []bool{false, true} {
		rt, lc := emptyComponent(t)
		id := [32]byte{1, 2, 3}
		lc.id, lc.eager = &id, eager
		warmCache(t, rt, lc)
		prepare([]*lazyComponent{lc})
		r := <-lc.compiled
		lc.compiled <- r
		if loaded := r.c != nil; loaded != eager || r.err != nil {
			t.Fatalf("eager=%t: prepare loaded=%t, err %v", eager, loaded, r.err)
		}
		_, err := lc.Run(context.Background(), component.ToolInput{})
		if err == nil || errors.Is(err, os.ErrNotExist) {
			t.Fatalf("eager=%t: first call = %v, want the component's missing export", eager, err)
		}
		lc.Close()
	}
}

// prepare hands memory back to the OS (a forced collection) after a
// compilation, whose garbage is the component's bytes and the compiler's
// copies, and not after a load from the compile cache, which leaves none:
// the collection would only map more of the binary in an idle capsule.
func TestPrepareReleasesMemoryOnlyAfterCompiling(t *testing.T) {
	calls := make(chan struct{}, 4)
	saved := releaseMemory
	t.Cleanup(func() { releaseMemory = saved })
	releaseMemory = func() { calls <- struct{}{} }
	for _, cached := range []bool{false, true} {
		rt, lc := emptyComponent(t)
		id := [32]byte{4, 5, 6}
		lc.id, lc.eager = &id, true
		if cached {
			warmCache(t, rt, lc)
		}
		prepare([]*lazyComponent{lc})
		r := <-lc.compiled
		lc.compiled <- r
		if r.err != nil || r.c == nil {
			t.Fatalf("cached=%t: prepare: %v", cached, r.err)
		}
		// The collection runs on prepare's goroutine after the component
		// is handed over: a compiling launch is waited for (a deadline for
		// a hung test only, so a loaded machine cannot fail it); a cached
		// one is watched for a second, which load can only make miss.
		if !cached {
			select {
			case <-calls:
			case <-time.After(2 * time.Minute):
				t.Error("a launch that compiled did not release memory")
			}
		} else {
			select {
			case <-calls:
				t.Error("a launch served from the compile cache forced a collection")
			case <-time.After(time.Second):
			}
		}
		lc.Close()
	}
}
