package store

import "golang.org/x/sys/unix"

// statFile is path's identity, without following a symlink.
func statFile(path string) (fileStat, bool) {
	var s unix.Stat_t
	if err := unix.Lstat(path, &s); err != nil {
		return fileStat{}, false
	}
	return fileStat{Dev: uint64(s.Dev), Ino: s.Ino, Size: s.Size, Mode: s.Mode,
		Mtime: s.Mtim.Nano(), Ctime: s.Ctim.Nano()}, true
}
