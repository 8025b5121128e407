package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// watchArg0 is the argv[0] of the process that outlives a killed runtime to
// end its session: the spec's "watcher process that kills everything in
// the scope once the runtime is gone".
const watchArg0 = "mur-sandbox-watch"

// startWatcher starts the watcher for scope. It blocks reading a pipe whose
// only write end the runtime holds; EOF means the runtime closed it (Close)
// or died (SIGKILL, OOM), and either way the scope is killed and removed.
// It runs in its own session so a signal to the runtime's group misses it.
func startWatcher(cg *cgroupScope, rootDir string) (*os.File, error) {
	dirs, err := json.Marshal(watchSpec{Cgroups: cg.dirs(), Root: rootDir, Runtime: os.Getpid()})
	if err != nil {
		return nil, fmt.Errorf("session watcher: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("session watcher: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{watchArg0, string(dirs)}
	cmd.Stdin = r
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("session watcher: %w", err)
	}
	// Reaped in the background so a normal Close leaves no zombie.
	go func() { _ = cmd.Wait() }()
	return w, nil
}

// watchSpec is what the watcher removes once the runtime is gone.
type watchSpec struct {
	Cgroups []string `json:"cgroups"` // v2 directory first, if any
	Root    string   `json:"root,omitempty"`
	Runtime int      `json:"runtime"` // never killed (see cgroupScope.spare)
}

// dirs lists the scope's directories for the watcher: v2 first.
func (s *cgroupScope) dirs() []string {
	var out []string
	if s.v2 != "" {
		out = append(out, s.v2)
	}
	for _, d := range s.v1 {
		out = append(out, d)
	}
	return out
}

func runWatcher(arg string) int {
	var ws watchSpec
	if err := json.Unmarshal([]byte(arg), &ws); err != nil || len(ws.Cgroups) == 0 {
		fmt.Fprintf(os.Stderr, "mur sandbox watcher: bad scope list %q\n", arg)
		return 2
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	dirs := ws.Cgroups
	s := &cgroupScope{v2fd: -1, v1: map[string]string{}, spare: ws.Runtime}
	if fileExists(dirs[0] + "/cgroup.kill") {
		s.v2 = dirs[0]
		dirs = dirs[1:]
	}
	for i, d := range dirs {
		s.v1[fmt.Sprint(i)] = d
	}
	s.remove()
	if ws.Root != "" {
		_ = os.Remove(ws.Root)
	}
	return 0
}
