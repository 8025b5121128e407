//go:build linux

package escape

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/sandbox"
)

// The execute class: with workdir_exec false, nothing the capsule writes can
// run as code, under any name (docs/sandbox.md lists each form and what
// closes it). Every probe writes a copy of /bin/true, whose exit 0 is the
// proof that the copy ran.

// execForms are the probes of the class, one per way the kernel offers.
var execForms = []struct{ name, probe string }{
	{"execve of a written file", "exec_written"},
	{"memfd_create, then execveat, /proc/self/fd exec and ld.so /proc/self/fd", "exec_memfd"},
	{"memfd_create with MFD_EXEC", "exec_memfd_exec_flag"},
	{"execveat AT_EMPTY_PATH on an O_PATH descriptor of a written file", "exec_execveat_opath"},
	{"an O_TMPFILE file executed through its descriptor", "exec_tmpfile"},
	{"the dynamic loader runs a written file (ld.so ./file)", "exec_ldso"},
	{"mmap PROT_EXEC of a written file", "exec_mmap"},
	{"READ_IMPLIES_EXEC personality, then mmap PROT_READ", "exec_read_implies_exec"},
	{"write code into the process through /proc/self/mem", "exec_proc_mem"},
	{"a file created in /dev/shm", "exec_dev_shm"},
}

func init() {
	probes["exec_memfd"] = probeExecMemfd(unix.MFD_CLOEXEC)
	probes["exec_memfd_exec_flag"] = probeExecMemfd(unix.MFD_CLOEXEC | unix.MFD_EXEC)
	probes["exec_execveat_opath"] = func() error {
		p, err := writeTrue(".")
		if err != nil {
			return broken(err)
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return broken(err)
		}
		return runFD(fd)
	}
	probes["exec_tmpfile"] = func() error {
		fd, err := unix.Open(".", unix.O_TMPFILE|unix.O_RDWR, 0o755)
		if err != nil {
			return broken(err)
		}
		if err := copyTrue(fd); err != nil {
			return broken(err)
		}
		return runFD(fd)
	}
	probes["exec_ldso"] = func() error {
		p, err := writeTrue(".")
		if err != nil {
			return broken(err)
		}
		for _, ld := range []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"} {
			if _, err := os.Stat(ld); err != nil {
				continue
			}
			return mustNotRun(ld, []string{ld, "./" + filepath.Base(p)})
		}
		return broken(errors.New("no dynamic loader found"))
	}
	probes["exec_mmap"] = func() error {
		p, err := writeTrue(".")
		if err != nil {
			return broken(err)
		}
		f, err := os.Open(p)
		if err != nil {
			return broken(err)
		}
		defer f.Close()
		b, err := unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE)
		if err == nil {
			_ = unix.Munmap(b)
			return errors.New("mapped a written file executable")
		}
		return nil
	}
	probes["exec_read_implies_exec"] = func() error {
		p, err := writeTrue(".")
		if err != nil {
			return broken(err)
		}
		const readImpliesExec = 0x0400000
		if _, _, e := unix.Syscall(unix.SYS_PERSONALITY, readImpliesExec, 0, 0); e != 0 {
			return nil // refused outright
		}
		f, err := os.Open(p)
		if err != nil {
			return broken(err)
		}
		defer f.Close()
		b, err := unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ, unix.MAP_PRIVATE)
		if err != nil {
			return nil
		}
		defer unix.Munmap(b)
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			return broken(err)
		}
		for _, line := range strings.Split(string(maps), "\n") {
			if f := strings.Fields(line); len(f) >= 6 && strings.HasSuffix(f[5], "/fresh") && strings.Contains(f[1], "x") {
				return fmt.Errorf("a read mapping of a written file became executable: %s", line)
			}
		}
		return nil
	}
	probes["exec_proc_mem"] = func() error {
		for _, p := range []string{"/proc/self/mem", fmt.Sprintf("/proc/%d/mem", os.Getpid())} {
			if f, err := os.OpenFile(p, os.O_RDWR, 0); err == nil {
				f.Close()
				return fmt.Errorf("opened %s for writing", p)
			}
		}
		return nil
	}
	probes["exec_dev_shm"] = func() error {
		f, err := os.OpenFile("/dev/shm/fresh", os.O_CREATE|os.O_RDWR, 0o755)
		if err != nil {
			return nil
		}
		defer os.Remove("/dev/shm/fresh")
		if err := copyTrue(int(f.Fd())); err != nil {
			return broken(err)
		}
		f.Close()
		return mustNotRun("/dev/shm/fresh", []string{"fresh"})
	}
}

// probeExecMemfd writes /bin/true into a memfd and runs it both ways.
func probeExecMemfd(flags int) func() error {
	return func() error {
		fd, err := unix.MemfdCreate("fresh", flags)
		if err != nil {
			return nil // the file cannot even be made
		}
		if err := copyTrue(fd); err != nil {
			return broken(err)
		}
		_ = unix.Fchmod(fd, 0o755)
		if err := runFD(fd); err != nil {
			return err
		}
		// The loader maps what it is given, executable or not.
		ld := "/lib64/ld-linux-x86-64.so.2"
		return mustNotRun(ld, []string{ld, fmt.Sprintf("/proc/self/fd/%d", fd)})
	}
}

