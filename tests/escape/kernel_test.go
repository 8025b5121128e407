//go:build linux

package escape

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/sandbox"
)

// The kernel-interface classes of docs/sandbox.md's threat model, one case
// per class: what a command can do to processes outside its session (the
// runtime and its helpers), to IPC objects, file notifications, keyrings and
// namespaces. Each probe first reads the value it then tries to write back
// unchanged, so an escape proves the permission without harming the host.

const (
	sysvKeyHost  = 0x6d757201 // a segment and a queue the runtime owns
	sysvKeyProbe = 0x6d757202 // what the probe creates in its own namespace
	mqName       = "mur-escape-mq"
)

var kernelCases = []struct {
	name  string
	probe string
	tweak func(*sandbox.Policy)
}{
	{"processes: see or name anything outside the session (PID namespace)", "proc_pidns", nil},
	{"processes: prlimit the runtime and its helpers", "proc_prlimit", nil},
	{"processes: renice the runtime, a process group, a uid", "proc_setpriority", nil},
	{"processes: move the runtime to other CPUs or scheduling", "proc_sched", nil},
	{"processes: change the runtime's I/O class", "proc_ioprio", nil},
	{"processes: signal the runtime's helpers", "proc_signal_helpers", nil},
	{"processes: ptrace or read the memory of a helper", "proc_ptrace_helpers", nil},
	{"IPC: attach the host's System V shared memory and queues, leave objects behind", "ipc_sysv", nil},
	{"IPC: POSIX message queues", "ipc_mqueue", nil},
	{"IPC: an abstract unix socket of the host", "ipc_abstract_unix", func(p *sandbox.Policy) { p.Network.UnixSockets = true }},
	{"file notifications: inotify and fanotify", "notify", nil},
	{"keyrings: add_key, keyctl, request_key", "keyring", nil},
	{"namespaces: a new user, PID or IPC namespace", "namespaces", nil},
}

