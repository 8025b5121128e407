package helper

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// WatchArg0 is the argv[0] of the process that outlives a killed runtime to
// end its session: the spec's "watcher process that kills everything in
// the scope once the runtime is gone".
const WatchArg0 = "mur-sandbox-watch"

// WatchSpec is what the watcher removes once the runtime is gone.
type WatchSpec struct {
	V       int      `json:"v"`       // Protocol
	Cgroups []string `json:"cgroups"` // v2 directory first, if any
	Root    string   `json:"root,omitempty"`
	Runtime int      `json:"runtime"` // never killed (see KillCgroups)
}

func runWatcher(arg string) int {
	var ws WatchSpec
	if err := decode(arg, &ws, &ws.V); err != nil || len(ws.Cgroups) == 0 {
		fmt.Fprintf(os.Stderr, "mur sandbox watcher: bad scope list %q: %v\n", arg, err)
		return 2
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	v2, v1 := "", ws.Cgroups
	if fileExists(v1[0] + "/cgroup.kill") {
		v2, v1 = v1[0], v1[1:]
	}
	var procs []string
	for _, d := range v1 {
		procs = append(procs, filepath.Join(d, "cgroup.procs"))
	}
	KillCgroups(v2, procs, ws.Runtime)
	for _, d := range v1 {
		RemoveCgroupDir(d)
	}
	if v2 != "" {
		RemoveCgroupDir(v2)
	}
	if ws.Root != "" {
		_ = os.Remove(ws.Root)
	}
	return 0
}

// KillCgroups ends every process of a scope and waits until it is empty:
// cgroup.kill on the v2 directory v2 (when it has one), then a kill loop
// over procs, the v1 cgroup.procs files, sparing the runtime's pid (its
// spawner thread sits in the v1 directories, whose cgroup.procs then list
// the runtime).
func KillCgroups(v2 string, procs []string, spare int) {
	if v2 != "" {
		procs = append(procs, filepath.Join(v2, "cgroup.procs"))
		if fileExists(filepath.Join(v2, "cgroup.kill")) {
			_ = writeFile(filepath.Join(v2, "cgroup.kill"), "1")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		left := 0
		for _, f := range procs {
			for _, pid := range readPids(f) {
				if pid == spare {
					continue
				}
				left++
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// RemoveCgroupDir retries briefly: a killed task leaves its cgroup a moment
// after it is reaped.
func RemoveCgroupDir(d string) {
	for i := 0; i < 100; i++ {
		if err := unix.Rmdir(d); err == nil || err == unix.ENOENT {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func writeFile(p, v string) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func readPids(p string) []int {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}