func writeTrue(dir string) (string, error) {
	b, err := os.ReadFile("/bin/true")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "fresh")
	return p, os.WriteFile(p, b, 0o755)
}

func copyTrue(fd int) error {
	b, err := os.ReadFile("/bin/true")
	if err != nil {
		return err
	}
	_, err = unix.Write(fd, b)
	return err
}

// runFD runs the file behind fd by execveat(AT_EMPTY_PATH) and by its
// /proc/self/fd name, each in a child, and fails if either ran.
func runFD(fd int) error {
	if err := mustNotRunAt(fd); err != nil {
		return err
	}
	p := fmt.Sprintf("/proc/self/fd/%d", fd)
	return mustNotRun(p, []string{"fresh"})
}

// mustNotRun starts path in a child and fails if it exits 0 (the copy of
// /bin/true ran).
func mustNotRun(path string, argv []string) error {
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
	if err != nil {
		return nil
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		return broken(err)
	}
	if ws.Exited() && ws.ExitStatus() == 0 {
		return fmt.Errorf("ran %v", argv)
	}
	return nil
}

// mustNotRunAt forks a child that calls execveat(fd, "", AT_EMPTY_PATH).
// The child is this binary re-run as the exec_at_child probe, so the call
// is made from Go without an unsafe fork.
func mustNotRunAt(fd int) error {
	self, err := os.Executable()
	if err != nil {
		return broken(err)
	}
	env := []string{"ESCAPE_PROBE=exec_at_child", fmt.Sprintf("EXEC_FD=%d", fd)}
	pid, err := syscall.ForkExec(self, []string{self}, &syscall.ProcAttr{Env: env, Files: fdTable(fd)})
	if err != nil {
		return broken(err)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		return broken(err)
	}
	if ws.Exited() && ws.ExitStatus() == 0 {
		return errors.New("execveat(AT_EMPTY_PATH) ran the file")
	}
	return nil
}

// fdTable passes stdio and fd at its own number.
func fdTable(fd int) []uintptr {
	t := make([]uintptr, fd+1)
	for i := range t {
		t[i] = uintptr(i)
	}
	return t
}

func init() {
	// exec_at_child execs what EXEC_FD names; on failure it exits 3, never 0.
	probes["exec_at_child"] = func() error {
		var fd int
		if _, err := fmt.Sscan(os.Getenv("EXEC_FD"), &fd); err != nil {
			os.Exit(3)
		}
		empty, _ := unix.BytePtrFromString("")
		argv, _ := syscall.SlicePtrFromStrings([]string{"fresh"})
		envv := []*byte{nil}
		_, _, e := unix.Syscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(empty)),
			uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])), unix.AT_EMPTY_PATH, 0)
		fmt.Fprintln(os.Stderr, "execveat:", e)
		os.Exit(3)
		return nil
	}
}

func TestEscapeExec(t *testing.T) {
	if os.Getenv("MUR_TEST_PRIVILEGED") != "1" {
		t.Skip("set MUR_TEST_PRIVILEGED=1 (make test-escape): the suite needs root and namespaces")
	}
	for _, class := range []sandbox.Class{sandbox.Scoped, sandbox.Sealed} {
		for _, c := range execForms {
			t.Run(class.String()+"/"+c.name, func(t *testing.T) {
				f := newFixture(t, class, nil)
				if v := probeHeld(c.probe)(f); v != "" {
					t.Errorf("ESCAPED: %s", v)
				}
			})
		}
	}
	// The forms must run when workdir_exec allows it, or a probe that
	// cannot run anything would pass for a sandbox that holds.
	t.Run("allowed: workdir_exec true runs a written file", func(t *testing.T) {
		f := newFixture(t, sandbox.Scoped, func(p *sandbox.Policy) { p.WorkdirExec = true; p.Floor = 0 })
		r := f.probe("exec_ldso")
		if r.code() != exitEscaped {
			t.Errorf("ld.so did not run a written file with workdir_exec: true (exit %d): %s", r.code(), r.out)
		}
	})
}

// TestMemfdNoexecInSession: the session's PID namespace has vm.memfd_noexec
// 2, so a memory file could not be executable even past the filter.
func TestMemfdNoexecInSession(t *testing.T) {
	if os.Getenv("MUR_TEST_PRIVILEGED") != "1" {
		t.Skip("set MUR_TEST_PRIVILEGED=1 (make test-escape): the suite needs root and namespaces")
	}
	if _, err := os.Stat("/proc/sys/vm/memfd_noexec"); err != nil {
		t.Skip("this kernel has no vm.memfd_noexec")
	}
	f := newFixture(t, sandbox.Scoped, nil)
	if r := f.shell("cat /proc/sys/vm/memfd_noexec"); strings.TrimSpace(r.out) != "2" {
		t.Errorf("ESCAPED: vm.memfd_noexec in the session is %q (exit %d), want 2", r.out, r.code())
	}
}
