package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/sandbox/helper"
)

// cgroupScope is one session's cgroup: a v2 directory (membership at clone
// time, cgroup.kill) and, on a hybrid host, v1 directories for the
// controllers v2 does not carry.
type cgroupScope struct {
	v2   string
	v2fd int
	v1   map[string]string // controller -> directory
	// v1rel is each v1 directory's path within its hierarchy, as
	// /proc/<pid>/cgroup shows it, keyed by the v1 controller name.
	v1rel map[string]string
	// spare is the runtime's pid, never killed: its spawner thread sits in
	// the v1 directories, whose cgroup.procs then list the runtime.
	spare int
	// enforced lists the limits actually written, for the report.
	enforced []string
	warnings diag.List
}

// newCgroupScope creates the scope named name and writes the policy's
// limits. Limits a controller cannot take are left out and reported.
func newCgroupScope(h Host, name string, c Cgroup, workdir string) (*cgroupScope, error) {
	s := &cgroupScope{v2fd: -1, v1: map[string]string{}, v1rel: map[string]string{}, spare: os.Getpid()}
	own := ownCgroups()
	if h.CgroupV2 != "" {
		var want []string
		for _, ctl := range []string{"memory", "pids", "cpu", "io"} {
			if h.Controllers[ctl] == "v2" {
				want = append(want, "+"+ctl)
			}
		}
		if len(want) > 0 {
			if err := writeFile(filepath.Join(h.CgroupV2, "cgroup.subtree_control"), strings.Join(want, " ")); err != nil {
				return nil, fmt.Errorf("enable cgroup controllers: %w", err)
			}
		}
		dir := filepath.Join(h.CgroupV2, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create cgroup scope: %w", err)
		}
		s.v2 = dir
		fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			s.remove()
			return nil, fmt.Errorf("open cgroup scope: %w", err)
		}
		s.v2fd = fd
	}
	for _, ctl := range []string{"memory", "pids", "cpu", "io"} {
		where := h.Controllers[ctl]
		if where == "" || where == "v2" {
			continue
		}
		dir := filepath.Join(where, name)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			s.remove()
			return nil, fmt.Errorf("create cgroup v1 %s scope: %w", ctl, err)
		}
		s.v1[ctl] = dir
		s.v1rel[v1Name[ctl]] = path.Join(own[v1Name[ctl]], name)
	}
	if err := s.setLimits(c, workdir); err != nil {
		s.remove()
		return nil, err
	}
	return s, nil
}

// dir is where controller ctl's files for this scope live, "" if nowhere.
func (s *cgroupScope) dir(ctl string) (string, bool) {
	if d, ok := s.v1[ctl]; ok {
		return d, true
	}
	if s.v2 != "" && fileExists(filepath.Join(s.v2, ctlProbeFile[ctl])) {
		return s.v2, false
	}
	return "", false
}

// v1Name is each controller's name on a cgroup v1 hierarchy.
var v1Name = map[string]string{"memory": "memory", "pids": "pids", "cpu": "cpu", "io": "blkio"}

var ctlProbeFile = map[string]string{"memory": "memory.max", "pids": "pids.max", "cpu": "cpu.max", "io": "io.max"}

func (s *cgroupScope) setLimits(c Cgroup, workdir string) error {
	if c.MemoryBytes > 0 {
		if d, v1 := s.dir("memory"); d != "" {
			n := strconv.FormatInt(c.MemoryBytes, 10)
			// Swap is bounded where the kernel exposes the file: memsw (v1)
			// caps memory+swap at the same figure, swap.max (v2) caps swap at 0.
			file, limit, swap, swapVal := "memory.max", n, "memory.swap.max", "0"
			if v1 {
				file, swap, swapVal = "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", n
			}
			if err := writeFile(filepath.Join(d, file), limit); err != nil {
				return fmt.Errorf("cgroup memory limit: %w", err)
			}
			s.enforced = append(s.enforced, "memory")
			if fileExists(filepath.Join(d, swap)) {
				if err := writeFile(filepath.Join(d, swap), swapVal); err != nil {
					return fmt.Errorf("cgroup swap limit: %w", err)
				}
				s.enforced = append(s.enforced, "swap")
			}
		}
	}
	if c.PidsMax > 0 {
		if d, _ := s.dir("pids"); d != "" {
			if err := writeFile(filepath.Join(d, "pids.max"), strconv.FormatInt(c.PidsMax, 10)); err != nil {
				return fmt.Errorf("cgroup pids limit: %w", err)
			}
			s.enforced = append(s.enforced, "pids")
		}
	}
	if c.CPUPercent > 0 {
		if d, v1 := s.dir("cpu"); d != "" {
			const period = 100000
			quota := strconv.FormatInt(c.CPUPercent*period/100, 10)
			var err error
			if v1 {
				err = writeFile(filepath.Join(d, "cpu.cfs_period_us"), strconv.Itoa(period))
				if err == nil {
					err = writeFile(filepath.Join(d, "cpu.cfs_quota_us"), quota)
				}
			} else {
				err = writeFile(filepath.Join(d, "cpu.max"), quota+" "+strconv.Itoa(period))
			}
			if err != nil {
				return fmt.Errorf("cgroup cpu limit: %w", err)
			}
			s.enforced = append(s.enforced, "cpu")
		}
	}
	if c.IOBytesPerSec > 0 {
		s.setIO(c.IOBytesPerSec, workdir)
	}
	return nil
}

