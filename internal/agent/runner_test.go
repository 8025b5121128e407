package agent_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"syscall"
	"time"

	"github.com/murmur/mur/internal/agent"
)

// execRunner runs a done check as a plain child process in its own process
// group, killed at the timeout: the loop's side of the contract, without
// the shell area's containment.
type execRunner struct{}

func (execRunner) RunCheck(ctx context.Context, argv []string, dir string, timeout time.Duration) (agent.CheckResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return agent.CheckResult{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	res := agent.CheckResult{}
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
		res.TimedOut = true
	}
	res.Output = out.String()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.ExitCode = ee.ExitCode()
	} else if err != nil {
		return res, err
	}
	return res, nil
}
