package helper

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// deniedSyscalls fail EPERM for every sandboxed process: tracing and reading
// other processes, changing mounts or namespaces, loading kernel code,
// io_uring (whose opcodes can create sockets the socket filter never sees),
// and making executable memory files.
var deniedSyscalls = []uintptr{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD, unix.SYS_KCMP,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_FSOPEN, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_MOUNT_SETATTR,
	unix.SYS_SETNS, unix.SYS_UNSHARE,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT,
	// An anonymous memory file is code the capsule wrote with no path on a
	// noexec mount: execveat, /proc/self/fd and the dynamic loader all run
	// it, and vm.memfd_noexec stops only the first two.
	unix.SYS_MEMFD_CREATE,
	// File notifications report events on any path the caller may read,
	// including directories Landlock will not let it list.
	unix.SYS_INOTIFY_INIT1, unix.SYS_FANOTIFY_INIT,
}

// selfOnlySyscalls act on the process whose pid is their first argument and
// pass only when it is 0, the caller itself. Their permission check is a
// matching uid, not ptrace, so neither Landlock's domain nor a dropped
// capability stops a command running under mur's uid from lowering mur's
// own rlimits (prlimit64), or moving it to another CPU or scheduling class.
var selfOnlySyscalls = []uintptr{
	unix.SYS_PRLIMIT64, unix.SYS_SCHED_SETAFFINITY, unix.SYS_SCHED_SETSCHEDULER,
	unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_SETATTR,
}

// setpriority and ioprio_set name their target by (which, who): they pass
// only for the calling process itself; a process group or a whole uid
// reaches the runtime too.
const (
	prioProcess      = 0 // PRIO_PROCESS
	ioprioWhoProcess = 1 // IOPRIO_WHO_PROCESS
)

// cloneNamespaceFlags are the clone(2) flags that would start a new
// namespace; clone3 hides its flags behind a pointer, so it answers ENOSYS
// and libc falls back to clone, where they can be read.
const cloneNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// deniedIoctls fail EPERM on any descriptor, including a terminal the
// command inherited: pushing bytes into a terminal's input queue (TIOCSTI,
// TIOCLINUX's paste and selection), taking it as controlling terminal
// (TIOCSCTTY), redirecting the console to it (TIOCCONS) and swapping its line
// discipline (TIOCSETD) each act on the operator's terminal outside the
// session. The kernel reads ioctl's request as a 32-bit int, as the filter
// does.
var deniedIoctls = []uint32{unix.TIOCSTI, unix.TIOCLINUX, unix.TIOCSCTTY, unix.TIOCCONS, unix.TIOCSETD}

// Offsets into struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits on a little-endian machine
	offArg1 = 24
)

// bpfProg assembles a forward-only BPF program with symbolic jump targets.
type bpfProg struct {
	ins    []unix.SockFilter
	jumps  map[int][2]string // instruction index -> (jt label, jf label)
	labels map[string]int
}

func (b *bpfProg) stmt(code uint16, k uint32) {
	b.ins = append(b.ins, unix.SockFilter{Code: code, K: k})
}

// jump adds a conditional jump; "" falls through.
func (b *bpfProg) jump(code uint16, k uint32, jt, jf string) {
	b.jumps[len(b.ins)] = [2]string{jt, jf}
	b.ins = append(b.ins, unix.SockFilter{Code: code, K: k})
}

func (b *bpfProg) label(name string) { b.labels[name] = len(b.ins) }

func (b *bpfProg) resolve() ([]unix.SockFilter, error) {
	for i, j := range b.jumps {
		for n, l := range j {
			if l == "" {
				continue
			}
			t, ok := b.labels[l]
			if !ok || t <= i || t-i-1 > 255 {
				return nil, fmt.Errorf("seccomp: bad jump to %q", l)
			}
			if n == 0 {
				b.ins[i].Jt = uint8(t - i - 1)
			} else {
				b.ins[i].Jf = uint8(t - i - 1)
			}
		}
	}
	return b.ins, nil
}

const (
	bpfLdAbsW = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeqK   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJgeK   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJsetK  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRetK   = unix.BPF_RET | unix.BPF_K
)