func init() {
	probes["proc_pidns"] = func() error {
		ns, err := os.Readlink("/proc/self/ns/pid")
		if err != nil {
			return broken(err)
		}
		if ns == os.Getenv("RUNTIME_PIDNS") {
			return fmt.Errorf("in the runtime's PID namespace %s", ns)
		}
		if ppid := os.Getppid(); ppid != 0 {
			return fmt.Errorf("its parent, the runtime, has a pid here (%d)", ppid)
		}
		for _, pid := range targetPids() {
			if err := unix.Kill(pid, 0); err == nil {
				return fmt.Errorf("pid %d answers", pid)
			}
		}
		return nil
	}
	probes["proc_prlimit"] = func() error {
		for _, pid := range targetPids() {
			var old unix.Rlimit
			if err := unix.Prlimit(pid, unix.RLIMIT_CORE, nil, &old); err != nil {
				continue // cannot even name it
			}
			if err := unix.Prlimit(pid, unix.RLIMIT_CORE, &old, nil); err == nil {
				return fmt.Errorf("set the rlimits of pid %d", pid)
			}
		}
		// Its own limits stay the command's to lower, as ulimit does.
		var own unix.Rlimit
		if err := unix.Prlimit(0, unix.RLIMIT_CORE, nil, &own); err != nil {
			return broken(err)
		}
		if err := unix.Prlimit(0, unix.RLIMIT_CORE, &own, nil); err != nil {
			return broken(fmt.Errorf("own prlimit refused: %w", err))
		}
		return nil
	}
	probes["proc_setpriority"] = func() error {
		for _, pid := range targetPids() {
			n, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
			if err != nil {
				continue
			}
			if err := unix.Setpriority(unix.PRIO_PROCESS, pid, 20-n); err == nil {
				return fmt.Errorf("reniced pid %d", pid)
			}
		}
		// A group or a whole uid names processes outside the session: the
		// filter refuses the form itself. The uid has no processes, so an
		// escape here changes nothing.
		if err := unix.Setpriority(unix.PRIO_USER, 54321, 0); !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("setpriority(PRIO_USER): %v, want EPERM", err)
		}
		if err := unix.Setpriority(unix.PRIO_PGRP, 0, 0); !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("setpriority(PRIO_PGRP): %v, want EPERM", err)
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, 0); err != nil {
			return broken(fmt.Errorf("own setpriority refused: %w", err))
		}
		return nil
	}
	probes["proc_sched"] = func() error {
		for _, pid := range targetPids() {
			var set unix.CPUSet
			if err := unix.SchedGetaffinity(pid, &set); err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(pid, &set); err == nil {
				return fmt.Errorf("set the CPU affinity of pid %d", pid)
			}
			param := [1]int32{0}
			if _, _, e := unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(pid), 0 /* SCHED_OTHER */, uintptr(unsafe.Pointer(&param[0]))); e == 0 {
				return fmt.Errorf("set the scheduling policy of pid %d", pid)
			}
		}
		var own unix.CPUSet
		if err := unix.SchedGetaffinity(0, &own); err != nil {
			return broken(err)
		}
		if err := unix.SchedSetaffinity(0, &own); err != nil {
			return broken(fmt.Errorf("own affinity refused: %w", err))
		}
		return nil
	}
	probes["proc_ioprio"] = func() error {
		const whoProcess, whoUser = 1, 3
		for _, pid := range targetPids() {
			v, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, whoProcess, uintptr(pid), 0)
			if e != 0 {
				continue
			}
			if _, _, e := unix.Syscall(unix.SYS_IOPRIO_SET, whoProcess, uintptr(pid), v); e == 0 {
				return fmt.Errorf("set the I/O priority of pid %d", pid)
			}
		}
		if _, _, e := unix.Syscall(unix.SYS_IOPRIO_SET, whoUser, 54321, 0); e != unix.EPERM {
			return fmt.Errorf("ioprio_set(IOPRIO_WHO_USER): %v, want EPERM", e)
		}
		return nil
	}
	probes["proc_signal_helpers"] = func() error {
		for _, pid := range targetPids() {
			if err := unix.Kill(pid, 0); err == nil {
				return fmt.Errorf("may signal pid %d", pid)
			}
			fd, err := unix.PidfdOpen(pid, 0)
			if err == nil {
				err = unix.PidfdSendSignal(fd, 0, nil, 0)
				unix.Close(fd)
				if err == nil {
					return fmt.Errorf("may signal pid %d through a pidfd", pid)
				}
			}
		}
		return nil
	}
	probes["proc_ptrace_helpers"] = func() error {
		for _, pid := range targetPids() {
			if err := unix.PtraceAttach(pid); err == nil {
				_ = unix.PtraceDetach(pid)
				return fmt.Errorf("attached to pid %d", pid)
			}
			if f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid)); err == nil {
				f.Close()
				return fmt.Errorf("opened the memory of pid %d", pid)
			}
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil {
				return fmt.Errorf("read the environment of pid %d (%d bytes)", pid, len(b))
			}
		}
		return nil
	}
	probes["ipc_sysv"] = func() error {
		if id, err := unix.SysvShmGet(sysvKeyHost, 0, 0); err == nil {
			return fmt.Errorf("found the host's shared memory segment (id %d)", id)
		}
		if hostID, err := strconv.Atoi(os.Getenv("HOST_SHM_ID")); err == nil {
			if _, err := unix.SysvShmAttach(hostID, 0, unix.SHM_RDONLY); err == nil {
				return fmt.Errorf("attached the host's shared memory by id %d", hostID)
			}
		}
		if id, _, e := unix.Syscall(unix.SYS_MSGGET, sysvKeyHost, 0, 0); e == 0 {
			return fmt.Errorf("found the host's message queue (id %d)", id)
		}
		// Objects of its own: the runtime checks the host never sees them.
		if _, err := unix.SysvShmGet(sysvKeyProbe, 4096, unix.IPC_CREAT|0o600); err != nil {
			return broken(fmt.Errorf("shmget in the session: %w", err))
		}
		if _, _, e := unix.Syscall(unix.SYS_MSGGET, sysvKeyProbe, unix.IPC_CREAT|0o600, 0); e != 0 {
			return broken(fmt.Errorf("msgget in the session: %w", e))
		}
		return nil
	}
	probes["ipc_mqueue"] = func() error {
		if fd, err := mqOpen(os.Getenv("HOST_MQ"), unix.O_RDONLY, 0); err == nil {
			unix.Close(fd)
			return errors.New("opened the host's POSIX message queue")
		}
		// Creating one is refused too (Landlock: the queue filesystem lies
		// beneath no rule); one that were made would be the session's, which
		// the runtime checks.
		if fd, err := mqOpen(mqName, unix.O_RDWR|unix.O_CREAT, 0o600); err == nil {
			unix.Close(fd)
		}
		return nil
	}
	probes["ipc_abstract_unix"] = func() error {
		c, err := net.Dial("unix", "@"+os.Getenv("HOST_ABSTRACT"))
		if err == nil {
			c.Close()
			return errors.New("connected to the host's abstract unix socket")
		}
		return nil
	}
	probes["notify"] = func() error {
		if fd, err := unix.InotifyInit1(unix.IN_CLOEXEC); err == nil {
			unix.Close(fd)
			return errors.New("inotify_init1 succeeded")
		}
		if fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY); err == nil {
			unix.Close(fd)
			return errors.New("fanotify_init succeeded")
		}
		return nil
	}
	probes["keyring"] = func() error {
		if id, err := unix.AddKey("user", "mur-escape", []byte("x"), unix.KEY_SPEC_SESSION_KEYRING); err == nil {
			return fmt.Errorf("added key %d", id)
		}
		if id, err := unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_USER_KEYRING, 0, 0, 0); err == nil {
			return fmt.Errorf("read the user keyring (id %d)", id)
		}
		if id, err := unix.RequestKey("user", "mur-escape", "", unix.KEY_SPEC_SESSION_KEYRING); err == nil {
			return fmt.Errorf("requested key %d", id)
		}
		return nil
	}
	probes["namespaces"] = func() error {
		for _, flag := range []int{unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_NEWIPC, unix.CLONE_NEWUSER | unix.CLONE_NEWNS} {
			if err := unix.Unshare(flag); err == nil {
				return fmt.Errorf("unshare(%#x) succeeded", flag)
			}
			pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Cloneflags: uintptr(flag)}})
			if err == nil {
				_, _ = syscall.Wait4(pid, nil, 0, nil)
				return fmt.Errorf("clone(%#x) succeeded", flag)
			}
		}
		return nil
	}
}

