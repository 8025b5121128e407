package door

import (
	"fmt"
	"os"
)

// spill holds ended tasks' JSON in an unlinked file, so a long-lived
// door's heap keeps an index entry per ended task rather than its body: at
// KeepTasks = 1,000 the bodies (about 0.8 KB each, doubled by the Go
// heap's GOGC headroom) were most of a capsule's resident growth over
// 1,000 tasks (bench/RESULTS.md, door). The file is unlinked as soon as it
// is made: it is a cache of this process's memory, nothing reads it after
// the process, and a kill -9 leaves nothing behind.
type spill struct {
	dir  string
	f    *os.File
	end  int64 // where the next record is written
	live int64 // bytes of records an index entry still points at
}

// spillCompactMin is the file size below which dead records are left in
// place; above it the file is rewritten once three quarters are dead.
const spillCompactMin = 1 << 20

func openSpill(dir string) (*spill, error) {
	f, err := os.CreateTemp(dir, ".door-tasks-*")
	if err != nil {
		return nil, fmt.Errorf("door: task spill file: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("door: task spill file: %w", err)
	}
	return &spill{dir: dir, f: f}, nil
}

// put writes body and returns where it lies.
func (sp *spill) put(body []byte) (off int64, err error) {
	if _, err := sp.f.WriteAt(body, sp.end); err != nil {
		return 0, err
	}
	off = sp.end
	sp.end += int64(len(body))
	sp.live += int64(len(body))
	return off, nil
}

func (sp *spill) get(off int64, n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := sp.f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("door: reading a kept task: %w", err)
	}
	return b, nil
}

// drop forgets n bytes an index entry no longer points at.
func (sp *spill) drop(n int) { sp.live -= int64(n) }

// wasteful reports whether the file is worth rewriting.
func (sp *spill) wasteful() bool { return sp.end > spillCompactMin && sp.live*4 < sp.end }

func (sp *spill) close() error { return sp.f.Close() }
