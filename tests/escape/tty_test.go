//go:build linux

package escape

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/sandbox"
)

// The terminal class: mur run from a terminal must not hand that terminal to
// a command. The test starts a runtime whose controlling terminal is a real
// pty, that runtime runs the tty_inject probe sandboxed with the terminal
// leaked as its stdin, and the probe tries every way of reaching it.

// injected is what the probe tries to push into the terminal's input.
const injected = "echo INJECTED\n"

func init() {
	probes["tty_inject"] = probeTTYInject
	probes["tty_runtime"] = ttyRuntime
}

// probeTTYInject runs sandboxed, stdin a terminal that is its runtime's
// controlling terminal.
func probeTTYInject() error {
	if !isTerminal(0) {
		return broken(errors.New("stdin is not a terminal"))
	}
	// A command in a background process group of the terminal's session
	// would be stopped by SIGTTOU at the first ioctl; an attacker ignores it.
	signal.Ignore(syscall.SIGTTOU, syscall.SIGTTIN)
	var esc []string
	if sid, _ := unix.Getsid(0); sid != os.Getpid() {
		esc = append(esc, fmt.Sprintf("not a session leader (sid %d, pid %d)", sid, os.Getpid()))
	}
	if ttyNr := ctty(); ttyNr != 0 {
		esc = append(esc, fmt.Sprintf("has a controlling terminal (tty_nr %d)", ttyNr))
	}
	name, err := os.Readlink("/proc/self/fd/0")
	if err != nil {
		return broken(err)
	}
	for _, dev := range []string{"/dev/tty", name, "/dev/ptmx", "/dev/console"} {
		if fd, err := unix.Open(dev, unix.O_RDWR|unix.O_NOCTTY, 0); err == nil {
			unix.Close(fd)
			esc = append(esc, "opened "+dev)
		}
	}
	// On the leaked descriptor every input-injecting ioctl must be refused
	// by the filter itself (EPERM), whatever the kernel would have said.
	for _, c := range []byte(injected) {
		b := c
		if err := ioctlPtr(0, unix.TIOCSTI, &b); !errors.Is(err, unix.EPERM) {
			esc = append(esc, fmt.Sprintf("TIOCSTI: %v", err))
			break
		}
	}
	sub := byte(3) // TIOCL_PASTESEL
	if err := ioctlPtr(0, unix.TIOCLINUX, &sub); !errors.Is(err, unix.EPERM) {
		esc = append(esc, fmt.Sprintf("TIOCLINUX: %v", err))
	}
	for _, req := range []struct {
		name string
		req  uint
		arg  uintptr
	}{{"TIOCSCTTY", unix.TIOCSCTTY, 1}, {"TIOCCONS", unix.TIOCCONS, 0}} {
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, 0, uintptr(req.req), req.arg); e != unix.EPERM {
			esc = append(esc, fmt.Sprintf("%s: %v", req.name, e))
		}
	}
	ldisc := 0 // N_TTY, the discipline it already has
	if err := unix.IoctlSetPointerInt(0, unix.TIOCSETD, ldisc); !errors.Is(err, unix.EPERM) {
		esc = append(esc, fmt.Sprintf("TIOCSETD: %v", err))
	}
	if len(esc) > 0 {
		return errors.New(strings.Join(esc, "; "))
	}
	return nil
}

func ioctlPtr(fd int, req uint, b *byte) error {
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(b))); e != 0 {
		return e
	}
	return nil
}

func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// ctty is field 7 of /proc/self/stat: the controlling terminal's device
// number, 0 for none.
func ctty() int {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return -1
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 5 {
		return -1
	}
	n, _ := strconv.Atoi(f[4])
	return n
}

// ttyRuntime is the runtime side, started by the test with the pty as its
// controlling terminal and stdio: it runs tty_inject in a session of class
// ESCAPE_CLASS, then reads its own terminal for anything injected.
func ttyRuntime() error {
	base := os.Getenv("ESCAPE_BASE")
	class, _ := sandbox.ParseClass(os.Getenv("ESCAPE_CLASS"))
	self, _ := os.Executable()
	p := sandbox.Policy{Workdir: filepath.Join(base, "work"), Home: filepath.Join(base, "home"), Tmp: filepath.Join(base, "tmp"),
		ExecPaths: []string{self}, Cgroup: sandbox.Cgroup{MemoryBytes: 128 << 20, PidsMax: 32}, Floor: class}
	for _, d := range []string{p.Workdir, p.Home, p.Tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return broken(err)
		}
	}
	if ctty() == 0 {
		return broken(errors.New("the runtime has no controlling terminal"))
	}
	s, err := sandbox.NewSession(context.Background(), p)
	if err != nil {
		return broken(err)
	}
	defer s.Close()
	cmd := exec.Command(self)
	cmd.Env = []string{"ESCAPE_PROBE=tty_inject"}
	cmd.Stdin = os.Stdin // the terminal, leaked on purpose
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := s.Prepare(cmd); err != nil {
		return broken(err)
	}
	if err := s.Start(cmd); err != nil {
		return broken(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return broken(fmt.Errorf("probe hung: %v", <-done))
	}
	verdict := strings.TrimSpace(out.String())
	switch cmd.ProcessState.ExitCode() {
	case exitDenied:
	case exitEscaped:
		return errors.New(verdict)
	default:
		return broken(fmt.Errorf("probe: %v: %s", err, verdict))
	}
	// Whatever reached the input queue is readable here: the terminal is in
	// canonical mode and the injection ends in a newline.
	if err := unix.SetNonblock(0, true); err != nil {
		return broken(err)
	}
	fds := []unix.PollFd{{Fd: 0, Events: unix.POLLIN}}
	if n, _ := unix.Poll(fds, 300); n > 0 {
		buf := make([]byte, 256)
		if k, _ := unix.Read(0, buf); k > 0 {
			return fmt.Errorf("the terminal received %q", buf[:k])
		}
	}
	return nil
}

// openPty opens a pseudo-terminal pair: the master, and the slave's path.
func openPty(t *testing.T) (*os.File, string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	return m, "/dev/pts/" + strconv.Itoa(n)
}

func TestTerminalUnreachable(t *testing.T) {
	if os.Getenv("MUR_TEST_PRIVILEGED") != "1" {
		t.Skip("set MUR_TEST_PRIVILEGED=1 (make test-escape): the suite needs root and namespaces")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, class := range []sandbox.Class{sandbox.Scoped, sandbox.Sealed} {
		t.Run(class.String(), func(t *testing.T) {
			master, slavePath := openPty(t)
			slave, err := os.OpenFile(slavePath, os.O_RDWR|unix.O_NOCTTY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer slave.Close()
			// Drain what the terminal echoes, so a full buffer never blocks.
			go func() {
				buf := make([]byte, 1024)
				for {
					if _, err := master.Read(buf); err != nil {
						return
					}
				}
			}()
			rt := exec.Command(self)
			rt.Env = append(os.Environ(), "ESCAPE_PROBE=tty_runtime", "ESCAPE_BASE="+t.TempDir(), "ESCAPE_CLASS="+class.String())
			rt.Stdin = slave
			var errOut strings.Builder
			rt.Stdout, rt.Stderr = &errOut, &errOut
			rt.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			rt.WaitDelay = 5 * time.Second
			err = rt.Run()
			switch rt.ProcessState.ExitCode() {
			case exitDenied:
				t.Logf("denied")
			case exitEscaped:
				t.Errorf("ESCAPED: %s", errOut.String())
			default:
				t.Fatalf("runtime broke: %v %s", err, errOut.String())
			}
		})
	}
}