// setIO throttles the workdir's backing disk. It is best-effort: a device
// that cannot be resolved (overlayfs, tmpfs, device-mapper) or refuses the
// limit draws W-SEC-021 and the scope keeps its other limits.
func (s *cgroupScope) setIO(bps int64, workdir string) {
	warn := func(why string) {
		s.warnings = append(s.warnings, diag.New(diag.SecIOMaxUnavailable, diag.Pos{}, "capabilities.resources.cgroup_io_bytes_per_sec",
			fmt.Sprintf("io_max.status: unavailable: %s; the session's other limits still apply", why)))
	}
	d, v1 := s.dir("io")
	if d == "" {
		warn("no io controller on this host's cgroups")
		return
	}
	dev, err := blockDevice(workdir)
	if err != nil {
		warn(err.Error())
		return
	}
	n := strconv.FormatInt(bps, 10)
	if v1 {
		err = writeFile(filepath.Join(d, "blkio.throttle.read_bps_device"), dev+" "+n)
		if err == nil {
			err = writeFile(filepath.Join(d, "blkio.throttle.write_bps_device"), dev+" "+n)
		}
	} else {
		err = writeFile(filepath.Join(d, "io.max"), dev+" rbps="+n+" wbps="+n)
	}
	if err != nil {
		warn(fmt.Sprintf("device %s refused the limit: %v", dev, err))
		return
	}
	s.enforced = append(s.enforced, "io")
}

// blockDevice resolves the whole disk (major:minor) under path.
func blockDevice(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", fmt.Errorf("workdir device: %w", err)
	}
	maj, minr := unix.Major(st.Dev), unix.Minor(st.Dev)
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", maj, minr)
	if maj == 0 || !fileExists(sys) {
		return "", fmt.Errorf("the workdir's filesystem (device %d:%d) has no backing block device (overlayfs or tmpfs)", maj, minr)
	}
	if fileExists(sys + "/dm") {
		return "", fmt.Errorf("the workdir is on device-mapper device %d:%d", maj, minr)
	}
	if fileExists(sys + "/partition") {
		b, err := os.ReadFile(sys + "/../dev")
		if err != nil {
			return "", fmt.Errorf("the workdir's partition %d:%d has no resolvable disk", maj, minr)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return fmt.Sprintf("%d:%d", maj, minr), nil
}

// counters reads the scope's OOM-kill and pids-limit event counts.
func (s *cgroupScope) counters() (oom, pidsMax int64) {
	if d, v1 := s.dir("memory"); d != "" {
		if v1 {
			oom = keyedValue(filepath.Join(d, "memory.oom_control"), "oom_kill")
			if oom == 0 {
				oom = readInt(filepath.Join(d, "memory.memsw.failcnt")) + readInt(filepath.Join(d, "memory.failcnt"))
			}
		} else {
			oom = keyedValue(filepath.Join(d, "memory.events"), "oom_kill")
		}
	}
	if d, _ := s.dir("pids"); d != "" {
		pidsMax = keyedValue(filepath.Join(d, "pids.events"), "max")
	}
	return oom, pidsMax
}

// v1Procs lists the cgroup.procs files of the v1 directories.
func (s *cgroupScope) v1Procs() []string {
	var out []string
	for _, d := range s.v1 {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return out
}

// v1Joins is what a command's init joins when it was not born there.
func (s *cgroupScope) v1Joins() []cgroupJoin {
	var out []cgroupJoin
	for ctl, d := range s.v1 {
		out = append(out, cgroupJoin{Controller: v1Name[ctl], Path: s.v1rel[v1Name[ctl]], Procs: filepath.Join(d, "cgroup.procs")})
	}
	return out
}

// adoptThread moves the calling thread alone into the v1 directories, so
// that processes it forks are born in them. Migrating a task on a v1
// hierarchy waits for an RCU grace period (15–30 ms measured here); paying
// it once per session instead of once per command is most of the sandbox's
// per-call overhead on a hybrid host.
func (s *cgroupScope) adoptThread() error {
	tid := []byte(strconv.Itoa(unix.Gettid()))
	for _, d := range s.v1 {
		if err := os.WriteFile(filepath.Join(d, "tasks"), tid, 0); err != nil {
			return fmt.Errorf("cgroup spawner thread: %w", err)
		}
	}
	return nil
}

// kill ends every process in the scope and waits until it is empty.
func (s *cgroupScope) kill() { helper.KillCgroups(s.v2, s.v1Procs(), s.spare) }

func (s *cgroupScope) allProcs() []string {
	out := s.v1Procs()
	if s.v2 != "" {
		out = append(out, filepath.Join(s.v2, "cgroup.procs"))
	}
	return out
}

// remove kills what is left and deletes the scope's directories.
func (s *cgroupScope) remove() {
	s.kill()
	if s.v2fd >= 0 {
		unix.Close(s.v2fd)
		s.v2fd = -1
	}
	for _, d := range s.v1 {
		helper.RemoveCgroupDir(d)
	}
	if s.v2 != "" {
		helper.RemoveCgroupDir(s.v2)
	}
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

func readInt(p string) int64 {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// keyedValue reads "key value" lines such as memory.events.
func keyedValue(p, key string) int64 {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
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
