package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/sandbox/helper"
)

// mountHolder is a running holder.
type mountHolder struct {
	cmd  *exec.Cmd
	stop *os.File // write end of the holder's stdin; closing it ends the holder
	ns   *os.File // the namespace, passed to each command's init
	ipc  *os.File // the session's IPC namespace, passed the same way
	pid  *os.File // the session's PID namespace, whose init the holder is
	// ruleset is the session's Landlock ruleset, built by the holder in its
	// namespace; nil without Landlock.
	ruleset *os.File
}

// readReady reads the holder's ready line and the descriptor sent with it.
func readReady(f *os.File) (*os.File, error) {
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(f.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, err
		}
		for i := range msgs {
			got, err := unix.ParseUnixRights(&msgs[i])
			if err != nil {
				return nil, err
			}
			fds = append(fds, got...)
		}
	}
	if string(buf[:n]) != "ready\n" || len(fds) > 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("not ready")
	}
	if len(fds) == 0 {
		return nil, nil
	}
	return os.NewFile(uintptr(fds[0]), "landlock-ruleset"), nil
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
	m.V = helper.Protocol
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("mount holder: %w", err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("mount holder: %w", err)
	}
	defer inR.Close()
	cmd := exec.Command(helperPath())
	cmd.Args = []string{helper.HolderArg0, string(raw)}
	cmd.Env = []string{}
	cmd.Stdin = inR
	// Stdout is a unix socket, not a pipe: the ready line carries the
	// session's Landlock ruleset, built inside the namespace.
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		inW.Close()
		return nil, fmt.Errorf("mount holder: %w", err)
	}
	out, theirs := os.NewFile(uintptr(pair[0]), "holder"), os.NewFile(uintptr(pair[1]), "holder")
	defer out.Close()
	cmd.Stdout = theirs
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWPID, Setsid: true}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		inW.Close()
		return nil, fmt.Errorf("mount holder: %w", err)
	}
	h := &mountHolder{cmd: cmd, stop: inW}
	ruleset, err := readReady(out)
	if err != nil {
		h.close()
		return nil, fmt.Errorf("mount holder: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	h.ruleset = ruleset
	if m.LandlockABI > 0 && ruleset == nil {
		h.close()
		return nil, errors.New("mount holder: no Landlock ruleset with the ready line")
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
	if h.ruleset != nil {
		h.ruleset.Close()
	}
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
