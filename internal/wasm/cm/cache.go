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
)

// The compile cache keeps one file per compiled component:
//
//	<dir>/<key>.<crc32c>.cwasm
//
// key hashes the component digest, the wasmtime version and the engine
// settings, so a different wasmtime or configuration never loads a stale
// artifact. The CRC-32C of the contents is in the name: a truncated or
// corrupted file fails the check and is recompiled, never handed to
// wasmtime (which would trust the machine code in it). Files are written
// to a temporary name and renamed, so concurrent processes see a whole file
// or none; two writers of one key write the same bytes.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// cacheFormat is cm's own part of the cache key: bump it whenever cm
// changes what it compiles from a binary (the streams rewrite), so no
// process loads code an older cm compiled differently.
const cacheFormat = 2

func (e *Engine) cacheKey(digest [32]byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%x\x00%s\x00%s\x00cm=%d", digest, wasmtimeVersion, e.cfg.settingsKey(), cacheFormat)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func (e *Engine) compileCached(wasm []byte, digest [32]byte) (*Component, error) {
	dir := e.cfg.CacheDir
	key := e.cacheKey(digest)
	if c := e.loadCached(dir, key); c != nil {
		c.digest = digest
		return c, nil
	}
	c, err := e.compile(wasm, digest)
	if err != nil {
		return nil, err
	}
	// A cache that cannot be written costs time, not correctness.
	_ = e.storeCached(c, dir, key)
	return c, nil
}

// loadCached returns the cached component for key, or nil after removing
// any file that fails its check.
func (e *Engine) loadCached(dir, key string) *Component {
	matches, _ := filepath.Glob(filepath.Join(dir, key+".*.cwasm"))
	for _, path := range matches {
		if !cacheFileValid(path, key) {
			os.Remove(path)
			continue
		}
		c, err := e.DeserializeFile(path)
		if err != nil {
			os.Remove(path)
			continue
		}
		return c
	}
	return nil
}

func cacheFileValid(path, key string) bool {
	base := filepath.Base(path)
	sum := strings.TrimSuffix(strings.TrimPrefix(base, key+"."), ".cwasm")
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return false
	}
	return fmt.Sprintf("%08x", crc32.Checksum(b, castagnoli)) == sum
}

func (e *Engine) storeCached(c *Component, dir, key string) error {
	b, err := c.Serialize()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("compile cache: %w", err)
	}
	final := filepath.Join(dir, fmt.Sprintf("%s.%08x.cwasm", key, crc32.Checksum(b, castagnoli)))
	tmp, err := os.CreateTemp(dir, key+".tmp-*")
	if err != nil {
		return fmt.Errorf("compile cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(b); err != nil {
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
