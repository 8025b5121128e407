//go:build unix

package sandbox

import (
	"io/fs"
	"syscall"
)

// diskUsage is the space a file takes: its allocated blocks, not its
// apparent size, so a sparse file fills no disk.
func diskUsage(info fs.FileInfo) (size int64, dev, ino uint64, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return info.Size(), 0, 0, false
	}
	return int64(st.Blocks) * 512, uint64(st.Dev), uint64(st.Ino), true
}
