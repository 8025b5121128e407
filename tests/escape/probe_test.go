//go:build linux

package escape

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Probe exit codes.
const (
	exitDenied  = 0 // the attack failed, as it must (or an allowed action worked)
	exitEscaped = 1 // the attack succeeded (or an allowed action was refused)
	exitBroken  = 2 // the probe could not run its case
)

// probes are the attacks a sandboxed copy of this test binary runs, chosen
// by ESCAPE_PROBE. Each returns nil when the sandbox held, or what escaped.
var probes = map[string]func() error{
	"read_shadow":  func() error { return mustFail(os.ReadFile("/etc/shadow")) },
	"read_sibling": func() error { return mustFail(os.ReadFile(os.Getenv("SIBLING"))) },
	"proc_fd_reopen": func() error {
		// fd 3 is the sibling, opened by the runtime and inherited.
		return mustFail(os.ReadFile("/proc/self/fd/3"))
	},
	"ro_open_write": func() error { return mustFail(os.OpenFile("ro/f", os.O_WRONLY|os.O_APPEND, 0)) },
	"ro_rename_into": func() error {
		if err := os.WriteFile("moved", []byte("x"), 0o644); err != nil {
			return broken(err)
		}
		return mustFailErr(os.Rename("moved", "ro/moved"))
	},
	"ro_unlink":   func() error { return mustFailErr(os.Remove("ro/f")) },
	"ro_truncate": func() error { return mustFailErr(os.Truncate("ro/f", 0)) },
	"ro_symlink": func() error {
		if err := os.Symlink("ro/f", "link"); err != nil {
			return broken(err)
		}
		return mustFail(os.OpenFile("link", os.O_WRONLY|os.O_TRUNC, 0))
	},
	"exec_written": func() error {
		for _, dir := range []string{".", os.Getenv("HOME"), os.Getenv("TMPDIR")} {
			b, err := os.ReadFile("/bin/true")
			if err != nil {
				return broken(err)
			}
			p := filepath.Join(dir, "fresh")
			if err := os.WriteFile(p, b, 0o755); err != nil {
				return broken(err)
			}
			if err := syscall.Exec(p, []string{p}, nil); err == nil {
				return errors.New("exec succeeded")
			}
		}
		return nil
	},
	"net_name_denied": func() error {
		for _, target := range []string{"localhost:" + os.Getenv("DENIED_PORT"), "metadata.example:80"} {
			if err := connectVia(target); err == nil {
				return fmt.Errorf("reached %s", target)
			}
		}
		return nil
	},
	"net_ip_denied": func() error {
		target := "127.0.0.1:" + os.Getenv("DENIED_PORT")
		if err := connectVia(target); err == nil {
			return fmt.Errorf("reached %s", target)
		}
		return nil
	},
	"udp_out": func() error {
		for _, target := range []string{"127.0.0.1:" + os.Getenv("UDP_PORT"), "localhost:" + os.Getenv("UDP_PORT")} {
			c, err := net.Dial("udp", target)
			if err != nil {
				continue
			}
			_, _ = c.Write([]byte("escaped"))
			c.Close()
		}
		return nil // the runtime checks whether anything arrived
	},
	"net_allowed": func() error {
		for _, target := range []string{"localhost:" + os.Getenv("ALLOWED_PORT"), "127.0.0.1:" + os.Getenv("ALLOWED_PORT")} {
			if err := connectVia(target); err != nil {
				return fmt.Errorf("allowed %s refused: %w", target, err)
			}
		}
		return nil
	},
	"docker_sock": func() error {
		for _, p := range []string{"/var/run/docker.sock", os.Getenv("HOST_SOCK")} {
			if c, err := net.Dial("unix", p); err == nil {
				c.Close()
				return fmt.Errorf("connected to %s", p)
			}
		}
		return nil
	},
	"unix_socket": func() error { return socketMust(syscall.AF_UNIX, syscall.EACCES) },
	"unix_allowed": func() error {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			return fmt.Errorf("unix_sockets: true but socket failed: %w", err)
		}
		syscall.Close(fd)
		return nil
	},
	"netlink": func() error { return socketMust(syscall.AF_NETLINK, syscall.EACCES) },
	"packet":  func() error { return socketMust(syscall.AF_PACKET, syscall.EACCES) },
	"signal_runtime": func() error {
		pid, _ := strconv.Atoi(os.Getenv("RUNTIME_PID"))
		// Signal 0 checks permission without delivering anything.
		if err := syscall.Kill(pid, 0); err == nil {
			return fmt.Errorf("may signal the runtime (pid %d)", pid)
		}
		return nil
	},
	"symlink_out": func() error {
		if err := os.Symlink(os.Getenv("SIBLING"), "out"); err != nil {
			return broken(err)
		}
		if err := os.Link(os.Getenv("SIBLING"), "hard"); err == nil {
			return errors.New("hard-linked a file from outside into the workdir")
		}
		return mustFail(os.ReadFile("out"))
	},
	"see_runtime": func() error {
		pid := os.Getenv("RUNTIME_PID")
		if b, err := os.ReadFile("/proc/" + pid + "/cmdline"); err == nil {
			return fmt.Errorf("read the runtime's command line: %q", b)
		}
		if b, err := os.ReadFile("/proc/1/environ"); err == nil {
			return fmt.Errorf("read pid 1's environment (%d bytes)", len(b))
		}
		if _, err := os.ReadFile("/proc/self/status"); err != nil {
			return broken(err)
		}
		return nil
	},
	"ptrace_runtime": func() error {
		pid, _ := strconv.Atoi(os.Getenv("RUNTIME_PID"))
		if err := syscall.PtraceAttach(pid); err == nil {
			_ = syscall.PtraceDetach(pid)
			return fmt.Errorf("attached to the runtime (pid %d)", pid)
		}
		return nil
	},
	"fork_bomb": func() error {
		var started int
		for ; started < 200; started++ {
			if _, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{}); err != nil {
				return nil
			}
		}
		return fmt.Errorf("started %d processes", started)
	},
	"memory_balloon": func() error {
		var keep [][]byte
		for i := 0; i < 64; i++ { // 64 × 8 MiB = 512 MiB, touched
			b := make([]byte, 8<<20)
			for j := range b {
				if j%4096 == 0 {
					b[j] = 1
				}
			}
			keep = append(keep, b)
		}
		return fmt.Errorf("allocated %d MiB", len(keep)*8)
	},
	"env_leak": func() error {
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "MUR_SANDBOX") {
				return fmt.Errorf("leaked %s", kv)
			}
		}
		return nil
	},
	"workdir_writable": func() error {
		if err := os.WriteFile("written", []byte("ok"), 0o644); err != nil {
			return err
		}
		_, err := os.ReadFile("ro/f")
		return err
	},
	"disk_fill_ceiling": func() error {
		// Stays under the per-file limit, over the ceiling together.
		for i := 0; i < 6; i++ {
			if err := os.WriteFile(fmt.Sprintf("fill%d", i), make([]byte, 1<<20), 0o644); err != nil {
				return nil
			}
		}
		time.Sleep(30 * time.Second)
		return errors.New("outlived the ceiling")
	},
}

