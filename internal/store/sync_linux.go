package store

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncFS flushes the file system holding dir: one syncfs instead of a
// fsync per blob makes installing many small artifacts cheap and still
// puts every blob on disk before the index or lock that names it.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
