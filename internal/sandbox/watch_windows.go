package sandbox

import "io/fs"

func diskUsage(info fs.FileInfo) (size int64, dev, ino uint64, ok bool) {
	return info.Size(), 0, 0, false
}
