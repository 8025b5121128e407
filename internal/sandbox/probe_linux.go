package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/sandbox/helper"
)

// Probe finds what this host can enforce. It creates nothing.
func Probe() Host {
	h := Host{OS: "linux", Controllers: map[string]string{}, Why: map[string]string{}}
	h.LandlockABI = landlockABI()
	if h.LandlockABI == 0 {
		h.Why["filesystem"] = "Landlock is not enabled in this kernel (add landlock to the lsm= boot parameter)"
	}
	h.Seccomp = auditArch != 0 && seccompAvailable()
	if !h.Seccomp {
		h.Why["seccomp"] = "the kernel has no seccomp filter support"
	}
	admin := hasCapSysAdmin()
	_, errNet := os.Stat("/proc/self/ns/net")
	h.NetNS = admin && errNet == nil
	if !h.NetNS {
		h.Why["network namespace"] = "creating a network namespace needs CAP_SYS_ADMIN (run mur as root)"
	} else if missing := missingNetModules(); len(missing) > 0 {
		// Without them the namespace's egress rules cannot be written: say
		// so here rather than failing every session that starts.
		h.NetNS = false
		h.Why["network namespace"] = fmt.Sprintf("the kernel cannot load %s (nf_tables TPROXY, socket and reject, which the namespace's egress rules use): load them with modprobe, or use a kernel built with them", strings.Join(missing, ", "))
	}
	_, errMnt := os.Stat("/proc/self/ns/mnt")
	h.MountNS = admin && errMnt == nil
	if !h.MountNS {
		h.Why["mount namespace"] = "bind mounts and pivot_root need CAP_SYS_ADMIN (run mur as root)"
	}
	probeCgroups(&h)
	return h
}

func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

func seccompAvailable() bool {
	action := uint32(unix.SECCOMP_RET_ERRNO)
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	return errno == 0
}

// hasCapSysAdmin reads the effective capability set; namespaces, mounts and
// cgroup moves all need CAP_SYS_ADMIN.
func hasCapSysAdmin() bool {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapEff:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && n&(1<<unix.CAP_SYS_ADMIN) != 0
		}
	}
	return false
}

// cgroupMount is one cgroup hierarchy as mounted here.
type cgroupMount struct {
	dir     string // mount point
	root    string // part of the hierarchy that is mounted
	v2      bool
	options map[string]bool
}

// probeCgroups finds the cgroup v2 directory this process lives in and,
// for each controller the session scope needs, whether v2 offers it or a
// cgroup v1 hierarchy does (hybrid hosts mount v2 at /sys/fs/cgroup/unified
// with the controllers left on v1).
func probeCgroups(h *Host) {
	probeCgroupsFrom(h, cgroupMounts(), ownCgroups())
}

// v2Delegable reads which controllers a new child of dir could be given:
// the root may enable anything it has; any other cgroup holding processes
// (as mur's own does) only what it already enables for children.
func v2Delegable(dir string, root bool) map[string]bool {
	file := "cgroup.subtree_control"
	if root {
		file = "cgroup.controllers"
	}
	out := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(dir, file)); err == nil {
		for _, c := range strings.Fields(string(b)) {
			out[c] = true
		}
	}
	return out
}

func probeCgroupsFrom(h *Host, mounts []cgroupMount, own map[string]string) {
	// Session scopes go under mur's own cgroup when it can hand them memory
	// and pids, else under the hierarchy's root (a systemd host enables
	// them there, while mur's own scope usually enables none).
	v2ctl := map[string]bool{}
	for _, m := range mounts {
		if !m.v2 {
			continue
		}
		p, ok := own[""]
		if !ok {
			break
		}
		type cand struct {
			dir  string
			root bool
		}
		cands := []cand{{joinCgroup(m, p), p == "/" || p == m.root}}
		if !cands[0].root {
			cands = append(cands, cand{m.dir, true})
		}
		for i, c := range cands {
			if unix.Access(c.dir, unix.W_OK) != nil {
				continue
			}
			ctl := v2Delegable(c.dir, c.root)
			if i == 0 || ctl["memory"] && ctl["pids"] {
				h.CgroupV2, v2ctl = c.dir, ctl
			}
			if ctl["memory"] && ctl["pids"] {
				break
			}
		}
		break
	}
	v1name := map[string]string{"memory": "memory", "pids": "pids", "cpu": "cpu", "io": "blkio"}
	for ctl, v1 := range v1name {
		if v2ctl[ctl] {
			h.Controllers[ctl] = "v2"
			continue
		}
		for _, m := range mounts {
			if m.v2 || !m.options[v1] {
				continue
			}
			p, ok := own[v1]
			if !ok {
				continue
			}
			dir := joinCgroup(m, p)
			if unix.Access(dir, unix.W_OK) == nil {
				h.Controllers[ctl] = dir
			}
			break
		}
	}
	switch where := h.Controllers["memory"]; where {
	case "":
	case "v2":
		// memory.swap.max appears on children only, so look for the kernel's
		// swap accounting on this level's sibling file instead.
		_, err := os.Stat(filepath.Join(h.CgroupV2, "memory.swap.current"))
		h.SwapBounded = err == nil || fileExists("/sys/fs/cgroup/memory.swap.max")
	default:
		h.SwapBounded = fileExists(filepath.Join(where, "memory.memsw.limit_in_bytes"))
	}
	if h.Controllers["memory"] == "" || h.Controllers["pids"] == "" {
		h.Why["cgroup"] = "no writable cgroup (v2 or v1) offers both the memory and pids controllers (run mur as root on a cgroup host)"
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func joinCgroup(m cgroupMount, p string) string {
	rel := p
	if m.root != "/" {
		rel = strings.TrimPrefix(p, m.root)
	}
	return filepath.Join(m.dir, rel)
}

func cgroupMounts() []cgroupMount {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	return parseMountinfo(string(b))
}

// parseMountinfo picks the cgroup and cgroup2 mounts out of a mountinfo
// file.
func parseMountinfo(text string) []cgroupMount {
	var out []cgroupMount
	for _, line := range strings.Split(text, "\n") {
		// id parent major:minor root mountpoint options [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 3 {
			continue
		}
		switch b[0] {
		case "cgroup2":
			out = append(out, cgroupMount{dir: unescapeMount(a[4]), root: a[3], v2: true})
		case "cgroup":
			opts := map[string]bool{}
			for _, o := range strings.Split(b[2], ",") {
				opts[o] = true
			}
			out = append(out, cgroupMount{dir: unescapeMount(a[4]), root: a[3], options: opts})
		}
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroups maps each v1 controller (and "" for v2) to this process's path.
func ownCgroups() map[string]string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	return parseProcCgroup(string(b))
}

// parseProcCgroup reads a /proc/<pid>/cgroup file.
func parseProcCgroup(text string) map[string]string { return helper.ParseProcCgroup(text) }