// targetPids are the processes outside the session the probe aims at: the
// runtime and its helpers, from TARGET_PIDS.
func targetPids() []int {
	var out []int
	for _, f := range strings.Fields(os.Getenv("TARGET_PIDS")) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func mqOpen(name string, flags, mode int) (int, error) {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), uintptr(flags), uintptr(mode), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func mqUnlink(name string) {
	if p, err := unix.BytePtrFromString(name); err == nil {
		_, _, _ = unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(p)), 0, 0)
	}
}

// helperPids are the runtime's children that are not commands: the mount
// holder and the watcher, found by their argv[0].
func helperPids() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	me := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		_, rest, _ := strings.Cut(string(stat), ") ")
		if f := strings.Fields(rest); len(f) < 2 || f[1] != me {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.HasPrefix(string(cmdline), "mur-sandbox-holder") || strings.HasPrefix(string(cmdline), "mur-sandbox-watch") {
			out = append(out, pid)
		}
	}
	return out
}

// probeWith runs a probe like fixture.probe, with extra environment.
func (f *fixture) probeWith(name string, extra ...string) result {
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = append([]string{"ESCAPE_PROBE=" + name, "HOME=" + f.p.Home, "TMPDIR=" + f.p.Tmp}, extra...)
	if err := f.s.Prepare(cmd); err != nil {
		f.t.Fatal(err)
	}
	return f.run(cmd, f.s.Start)
}

func verdict(r result) string {
	switch r.code() {
	case exitDenied:
		return ""
	case exitEscaped:
		return strings.TrimSpace(r.out)
	}
	return fmt.Sprintf("probe broke (exit %d, signal %v): %s", r.code(), r.signal(), r.out)
}

