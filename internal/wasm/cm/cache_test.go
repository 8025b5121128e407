//go:build cgo

package cm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.cwasm"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func runAdd(t *testing.T, e *Engine, c *Component) {
	t.Helper()
	s := newStore(t, e, Limits{}, nil)
	inst, err := addLinker(e).Instantiate(context.Background(), s, c)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := inst.Func("add")
	if v, err := f.Call(context.Background(), U32(1), U32(1)); err != nil || v.U32() != 4 {
		t.Fatalf("add(1, 1) = %v, %v", v, err)
	}
}

func TestCompileCache(t *testing.T) {
	dir := t.TempDir()
	text, _ := os.ReadFile("testdata/add.wat")
	wasm, err := Wat2Wasm(string(text))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, Config{CacheDir: dir})

	// Miss: compiled and written.
	runAdd(t, e, mustCompile(t, e, wasm))
	files := cacheFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("cache holds %v, want one file", files)
	}
	before, _ := os.Stat(files[0])

	// Hit: loaded, not rewritten; the verified file is stamped so the
	// next hit skips reading it whole.
	runAdd(t, e, mustCompile(t, e, wasm))
	after, _ := os.Stat(files[0])
	if !after.ModTime().Equal(before.ModTime()) || len(cacheFiles(t, dir)) != 1 {
		t.Fatal("a cache hit rewrote the cache")
	}
	if _, err := os.Stat(files[0] + stampSuffix); err != nil && fileIdentity(after) != "" {
		t.Fatalf("no stamp after a verified load: %v", err)
	}
	runAdd(t, e, mustCompile(t, e, wasm))

	// Other settings use another key.
	fuel := newEngine(t, Config{CacheDir: dir, Fuel: true})
	mustCompile(t, fuel, wasm)
	if n := len(cacheFiles(t, dir)); n != 2 {
		t.Fatalf("cache holds %d files after a second configuration, want 2", n)
	}

	// Corruption: truncated and bit-flipped files are recompiled, never
	// loaded, though a stamp from the sound file is still beside them.
	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { return b[:len(b)/2] },
		func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b },
		func([]byte) []byte { return nil },
	} {
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		// Replace, never rewrite in place: live components map the file,
		// and shrinking a mapped file under them is a SIGBUS (the cache
		// itself only ever renames).
		tmp := files[0] + ".damaged"
		if err := os.WriteFile(tmp, damage(b), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, files[0]); err != nil {
			t.Fatal(err)
		}
		runAdd(t, e, mustCompile(t, e, wasm))
		if !cacheFileValid(files[0], filepath.Base(files[0])[:32]) {
			t.Fatal("the damaged cache file was not replaced")
		}
	}
}

func mustCompile(t *testing.T, e *Engine, wasm []byte) *Component {
	t.Helper()
	c, err := e.Compile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSerializeRoundTrip(t *testing.T) {
	e := newEngine(t, Config{})
	b, err := fixture(t, e, "add.wat").Serialize()
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Deserialize(b)
	if err != nil {
		t.Fatal(err)
	}
	runAdd(t, e, c)
	// Garbage is not tried: wasmtime trusts serialized input and may crash
	// on it, which is why the cache checks a CRC before loading.
}

func TestABILayout(t *testing.T) {
	if got := uintptr(cSizeofVal()); got != cvalSize {
		t.Errorf("sizeof(wasmtime_component_val_t) = %d, Go mirror %d", got, cvalSize)
	}
	if got := uintptr(cSizeofEntry()); got != centrySize {
		t.Errorf("sizeof(valrecord_entry) = %d, Go mirror %d", got, centrySize)
	}
	if got := cSizeofItem(); got != 24 {
		t.Errorf("sizeof(wasmtime_component_item_t) = %d, want 24", got)
	}
}

// TestCacheConcurrentWriters: engines standing for separate processes fill
// one cache directory at once; every compile succeeds and the directory
// ends with one valid file.
func TestCacheConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	wasm, err := Wat2Wasm(mustRead(t, "testdata/values.wat"))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			e, err := NewEngine(Config{CacheDir: dir})
			if err != nil {
				errs <- err
				return
			}
			defer e.Close()
			c, err := e.Compile(wasm)
			if err == nil {
				c.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	files := cacheFiles(t, dir)
	if len(files) != 1 || !cacheFileValid(files[0], filepath.Base(files[0])[:32]) {
		t.Fatalf("cache holds %v, want one valid file", files)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
}

// TestCompileFromKeyedHit: a component compiled under an id is served
// from the cache under that id without its bytes being read again.
func TestCompileFromKeyedHit(t *testing.T) {
	dir := t.TempDir()
	text, _ := os.ReadFile("testdata/add.wat")
	wasm, err := Wat2Wasm(string(text))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, Config{CacheDir: dir})
	id := [32]byte{1, 2, 3}
	loads := 0
	load := func() ([]byte, error) { loads++; return wasm, nil }
	if e.Cached(id) {
		t.Fatal("Cached before anything was compiled")
	}
	for range 2 {
		c, err := e.CompileFrom(id, load)
		if err != nil {
			t.Fatal(err)
		}
		runAdd(t, e, c)
	}
	if loads != 1 {
		t.Fatalf("the bytes were read %d times, want once (the second compile is a cache hit)", loads)
	}
	if !e.Cached(id) || e.Cached([32]byte{9}) {
		t.Fatal("Cached does not match what was compiled")
	}
	if newEngine(t, Config{}).Cached(id) {
		t.Fatal("an engine without a cache dir reports a cached entry")
	}
	// Another id is another entry: its bytes are read.
	if _, err := e.CompileFrom([32]byte{9}, load); err != nil || loads != 2 {
		t.Fatalf("a new id: loads = %d, err = %v", loads, err)
	}
}