// SeccompFilter builds the filter: a foreign syscall ABI kills the process,
// deniedSyscalls fail EPERM, socket families other than IPv4/IPv6 (and
// AF_UNIX when unixSockets) fail EACCES, clone with namespace flags fails
// EPERM, execveat fails ENOSYS, deniedIoctls fail EPERM, and
// selfOnlySyscalls, setpriority and ioprio_set aimed at any process but the
// caller fail EPERM.
func SeccompFilter(unixSockets bool) ([]unix.SockFilter, error) {
	if AuditArch == 0 {
		return nil, fmt.Errorf("seccomp: no filter for this architecture")
	}
	b := &bpfProg{jumps: map[int][2]string{}, labels: map[string]int{}}
	b.stmt(bpfLdAbsW, offArch)
	b.jump(bpfJeqK, AuditArch, "native", "")
	b.stmt(bpfRetK, unix.SECCOMP_RET_KILL_PROCESS)
	b.label("native")
	b.stmt(bpfLdAbsW, offNr)
	if x32Bit != 0 {
		b.jump(bpfJgeK, x32Bit, "eperm", "")
	}
	for _, nr := range deniedSyscalls {
		b.jump(bpfJeqK, uint32(nr), "eperm", "")
	}
	b.jump(bpfJeqK, unix.SYS_SOCKET, "socket", "")
	b.jump(bpfJeqK, unix.SYS_SOCKETPAIR, "socket", "")
	b.jump(bpfJeqK, unix.SYS_CLONE, "clone", "")
	b.jump(bpfJeqK, unix.SYS_CLONE3, "enosys", "")
	// execveat runs a descriptor, whose name no path check sees; ENOSYS makes
	// libc's fexecve fall back to execve("/proc/self/fd/N"), which Landlock
	// and the noexec mounts check like any path.
	b.jump(bpfJeqK, unix.SYS_EXECVEAT, "enosys", "")
	b.jump(bpfJeqK, unix.SYS_IOCTL, "ioctl", "")
	for _, nr := range archDeniedSyscalls {
		b.jump(bpfJeqK, uint32(nr), "eperm", "")
	}
	for _, nr := range selfOnlySyscalls {
		b.jump(bpfJeqK, uint32(nr), "self", "")
	}
	b.jump(bpfJeqK, unix.SYS_SETPRIORITY, "setpriority", "")
	b.jump(bpfJeqK, unix.SYS_IOPRIO_SET, "ioprio", "")
	b.label("allow")
	b.stmt(bpfRetK, unix.SECCOMP_RET_ALLOW)

	b.label("socket")
	b.stmt(bpfLdAbsW, offArg0)
	b.jump(bpfJeqK, unix.AF_INET, "allow2", "")
	b.jump(bpfJeqK, unix.AF_INET6, "allow2", "")
	if unixSockets {
		b.jump(bpfJeqK, unix.AF_UNIX, "allow2", "")
	}
	b.stmt(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES))

	b.label("ioctl")
	b.stmt(bpfLdAbsW, offArg1)
	for _, req := range deniedIoctls {
		b.jump(bpfJeqK, req, "eperm", "")
	}
	b.stmt(bpfRetK, unix.SECCOMP_RET_ALLOW)

	b.label("self")
	b.stmt(bpfLdAbsW, offArg0)
	b.jump(bpfJeqK, 0, "allow3", "eperm")

	b.label("setpriority")
	b.stmt(bpfLdAbsW, offArg0)
	b.jump(bpfJeqK, prioProcess, "", "eperm")
	b.stmt(bpfLdAbsW, offArg1)
	b.jump(bpfJeqK, 0, "allow3", "eperm")

	b.label("ioprio")
	b.stmt(bpfLdAbsW, offArg0)
	b.jump(bpfJeqK, ioprioWhoProcess, "", "eperm")
	b.stmt(bpfLdAbsW, offArg1)
	b.jump(bpfJeqK, 0, "allow3", "eperm")
	b.label("allow3")
	b.stmt(bpfRetK, unix.SECCOMP_RET_ALLOW)

	b.label("clone")
	b.stmt(bpfLdAbsW, offArg0)
	b.jump(bpfJsetK, cloneNamespaceFlags, "eperm", "")
	b.label("allow2")
	b.stmt(bpfRetK, unix.SECCOMP_RET_ALLOW)
	b.label("eperm")
	b.stmt(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	b.label("enosys")
	b.stmt(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	return b.resolve()
}

// seccompInstall loads the filter on the calling thread, which must already
// have no_new_privs set.
func seccompInstall(unixSockets bool) error {
	ins, err := SeccompFilter(unixSockets)
	if err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(ins)), Filter: &ins[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp install: %w", err)
	}
	return nil
}
