package helper

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// HolderArg0 is the argv[0] of the process that holds a session's mount
// namespace. Building the namespace once per session, and having each
// command's init enter it, keeps the namespace alive between commands: a
// namespace per command is torn down when the command exits, and that
// teardown waits for an RCU grace period before the parent's wait returns
// (tens to hundreds of milliseconds on a loaded machine).
const HolderArg0 = "mur-sandbox-holder"

// runHolder builds the namespace it was started in and the session's
// Landlock ruleset in it, says so on stdout with the ruleset attached, and
// waits for its stdin to close: the runtime closed it, or died. As pid 1 of the
// session's PID namespace it reaps every orphan reparented to it.
func runHolder(arg string) int {
	runtime.LockOSThread()
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	go func() {
		for range chld {
			for {
				pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}()
	var m MountSpec
	err := decode(arg, &m, &m.V)
	if err == nil {
		err = applyMounts(&m)
	}
	if err == nil {
		err = memfdNoexec()
	}
	var rights []byte
	if err == nil && m.LandlockABI > 0 {
		var rfd int
		if rfd, err = LandlockRuleset(m.LandlockABI, m.Landlock); err == nil {
			rights = unix.UnixRights(rfd)
			defer unix.Close(rfd)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 2
	}
	// Stdout is a unix socket: the ruleset travels with the ready line.
	if err := unix.Sendmsg(1, []byte("ready\n"), rights, nil, 0); err != nil {
		fmt.Fprintf(os.Stderr, "ready: %v\n", err)
		return 2
	}
	_, err = io.Copy(io.Discard, os.Stdin)
	if err != nil && !errors.Is(err, os.ErrClosed) {
		return 2
	}
	return 0
}

// memfdNoexec sets vm.memfd_noexec to 2 for the session's PID namespace,
// which the holder is the init of (the sysctl is per PID namespace and
// inherited by its children): a memory file is never created executable,
// and one asked for with MFD_EXEC is refused. seccomp already refuses
// memfd_create to commands; this holds where a filter would let one
// through. A kernel before 6.3 has no such sysctl.
func memfdNoexec() error {
	err := os.WriteFile("/proc/sys/vm/memfd_noexec", []byte("2"), 0)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("vm.memfd_noexec: %w", err)
	}
	return nil
}
