package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/murmur/mur/internal/sandbox/helper"
)

// startWatcher starts the watcher for scope. It blocks reading a pipe whose
// only write end the runtime holds; EOF means the runtime closed it (Close)
// or died (SIGKILL, OOM), and either way the scope is killed and removed.
// It runs in its own session so a signal to the runtime's group misses it.
func startWatcher(cg *cgroupScope, rootDir string) (*os.File, error) {
	dirs, err := json.Marshal(helper.WatchSpec{V: helper.Protocol, Cgroups: cg.dirs(), Root: rootDir, Runtime: os.Getpid()})
	if err != nil {
		return nil, fmt.Errorf("session watcher: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("session watcher: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(helperPath())
	cmd.Args = []string{helper.WatchArg0, string(dirs)}
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
