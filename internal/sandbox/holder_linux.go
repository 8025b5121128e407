package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/murmur/mur/internal/sandbox/helper"
)

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
