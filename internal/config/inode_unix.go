//go:build unix

package config

import (
	"io/fs"
	"syscall"
)

// inode tells an atomically replaced file (same size and mtime second) from
// the old one.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
