//go:build cgo

package cm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"

	"github.com/murmur/mur/internal/wasm/rewrite"
)

// The compile cache keeps one file per compiled component:
//
//	<dir>/<key>.<crc32c>.<f|w|s>.cwasm
//
// key hashes the component digest (of the binary as given, before cm's
// streams rewrite, so a hit needs no rewrite), the wasmtime version and the
// engine settings, so a different wasmtime or configuration never loads a
// stale artifact. f, w or s records how the streams fast path applies to
// the compiled code (reads and writes, writes only, not at all). The CRC-32C of the contents is in the name: a
// truncated or corrupted file fails the check and is recompiled, never
// handed to wasmtime (which would trust the machine code in it). Files are
// written to a temporary name and renamed, so concurrent processes see a
// whole file or none; two writers of one key write the same bytes.
//
// Reading a whole compiled component to check its CRC costs more than the
// rest of a warm launch, so a successful check leaves a stamp beside the
// file (<file>.verified: its inode, size, mtime and ctime). A later load
// whose stat matches the stamp skips the read; any change to the file —
// replaced, rewritten, touched — changes its ctime and forces the full
// check again.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// cacheFormat is cm's own part of the cache key: bump it whenever cm
// changes what it compiles from a binary (the streams rewrite), so no
// process loads code an older cm compiled differently.
const cacheFormat = 5

func (e *Engine) cacheKey(digest [32]byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%x\x00%s\x00%s\x00cm=%d", digest, wasmtimeVersion, e.cfg.settingsKey(), cacheFormat)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// compileCached serves wasm from the cache, or rewrites (when the streams
// fast path is on), compiles and stores it.
func (e *Engine) compileCached(wasm []byte, digest [32]byte) (*Component, error) {
	dir := e.cfg.CacheDir
	key := e.cacheKey(digest)
	if c, mode := e.loadCached(dir, key); c != nil {
		c.digest = digest
		c.streams = mode
		return c, nil
	}
	c, err := e.compileFast(wasm, digest)
	if err != nil {
		return nil, err
	}
	mode := c.streams
	// A cache that cannot be written costs time, not correctness.
	_ = e.storeCached(c, dir, key, mode)
	return c, nil
}

// Cached reports whether the compile cache holds an entry for id, as
// CompileFrom would key it. The entry is checked when it is loaded, not
// here: this is a stat, for callers deciding whether loading can wait.
func (e *Engine) Cached(id [32]byte) bool {
	if e.cfg.CacheDir == "" {
		return false
	}
	matches, _ := filepath.Glob(filepath.Join(e.cfg.CacheDir, e.cacheKey(id)+".*.cwasm"))
	return len(matches) > 0
}

// loadCached returns the cached component for key and how its code takes
// the streams fast path, or nil after removing any file that fails its
// check.
func (e *Engine) loadCached(dir, key string) (*Component, rewrite.Mode) {
	matches, _ := filepath.Glob(filepath.Join(dir, key+".*.cwasm"))
	for _, path := range matches {
		if !cacheFileValid(path, key) {
			os.Remove(path)
			os.Remove(path + stampSuffix)
			continue
		}
		c, err := e.DeserializeFile(path)
		if err != nil {
			os.Remove(path)
			os.Remove(path + stampSuffix)
			continue
		}
		return c, modeFromName(path)
	}
	return nil, rewrite.Slow
}

// modeLetters name a rewrite.Mode in cache file names.
var modeLetters = [...]byte{rewrite.Slow: 's', rewrite.Writes: 'w', rewrite.ReadWrite: 'f', rewrite.Shim: 'r'}

func modeFromName(path string) rewrite.Mode {
	for m, c := range modeLetters {
		if strings.HasSuffix(path, "."+string(c)+".cwasm") {
			return rewrite.Mode(m)
		}
	}
	return rewrite.Slow
}

const stampSuffix = ".verified"

// cacheFileValid checks a cache file's CRC against its name, unless its
// stamp shows it is the very file already checked.
func cacheFileValid(path, key string) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() == 0 {
		return false
	}
	id := fileIdentity(fi)
	if id != "" {
		if st, err := os.ReadFile(path + stampSuffix); err == nil && string(st) == id {
			return true
		}
	}
	name := strings.TrimPrefix(filepath.Base(path), key+".")
	sum, _, _ := strings.Cut(name, ".")
	b, err := os.ReadFile(path)
	if err != nil || fmt.Sprintf("%08x", crc32.Checksum(b, castagnoli)) != sum {
		return false
	}
	if id != "" {
		writeStamp(path+stampSuffix, id)
	}
	return true
}

// writeStamp records a verified file's identity; a stamp that cannot be
// written only means the next load checks the CRC again.
func writeStamp(path, id string) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(id)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

func (e *Engine) storeCached(c *Component, dir, key string, mode rewrite.Mode) error {
	b, err := c.Serialize()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("compile cache: %w", err)
	}
	final := filepath.Join(dir, fmt.Sprintf("%s.%08x.%c.cwasm", key, crc32.Checksum(b, castagnoli), modeLetters[mode]))
	tmp, err := os.CreateTemp(dir, key+".tmp-*")
	if err != nil {
		return fmt.Errorf("compile cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if err := writeSmall(tmp, b); err != nil {
		tmp.Close()
		return fmt.Errorf("compile cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("compile cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return fmt.Errorf("compile cache: %w", err)
	}
	return nil
}

// cacheWriteChunk bounds each write of a cache file. The page cache keeps
// a file in folios sized by how it was written, and a fault on a mapped
// file maps its whole folio: a .cwasm written in one go sits in folios of
// up to 2 MiB, so each page of guest code a call touches makes up to
// 2 MiB of the process resident (and keeps it from being reclaimed in
// parts). Written 64 KiB at a time it stays in 64 KiB folios, and what a
// capsule holds resident follows the code it runs (bench/RESULTS.md:
// −0.8 MB of an idle capsule's driver).
const cacheWriteChunk = 64 << 10

func writeSmall(f *os.File, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), cacheWriteChunk)
		if _, err := f.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
