package sandbox

import (
	"io/fs"
	"path/filepath"
)

// treeBytes is the disk space the trees under roots take, each inode
// counted once (hard links and overlapping roots do not double count).
func treeBytes(roots ...string) int64 {
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
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
			size, dev, ino, ok := diskUsage(info)
			if ok {
				if seen[inode{dev, ino}] {
					return nil
				}
				seen[inode{dev, ino}] = true
			}
			total += size
			return nil
		})
	}
	return total
}
