package helper

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// InitArg0 is the argv[0] Session.Prepare gives the re-executed init; the
// spec travels as argv[1]. Carrying it in argv rather than the environment
// means a caller that sets cmd.Env after Prepare cannot silently unsandbox
// the command, and the target never sees it.
const InitArg0 = "mur-sandbox-init"

// InitSpec is everything the re-executed init applies before execve.
type InitSpec struct {
	// V is Protocol: a helper from another build refuses the spec.
	V    int      `json:"v"`
	Path string   `json:"path"`
	Args []string `json:"args"`

	// NetnsFD is the inherited descriptor of the session's network
	// namespace, or -1.
	NetnsFD int `json:"netns_fd"`
	// CgroupJoin are the cgroup v1 directories to be in (v2 membership is
	// set at clone time); a command started by Session.Start is born in
	// them and joins nothing.
	CgroupJoin []CgroupJoin `json:"cgroup_join,omitempty"`
	Rlimits    []Rlimit     `json:"rlimits,omitempty"`

	// MntnsFD is the inherited descriptor of the session's mount namespace
	// (see holder_linux.go), or -1.
	MntnsFD int `json:"mntns_fd"`
	// IpcnsFD is the inherited descriptor of the session's IPC namespace
	// (held by the same holder), or -1.
	IpcnsFD int `json:"ipcns_fd"`
	// PidnsFD is the inherited descriptor of the session's PID namespace,
	// or -1. A command started by Session.Start is born in it; one started
	// by cmd.Start is not, and its init forks itself into it (enterPidns).
	PidnsFD int `json:"pidns_fd"`
	// MaxFD is the highest descriptor the caller passed (stdio and
	// ExtraFiles), which the init's fork into the PID namespace keeps.
	MaxFD int `json:"max_fd"`

	// LandlockFD is the inherited descriptor of the session's Landlock
	// ruleset, built once per session where the commands' view of the
	// filesystem is (the holder, else the runtime), or -1 for no Landlock.
	// The init enforces it and closes it before exec.
	LandlockFD int `json:"landlock_fd"`
	// CapLast is /proc/sys/kernel/cap_last_cap, read once per session.
	CapLast     int  `json:"cap_last"`
	Seccomp     bool `json:"seccomp"`
	UnixSockets bool `json:"unix_sockets"`
	// Proxy is the HTTP proxy's address; ProxyEnv's variables are added
	// to the target's environment.
	Proxy string `json:"proxy,omitempty"`
}

type CgroupJoin struct {
	Controller string `json:"controller"` // v1 name, as in /proc/self/cgroup
	Path       string `json:"path"`       // within the hierarchy
	Procs      string `json:"procs"`      // the cgroup.procs file
}

type Rlimit struct {
	Resource int    `json:"resource"`
	Cur      uint64 `json:"cur"`
	Max      uint64 `json:"max"`
}

// Bind is one bind mount: Src onto Dst (Dst is inside the composed root
// when sealed, else Src itself).
type Bind struct {
	Src string `json:"src"`
	// Dst is where Src appears, when not at its own path (the session's tmp
	// folder at /tmp).
	Dst    string `json:"dst,omitempty"`
	RO     bool   `json:"ro,omitempty"`
	NoExec bool   `json:"noexec,omitempty"`
}

type MountSpec struct {
	V int `json:"v"` // Protocol
	// Root, when set, is an empty host directory the composed root is
	// built on (sealed).
	Root     string      `json:"root,omitempty"`
	Binds    []Bind      `json:"binds"`
	Symlinks [][2]string `json:"symlinks,omitempty"` // {target, link}
	// Proc mounts a new procfs instance at /proc that hides processes the
	// command cannot ptrace.
	Proc bool `json:"proc,omitempty"`
	// LandlockABI and Landlock, when set, are the session's Landlock
	// rules: the holder builds the ruleset inside the namespace it built
	// and sends it back with its ready line.
	LandlockABI int            `json:"landlock_abi,omitempty"`
	Landlock    []LandlockRule `json:"landlock,omitempty"`
}

