package capsule

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/act"
)

// readACTSection reads a tool component's act:component section through a
// read-only mapping of its file, so only the pages holding the section
// headers act.ReadSection walks are read: a launch used to read every
// tool component whole (3.7 MB for file-go) to learn it has no such
// section (RATIONALE "A launch maps a tool component to find its ACT
// section"). The Info returned holds no byte of the mapping.
func readACTSection(path string) (act.Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return act.Info{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return act.Info{}, err
	}
	if st.Size() == 0 || int64(int(st.Size())) != st.Size() {
		return act.ReadSection(nil) // too short to be a binary: ErrMalformed
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return act.Info{}, fmt.Errorf("map %s: %w", path, err)
	}
	defer unix.Munmap(b)
	return act.ReadSection(b)
}
