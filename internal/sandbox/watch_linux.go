package sandbox

import (
	"os"
	"strconv"
	"syscall"
)

// usedBytes is what the session holds against workdir_max_bytes: the
// blocks of the files under its work, temporary and home folders (each
// inode once), plus the blocks of files on those folders' filesystems
// that were unlinked while a session process still holds them open or
// mapped. Those no longer have a name for the walk to find, yet keep their
// blocks until the last holder lets go, so a command could otherwise fill
// the disk past the ceiling with a file it deleted.
func (s *Session) usedBytes() int64 {
	p := s.policy
	roots := []string{p.Workdir, p.Tmp, p.Home}
	n := treeBytes(roots...)
	if s.cg == nil {
		return n
	}
	var pids []int
	for _, f := range s.cg.allProcs() {
		pids = append(pids, readPids(f)...)
	}
	return n + heldUnlinkedBytes(pids, roots)
}

// heldUnlinkedBytes sums, once per inode, the blocks of unlinked regular
// files on the filesystems of roots that the processes pids hold through a
// descriptor (/proc/<pid>/fd) or a mapping (/proc/<pid>/map_files). A
// stat through those links reaches the inode even with no name left.
func heldUnlinkedBytes(pids []int, roots []string) int64 {
	devs := map[uint64]bool{}
	for _, r := range roots {
		var st syscall.Stat_t
		if syscall.Stat(r, &st) == nil {
			devs[uint64(st.Dev)] = true
		}
	}
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	self := os.Getpid()
	var total int64
	for _, pid := range pids {
		if pid == self {
			continue // the spawner thread puts the runtime in the v1 scope
		}
		for _, dir := range []string{"/fd", "/map_files"} {
			d := "/proc/" + strconv.Itoa(pid) + dir
			names, err := readDirNames(d)
			if err != nil {
				continue // gone, or map_files without CAP_SYS_ADMIN
			}
			for _, name := range names {
				var st syscall.Stat_t
				if syscall.Stat(d+"/"+name, &st) != nil {
					continue
				}
				if st.Nlink != 0 || st.Mode&syscall.S_IFMT != syscall.S_IFREG || !devs[uint64(st.Dev)] {
					continue
				}
				k := inode{uint64(st.Dev), st.Ino}
				if seen[k] {
					continue
				}
				seen[k] = true
				total += st.Blocks * 512
			}
		}
	}
	return total
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
