package sandbox

import (
	"io/fs"
	"path/filepath"
	"syscall"
)

// treeBytes is the disk space the trees under roots take, each inode
// counted once (hard links and overlapping roots do not double count).
func treeBytes(roots ...string) int64 {
	type ino struct{ dev, ino uint64 }
	seen := map[ino]bool{}
	var total int64
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // a file removed mid-walk is simply not counted
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			size := info.Size()
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				k := ino{uint64(st.Dev), uint64(st.Ino)}
				if seen[k] {
					return nil
				}
				seen[k] = true
				// Allocated blocks, not the apparent size: a sparse file
				// fills no disk.
				size = int64(st.Blocks) * 512
			}
			total += size
			return nil
		})
	}
	return total
}