func broken(err error) error { return fmt.Errorf("broken: %w", err) }

func mustFail[T any](_ T, err error) error { return mustFailErr(err) }

func mustFailErr(err error) error {
	if err == nil {
		return errors.New("the operation succeeded")
	}
	return nil
}

func socketMust(family int, want syscall.Errno) error {
	fd, err := syscall.Socket(family, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, 0)
	if err == nil {
		syscall.Close(fd)
		return fmt.Errorf("socket(%d) succeeded", family)
	}
	if family == syscall.AF_UNIX {
		fd, err = syscall.Socket(family, syscall.SOCK_STREAM, 0)
		if err == nil {
			syscall.Close(fd)
			return errors.New("socket(AF_UNIX) succeeded")
		}
	}
	if !errors.Is(err, want) {
		return fmt.Errorf("socket(%d) failed with %v, want %v", family, err, want)
	}
	return nil
}

// connectVia connects to target directly, as any program does (the
// session's egress forwards it or resets it), and reads the listener's
// greeting: only a greeting proves the target was reached.
func connectVia(target string) error {
	c, err := net.DialTimeout("tcp", target, 3*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "hello\n" {
		return fmt.Errorf("no greeting through the tunnel: %q %v", line, err)
	}
	return nil
}

// runProbe is the sandboxed side: it runs one case and exits.
func runProbe(name string) int {
	f, ok := probes[name]
	if !ok {
		fmt.Println("unknown probe", name)
		return exitBroken
	}
	if err := f(); err != nil {
		fmt.Println(err)
		if strings.HasPrefix(err.Error(), "broken:") {
			return exitBroken
		}
		return exitEscaped
	}
	return exitDenied
}
