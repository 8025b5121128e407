//go:build linux

package wasi

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openResolved opens rel, already resolved by Resolve, with openat2 so the
// kernel re-checks containment: RESOLVE_BENEATH refuses anything that would
// leave the preopen and RESOLVE_NO_SYMLINKS refuses a component that became
// a symlink after Resolve looked at it.
func (p *Preopen) openResolved(rel string, flags int, dir, follow bool) (*os.File, error) {
	how := unix.OpenHow{
		Flags:   uint64(flags) | unix.O_CLOEXEC,
		Mode:    0o666,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_SYMLINKS,
	}
	if dir {
		how.Flags |= unix.O_DIRECTORY
	}
	if !follow {
		how.Flags |= unix.O_NOFOLLOW
	}
	if flags&os.O_CREATE == 0 {
		how.Mode = 0
	}
	fd, err := unix.Openat2(int(p.dir.Fd()), rel, &how)
	switch {
	case errors.Is(err, unix.ENOSYS):
		// Kernels before 5.6 (or seccomp filters) lack openat2; os.Root
		// gives the same containment by walking components itself.
		return p.root.OpenFile(rel, flags, 0o666)
	case errors.Is(err, unix.EXDEV):
		return nil, fmt.Errorf("kernel refused %q: %w", rel, ErrEscape)
	case errors.Is(err, unix.ELOOP) && follow:
		return nil, fmt.Errorf("%q changed into a symlink while opening: %w", rel, ErrEscape)
	case err != nil:
		return nil, err
	}
	return os.NewFile(uintptr(fd), rel), nil
}
