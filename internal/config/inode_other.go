//go:build !unix

package config

import "io/fs"

// inode is unavailable here; size and mtime alone detect a change.
func inode(fs.FileInfo) uint64 { return 0 }