func TestEscapeKernelInterfaces(t *testing.T) {
	if os.Getenv("MUR_TEST_PRIVILEGED") != "1" {
		t.Skip("set MUR_TEST_PRIVILEGED=1 (make test-escape): the suite needs root and namespaces")
	}
	// Host objects the probes must not reach.
	shmID, err := unix.SysvShmGet(sysvKeyHost, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = unix.SysvShmCtl(shmID, unix.IPC_RMID, nil) })
	msgID, _, e := unix.Syscall(unix.SYS_MSGGET, sysvKeyHost, unix.IPC_CREAT|0o600, 0)
	if e != 0 {
		t.Fatal(e)
	}
	t.Cleanup(func() { _, _, _ = unix.Syscall(unix.SYS_MSGCTL, msgID, unix.IPC_RMID, 0) })
	hostMQ := fmt.Sprintf("mur-escape-host-%d", os.Getpid())
	fd, err := mqOpen(hostMQ, unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	t.Cleanup(func() { mqUnlink(hostMQ) })
	abstract := fmt.Sprintf("mur-escape-%d", os.Getpid())
	ln, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })

	for _, class := range []sandbox.Class{sandbox.Scoped, sandbox.Sealed} {
		for _, c := range kernelCases {
			t.Run(class.String()+"/"+c.name, func(t *testing.T) {
				f := newFixture(t, class, c.tweak)
				helpers := helperPids()
				if len(helpers) == 0 {
					t.Fatal("no runtime helper found to aim at")
				}
				targets := strconv.Itoa(os.Getpid())
				for _, h := range helpers {
					targets += " " + strconv.Itoa(h)
				}
				pidns, _ := os.Readlink("/proc/self/ns/pid")
				r := f.probeWith(c.probe, "TARGET_PIDS="+targets, "RUNTIME_PIDNS="+pidns, "HOST_SHM_ID="+strconv.Itoa(shmID),
					"HOST_MQ="+hostMQ, "HOST_ABSTRACT="+abstract)
				if v := verdict(r); v != "" {
					t.Fatalf("ESCAPED: %s", v)
				}
				// What the probe made in its namespace is not the host's.
				if _, err := unix.SysvShmGet(sysvKeyProbe, 0, 0); err == nil {
					t.Errorf("ESCAPED: the probe's shared memory segment is in the host's namespace")
				}
				if _, _, e := unix.Syscall(unix.SYS_MSGGET, sysvKeyProbe, 0, 0); e == 0 {
					t.Errorf("ESCAPED: the probe's message queue is in the host's namespace")
				}
				if fd, err := mqOpen(mqName, unix.O_RDONLY, 0); err == nil {
					unix.Close(fd)
					mqUnlink(mqName)
					t.Errorf("ESCAPED: the probe's POSIX queue is in the host's namespace")
				}
			})
		}
	}
	// Leave no host objects from a broken run behind.
	if id, err := unix.SysvShmGet(sysvKeyProbe, 0, 0); err == nil {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	}
	if id, _, e := unix.Syscall(unix.SYS_MSGGET, sysvKeyProbe, 0, 0); e == 0 {
		_, _, _ = unix.Syscall(unix.SYS_MSGCTL, id, unix.IPC_RMID, 0)
	}
}

// TestSessionIPCDiesWithSession: the session's IPC namespace, and so every
// object a command created in it, ends with the session.
func TestSessionIPCDiesWithSession(t *testing.T) {
	if os.Getenv("MUR_TEST_PRIVILEGED") != "1" {
		t.Skip("set MUR_TEST_PRIVILEGED=1 (make test-escape): the suite needs root and namespaces")
	}
	f := newFixture(t, sandbox.Scoped, nil)
	// cmd.Start, not Session.Start: the init forks itself into the
	// session's PID namespace.
	pidns, _ := os.Readlink("/proc/self/ns/pid")
	if r := f.shell("readlink /proc/self/ns/pid"); r.code() != 0 || strings.TrimSpace(r.out) == pidns {
		t.Fatalf("a command started by cmd.Start is not in a PID namespace of its own: %q (exit %d), the runtime's %s", r.out, r.code(), pidns)
	}
	mine, _ := os.Readlink("/proc/self/ns/ipc")
	r := f.shell("readlink /proc/self/ns/ipc")
	ns := strings.TrimSpace(r.out)
	if r.code() != 0 || !strings.HasPrefix(ns, "ipc:[") || ns == mine {
		t.Fatalf("a command's IPC namespace is %q (exit %d), the runtime's %s", ns, r.code(), mine)
	}
	if v := verdict(f.probeWith("ipc_sysv")); v != "" {
		t.Fatalf("ESCAPED: %s", v)
	}
	f.s.Close()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/" + e.Name() + "/ns/ipc"); l == ns {
			t.Fatalf("pid %s still holds the session's IPC namespace after Close", e.Name())
		}
	}
}

// hostPid maps a pid a command printed, as its PID namespace numbers it, to
// the host's number for the same process (a process named comm); 0 when
// none matches. Without a PID namespace the two are the same.
func hostPid(nsPid int, comm string) int {
	ents, _ := os.ReadDir("/proc")
	want := strconv.Itoa(nsPid)
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var name string
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Name:"); ok {
				name = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok && name == comm {
				f := strings.Fields(v)
				if len(f) > 0 && f[len(f)-1] == want {
					n, _ := strconv.Atoi(e.Name())
					return n
				}
			}
		}
	}
	return 0
}
