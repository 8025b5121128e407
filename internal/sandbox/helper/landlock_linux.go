package helper

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock is driven through raw syscalls on the init's one locked thread
// rather than through go-landlock: go-landlock restricts every thread with
// AllThreadsSyscall, which Go refuses in a cgo binary, and mur links cgo.
// Restricting the thread that then calls execve is exactly what the target
// inherits.

// Landlock filesystem access rights (uapi/linux/landlock.h).
const (
	llExecute   = 1 << 0
	llWriteFile = 1 << 1
	llReadFile  = 1 << 2
	llReadDir   = 1 << 3
	llRemoveDir = 1 << 4
	llRemoveFil = 1 << 5
	llMakeChar  = 1 << 6
	llMakeDir   = 1 << 7
	llMakeReg   = 1 << 8
	llMakeSock  = 1 << 9
	llMakeFifo  = 1 << 10
	llMakeBlock = 1 << 11
	llMakeSym   = 1 << 12
	llRefer     = 1 << 13 // ABI 2
	llTruncate  = 1 << 14 // ABI 3
	llIoctlDev  = 1 << 15 // ABI 5

	// Rights that apply to a regular file, as opposed to a directory.
	llFileRights = llExecute | llWriteFile | llReadFile | llTruncate | llIoctlDev

	llScopeAbstractUnix = 1 << 0 // ABI 6
	llScopeSignal       = 1 << 1 // ABI 6
)

// Grant kinds as carried in the init spec.
const (
	GrantRead     = "r"   // read files, list directories
	GrantReadExec = "rx"  // and execute
	GrantExecRead = "x"   // execute and read by exact name, no listing
	GrantRW       = "rw"  // everything but execute
	GrantRWX      = "rwx" // everything
	GrantDev      = "dev" // read, write and ioctl a device node
)

// llHandled is every filesystem right this ABI knows; handling a right and
// granting it nowhere denies it everywhere.
func llHandled(abi int) uint64 {
	r := uint64(llExecute | llWriteFile | llReadFile | llReadDir | llRemoveDir | llRemoveFil |
		llMakeChar | llMakeDir | llMakeReg | llMakeSock | llMakeFifo | llMakeBlock | llMakeSym)
	if abi >= 2 {
		r |= llRefer
	}
	if abi >= 3 {
		r |= llTruncate
	}
	if abi >= 5 {
		r |= llIoctlDev
	}
	return r
}

func llRights(kind string, abi int) uint64 {
	var r uint64
	switch kind {
	case GrantRead:
		r = llReadFile | llReadDir
	case GrantReadExec:
		r = llReadFile | llReadDir | llExecute
	case GrantExecRead:
		r = llReadFile | llExecute
	case GrantRW:
		r = llHandled(abi) &^ llExecute
	case GrantRWX:
		r = llHandled(abi)
	case GrantDev:
		r = llReadFile | llWriteFile | llTruncate | llIoctlDev
	}
	return r & llHandled(abi)
}

type llRulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

type llPathBeneath struct {
	allowed uint64
	fd      int32
}

// LandlockRule is one path grant.
type LandlockRule struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// landlockRestrictSelf confines the calling thread (and what it execs) to
// the ruleset rfd.
func landlockRestrictSelf(rfd int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); errno != 0 {
		return fmt.Errorf("landlock restrict self: %w", errno)
	}
	return nil
}

// LandlockRuleset builds the ruleset for rules and returns its descriptor.
// Missing paths are skipped: a grant on something absent grants nothing.
// Each rule holds the file it names, so the ruleset must be built where the
// commands' view of the filesystem is (the session's mount namespace);
// one ruleset is then enforced by every command of the session.
func LandlockRuleset(abi int, rules []LandlockRule) (int, error) {
	attr := llRulesetAttr{handledFS: llHandled(abi)}
	size := unsafe.Sizeof(attr.handledFS)
	if abi >= LandlockScopeABI {
		attr.scoped = llScopeAbstractUnix | llScopeSignal
		size = unsafe.Sizeof(attr)
	}
	rfd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return -1, fmt.Errorf("landlock create ruleset: %w", errno)
	}
	fail := func(err error) (int, error) {
		unix.Close(int(rfd))
		return -1, err
	}
	for _, r := range rules {
		fd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if err == unix.ENOENT || err == unix.ENOTDIR {
				continue
			}
			return fail(fmt.Errorf("landlock rule %q: %w", r.Path, err))
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return fail(fmt.Errorf("landlock rule %q: %w", r.Path, err))
		}
		pb := llPathBeneath{allowed: llRights(r.Kind, abi), fd: int32(fd)}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			pb.allowed &= llFileRights
		}
		if pb.allowed != 0 {
			_, _, errno = unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, rfd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&pb)), 0, 0, 0)
		}
		unix.Close(fd)
		if errno != 0 {
			return fail(fmt.Errorf("landlock rule %q: %w", r.Path, errno))
		}
	}
	return int(rfd), nil
}