// Main turns this process into the sandbox init when Session.Prepare started
// it, and returns at once otherwise. Call it as the first statement of main
// and of TestMain in any test binary that starts sandboxed commands. As the
// init it never returns: it execs the target or exits 126 (127 when the
// target does not exist).
func Main() {
	if len(os.Args) == 2 && os.Args[0] == WatchArg0 {
		os.Exit(runWatcher(os.Args[1]))
	}
	if len(os.Args) == 2 && os.Args[0] == HolderArg0 {
		os.Exit(runHolder(os.Args[1]))
	}
	if len(os.Args) != 2 || os.Args[0] != InitArg0 {
		return
	}
	// Every per-thread attribute the target inherits (network namespace,
	// Landlock domain, seccomp filter, capabilities) is set on this thread,
	// which then calls execve.
	runtime.LockOSThread()
	var spec InitSpec
	err := decode(os.Args[1], &spec, &spec.V)
	if err == nil {
		err = runInit(&spec)
	}
	fmt.Fprintf(os.Stderr, "mur sandbox: %v\n", err)
	if errors.Is(err, unix.ENOENT) {
		os.Exit(127)
	}
	os.Exit(126)
}

func runInit(s *InitSpec) error {
	if s.PidnsFD >= 0 {
		in, err := inPidns(s.PidnsFD)
		if err != nil {
			return err
		}
		if !in {
			return enterPidns(s)
		}
		unix.Close(s.PidnsFD)
	}
	// exec.Cmd.Dir was applied before this init ran, on the host's mounts.
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	if s.NetnsFD >= 0 {
		if err := unix.Setns(s.NetnsFD, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("join network namespace: %w", err)
		}
		unix.Close(s.NetnsFD)
	}
	if len(s.CgroupJoin) > 0 {
		b, err := os.ReadFile("/proc/self/cgroup")
		if err != nil {
			return fmt.Errorf("join cgroup: %w", err)
		}
		cur := ParseProcCgroup(string(b))
		pid := []byte(strconv.Itoa(os.Getpid()))
		for _, j := range s.CgroupJoin {
			if cur[j.Controller] == j.Path {
				continue
			}
			if err := os.WriteFile(j.Procs, pid, 0); err != nil {
				return fmt.Errorf("join cgroup: %w", err)
			}
		}
	}
	if s.MntnsFD >= 0 {
		// A mount namespace can only be entered by a thread that shares its
		// filesystem context with no other, so this thread takes its own.
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			return fmt.Errorf("unshare fs context: %w", err)
		}
		if err := unix.Setns(s.MntnsFD, unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("join mount namespace: %w", err)
		}
		unix.Close(s.MntnsFD)
		// Entering the namespace moved root and working directory to its
		// root; the directory is re-entered by path, on the new binds.
		if err := unix.Chdir(wd); err != nil {
			return fmt.Errorf("chdir %q: %w", wd, err)
		}
	}
	if s.IpcnsFD >= 0 {
		if err := unix.Setns(s.IpcnsFD, unix.CLONE_NEWIPC); err != nil {
			return fmt.Errorf("join IPC namespace: %w", err)
		}
		unix.Close(s.IpcnsFD)
	}
	for _, r := range s.Rlimits {
		// syscall.Setrlimit, not unix: it also stops the runtime restoring
		// its saved RLIMIT_NOFILE on exec.
		if err := syscall.Setrlimit(r.Resource, &syscall.Rlimit{Cur: r.Cur, Max: r.Max}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", r.Resource, err)
		}
	}
	if s.LandlockFD >= 0 {
		err := landlockRestrictSelf(s.LandlockFD)
		unix.Close(s.LandlockFD)
		if err != nil {
			return err
		}
	}
	if err := dropCapabilities(s.CapLast); err != nil {
		return err
	}
	if s.Seccomp {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %w", err)
		}
		if err := seccompInstall(s.UnixSockets); err != nil {
			return err
		}
	}
	// The target gets the caller's cmd.Env and, with a network namespace,
	// the proxy variables: nothing else.
	env := os.Environ()
	if s.Proxy != "" {
		env = append(env, ProxyEnv(s.Proxy)...)
	}
	if err := unix.Exec(s.Path, s.Args, env); err != nil {
		return fmt.Errorf("exec %q: %w", s.Path, err)
	}
	return nil
}

