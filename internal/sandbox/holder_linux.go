package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// holderArg0 is the argv[0] of the process that holds a session's mount
// namespace. Building the namespace once per session, and having each
// command's init enter it, keeps the namespace alive between commands: a
// namespace per command is torn down when the command exits, and that
// teardown waits for an RCU grace period before the parent's wait returns
// (tens to hundreds of milliseconds on a loaded machine).
const holderArg0 = "mur-sandbox-holder"

// mountHolder is a running holder.
type mountHolder struct {
	cmd  *exec.Cmd
	stop *os.File // write end of the holder's stdin; closing it ends the holder
	ns   *os.File // the namespace, passed to each command's init
	ipc  *os.File // the session's IPC namespace, passed the same way
	pid  *os.File // the session's PID namespace, whose init the holder is
}

// startHolder starts a holder in a new mount namespace built from m, and
// new IPC and PID namespaces, and returns once they are ready. The IPC
// namespace gives the session System V shared memory, message queues and
// semaphores and POSIX message queues of its own: the host's are out of
// reach, and what commands create dies with the holder. In the PID
// namespace the holder is pid 1: commands see, and can name, only the
// session's processes (never mur or its helpers), orphans are reaped by the
// holder, and when it exits the kernel kills every process left in it.
func startHolder(m *mountSpec) (*mountHolder, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("mount holder: %w", err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("mount holder: %w", err)
	}
	defer inR.Close()
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{holderArg0, string(raw)}
	cmd.Env = []string{}
	cmd.Stdin = inR
	out, err := cmd.StdoutPipe()
	if err != nil {
		inW.Close()
		return nil, fmt.Errorf("mount holder: %w", err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWPID, Setsid: true}
	if err := cmd.Start(); err != nil {
		inW.Close()
		return nil, fmt.Errorf("mount holder: %w", err)
	}
	h := &mountHolder{cmd: cmd, stop: inW}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		h.close()
		return nil, fmt.Errorf("mount holder: %s", strings.TrimSpace(stderr.String()))
	}
	ns, err := os.Open("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/mnt")
	if err != nil {
		h.close()
		return nil, fmt.Errorf("mount holder: %w", err)
	}
	h.ns = ns
	ipc, err := os.Open("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/ipc")
	if err != nil {
		h.close()
		return nil, fmt.Errorf("mount holder: %w", err)
	}
	h.ipc = ipc
	pidns, err := os.Open("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/pid")
	if err != nil {
		h.close()
		return nil, fmt.Errorf("mount holder: %w", err)
	}
	h.pid = pidns
	return h, nil
}

func (h *mountHolder) close() {
	if h.ns != nil {
		h.ns.Close()
	}
	if h.ipc != nil {
		h.ipc.Close()
	}
	if h.pid != nil {
		h.pid.Close()
	}
	h.stop.Close()
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
}

// runHolder builds the namespace it was started in, says so, and waits for
// its stdin to close: the runtime closed it, or died. As pid 1 of the
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
	var m mountSpec
	err := json.Unmarshal([]byte(arg), &m)
	if err == nil {
		err = applyMounts(&m)
	}
	if err == nil {
		err = memfdNoexec()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 2
	}
	if _, err := os.Stdout.WriteString("ready\n"); err != nil {
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