// dropCapabilities empties the bounding, ambient, effective, permitted and
// inheritable sets, so even a root target runs without privilege.
func dropCapabilities(last int) error {
	if last <= 0 {
		last = CapLast()
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			if err == unix.EPERM && os.Geteuid() != 0 {
				break // an unprivileged mur has nothing to drop
			}
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// CapLast is the highest capability this kernel knows (40 when it does not
// say).
func CapLast() int {
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return 40
}

// applyMounts makes every mount change private to this namespace, then
// binds each path (read-only, noexec) in place, or onto a composed root.
func applyMounts(m *MountSpec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if m.Root != "" {
		if err := unix.Mount("tmpfs", m.Root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=16m"); err != nil {
			return fmt.Errorf("composed root: %w", err)
		}
		for _, l := range m.Symlinks {
			dst := filepath.Join(m.Root, l[1])
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return fmt.Errorf("composed root: %w", err)
			}
			if err := os.Symlink(l[0], dst); err != nil {
				return fmt.Errorf("composed root: %w", err)
			}
		}
	}
	for _, b := range m.Binds {
		dst := b.Src
		if b.Dst != "" {
			dst = b.Dst
		}
		if m.Root != "" {
			dst = filepath.Join(m.Root, dst)
			if err := mkTarget(b.Src, dst); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				return err
			}
		}
		if err := unix.Mount(b.Src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if err == unix.ENOENT && m.Root == "" {
				continue
			}
			return fmt.Errorf("bind %q: %w", b.Src, err)
		}
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_NOSUID)
		if b.RO {
			flags |= unix.MS_RDONLY
		}
		if b.NoExec {
			flags |= unix.MS_NOEXEC | unix.MS_NODEV
		}
		if err := unix.Mount("", dst, "", flags, ""); err != nil {
			return fmt.Errorf("remount %q: %w", b.Src, err)
		}
	}
	if m.Proc {
		dst := filepath.Join(m.Root, "/proc")
		if err := os.MkdirAll(dst, 0o555); err != nil {
			return fmt.Errorf("proc: %w", err)
		}
		if err := unix.Mount("proc", dst, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "hidepid=ptraceable"); err != nil {
			return fmt.Errorf("mount proc: %w", err)
		}
	}
	if m.Root == "" {
		return nil
	}
	if err := unix.Chdir(m.Root); err != nil {
		return fmt.Errorf("composed root: %w", err)
	}
	if err := os.Mkdir(".oldroot", 0o700); err != nil {
		return fmt.Errorf("composed root: %w", err)
	}
	if err := unix.PivotRoot(".", ".oldroot"); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("composed root: %w", err)
	}
	if err := unix.Unmount("/.oldroot", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	if err := os.Remove("/.oldroot"); err != nil {
		return fmt.Errorf("composed root: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("read-only root: %w", err)
	}
	return nil
}

// mkTarget creates the empty file or directory src is bound onto, unless an
// earlier bind already shows one there (an allowlisted /usr/bin/bash inside
// the bound /usr: opening that for writing fails read-only, or busy).
func mkTarget(src, dst string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if d, err := os.Stat(dst); err == nil && d.IsDir() == st.IsDir() {
		return nil
	}
	if st.IsDir() {
		return os.MkdirAll(dst, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// inPidns says whether this process lives in the PID namespace fd names.
func inPidns(fd int) (bool, error) {
	var want, have unix.Stat_t
	if err := unix.Fstat(fd, &want); err != nil {
		return false, fmt.Errorf("session PID namespace: %w", err)
	}
	if err := unix.Stat("/proc/self/ns/pid", &have); err != nil {
		return false, fmt.Errorf("session PID namespace: %w", err)
	}
	return want.Dev == have.Dev && want.Ino == have.Ino, nil
}

// enterPidns runs this init again as a child born in the session's PID
// namespace (setns on a PID namespace moves only the caller's future
// children), and ends as that child ended. It stays outside as the
// command's parent, in the same session and process group, so a kill of
// the group reaches both; the signals it could catch it ignores, leaving
// the child to answer them and this process to report how it ended.
func enterPidns(s *InitSpec) error {
	if err := unix.Setns(s.PidnsFD, unix.CLONE_NEWPID); err != nil {
		return fmt.Errorf("join PID namespace: %w", err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	go func() {
		for range sigs {
		}
	}()
	files := make([]uintptr, s.MaxFD+1)
	for i := range files {
		files[i] = uintptr(i)
	}
	pid, err := syscall.ForkExec("/proc/self/exe", os.Args, &syscall.ProcAttr{Env: os.Environ(), Files: files})
	if err != nil {
		return fmt.Errorf("start in PID namespace: %w", err)
	}
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("wait in PID namespace: %w", err)
	}
	if ws.Signaled() {
		// Die of the same signal, so the caller's wait status (and
		// LimitHit) reads SIGXCPU, SIGXFSZ or SIGKILL as the command's.
		// Go keeps handlers for the signals it ignores; the raw sigaction
		// puts the default action back (an all-zero struct is SIG_DFL).
		_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}) // the command's core, if any, was its own
		var dfl [4]uint64
		_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(ws.Signal()), uintptr(unsafe.Pointer(&dfl[0])), 0, 8, 0, 0)
		_ = unix.Tgkill(os.Getpid(), unix.Gettid(), ws.Signal())
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(ws.ExitStatus())
	return nil
}
