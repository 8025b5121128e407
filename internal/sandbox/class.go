package sandbox

import (
	"fmt"
	"strings"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/sandbox/helper"
)

// minLandlockABI is the oldest Landlock ABI that covers every write form the
// policy must deny: ABI 2 adds cross-directory rename/link (REFER), ABI 3
// adds truncate.
const minLandlockABI = 3

// landlockScopeABI is the Landlock ABI that scopes signals and abstract unix
// sockets to the sandbox's domain.
const landlockScopeABI = helper.LandlockScopeABI

// Host is what this machine can enforce, as found by Probe.
type Host struct {
	OS string
	// LandlockABI is the kernel's Landlock ABI version; 0 means none.
	LandlockABI int
	// Seccomp says seccomp-BPF filters can be installed.
	Seccomp bool
	// NetNS says a network namespace can be created and joined.
	NetNS bool
	// MountNS says a private mount namespace with bind mounts and
	// pivot_root can be set up (needed for read-only subtrees and sealed).
	MountNS bool
	// CgroupV2 is the cgroup v2 directory new session scopes go under, ""
	// when there is none or it is not writable.
	CgroupV2 string
	// Controllers maps memory, pids, cpu and io to where the session scope
	// finds it: "v2", or a writable cgroup v1 directory on a hybrid host.
	Controllers map[string]string
	// SwapBounded says the memory controller can bound swap too.
	SwapBounded bool
	// Why explains each missing mechanism, keyed like Mechanism.Name.
	Why map[string]string
}

func (h Host) why(name, fallback string) string {
	if w := h.Why[name]; w != "" {
		return w
	}
	return fallback
}

// Mechanism is one line of the containment report.
type Mechanism struct {
	Name     string
	Enforced bool
	Detail   string
}

// Report says which class a policy achieves on a host and why: what mur
// doctor, mur run --explain-scope and session_start print.
type Report struct {
	Achieved   Class
	Floor      Class
	Mechanisms []Mechanism
	// Warnings are W-SEC-001 lines for declared controls this host cannot
	// enforce.
	Warnings diag.List
}

// Lines renders the report for a human, one mechanism a line.
func (r Report) Lines() []string {
	floor := "none declared"
	if r.Floor != 0 {
		floor = r.Floor.String()
	}
	out := []string{fmt.Sprintf("containment: %s (declared floor: %s)", r.Achieved, floor)}
	for _, m := range r.Mechanisms {
		state := "enforced"
		if !m.Enforced {
			state = "not enforced"
		}
		out = append(out, fmt.Sprintf("  %-22s %-13s %s", m.Name, state, m.Detail))
	}
	for _, w := range r.Warnings {
		out = append(out, w.String())
	}
	return out
}

// String is Lines joined with newlines.
func (r Report) String() string { return strings.Join(r.Lines(), "\n") }

// Achieved is the containment class policy p reaches on host h.
func Achieved(h Host, p Policy) Class {
	return Explain(h, p).Achieved
}

// Explain reports, mechanism by mechanism, what host h enforces for policy p
// and the class that results: scoped needs the kernel to enforce the
// filesystem, noexec, syscall, network and aggregate-resource bounds; sealed
// also needs a composed root. workdir_exec caps every host at advisory.
func Explain(h Host, p Policy) Report {
	r := Report{Floor: p.Floor}
	add := func(name string, ok bool, detail string) bool {
		r.Mechanisms = append(r.Mechanisms, Mechanism{Name: name, Enforced: ok, Detail: detail})
		return ok
	}
	ll := h.LandlockABI >= minLandlockABI
	llDetail := fmt.Sprintf("Landlock ABI %d: workdir, home and tmp writable; system paths read-only; everything else denied", h.LandlockABI)
	if !ll {
		llDetail = h.why("filesystem", fmt.Sprintf("Landlock ABI %d, need %d", h.LandlockABI, minLandlockABI))
	}
	scoped := add("filesystem", ll, llDetail)

	// Landlock sees execve of a path but not a mapping: the dynamic loader
	// (ld.so ./file) and mmap(PROT_EXEC) of a written file are stopped only
	// by the noexec binds of the mount namespace, so both are needed.
	switch {
	case p.WorkdirExec:
		add("workdir noexec", false, "capabilities.filesystem.workdir_exec is true: files written in the workdir can run (caps the class at advisory)")
		scoped = false
	case ll && h.MountNS:
		add("workdir noexec", true, "nothing written in the workdir, home or tmp can be executed: execve (Landlock), the loader and mmap (noexec binds), memory files and execveat (seccomp)")
	case !ll:
		add("workdir noexec", false, "needs Landlock")
		scoped = false
	default:
		add("workdir noexec", false, h.why("mount namespace", "no private mount namespace")+": without noexec binds the dynamic loader can run a written file")
		scoped = false
	}

	ro := h.MountNS && ll
	if len(p.ReadOnly) > 0 {
		d := fmt.Sprintf("%d read_only subtree(s) bind-mounted read-only", len(p.ReadOnly))
		if !ro {
			d = h.why("mount namespace", "no private mount namespace") + ": read_only is checked before dispatch only"
		}
		scoped = add("read_only subtrees", ro, d) && scoped
	}

	sc := "socket(AF_UNIX) fails EACCES; AF_NETLINK, AF_PACKET, ptrace and namespace escapes refused"
	if p.Network.UnixSockets {
		sc = "AF_UNIX allowed (unix_sockets: true); AF_NETLINK, AF_PACKET, ptrace and namespace escapes refused"
	}
	if !h.Seccomp {
		sc = h.why("seccomp", "seccomp filters unavailable")
	}
	scoped = add("seccomp", h.Seccomp, sc) && scoped

	// A command runs under mur's uid, so only Landlock's signal scope keeps
	// kill(2) from reaching mur and its helpers (docs/sandbox.md, threat
	// model); seccomp covers the uid-checked calls, the holder's IPC
	// namespace the IPC objects.
	pi := h.LandlockABI >= landlockScopeABI && h.Seccomp && h.MountNS
	pd := "signals and abstract unix sockets scoped to the session (Landlock); prlimit, priority, scheduling and I/O class only on the caller (seccomp); own PID and IPC namespaces, whose pid 1 is the session's holder"
	switch {
	case h.LandlockABI < landlockScopeABI:
		pd = fmt.Sprintf("Landlock ABI %d has no signal scope (needs %d): a command can signal every process of mur's uid, mur included", h.LandlockABI, landlockScopeABI)
	case !pi:
		pd = "needs seccomp and a mount namespace (whose holder keeps the session's IPC namespace)"
	}
	scoped = add("process isolation", pi, pd) && scoped

	nd := fmt.Sprintf("own network namespace; TCP and UDP leave only to allow-listed destinations, %d allow entr%s; commands also get http_proxy, https_proxy, ALL_PROXY and no_proxy (both cases, beyond the spec's environment rows) naming an HTTP proxy under the same list, for clients that cannot resolve names in the sandbox", len(p.Network.Allow), plural(len(p.Network.Allow), "y", "ies"))
	if !h.NetNS {
		nd = h.why("network namespace", "network namespaces unavailable")
	}
	scoped = add("network namespace", h.NetNS, nd) && scoped

	cg := h.Controllers["memory"] != "" && h.Controllers["pids"] != "" && (h.CgroupV2 != "" || len(h.Controllers) > 0)
	cd := "memory, pids"
	for _, c := range []string{"cpu", "io"} {
		if h.Controllers[c] != "" {
			cd += ", " + c
		}
	}
	if h.SwapBounded {
		cd += "; swap bounded"
	} else {
		cd += "; swap not bounded (no swap limit file)"
	}
	if !cg {
		cd = h.why("cgroup", "no writable cgroup with memory and pids controllers")
	}
	scoped = add("cgroup scope", cg, cd) && scoped

	add("rlimits", h.OS == "linux", "per-process NOFILE, FSIZE, CPU, AS")
	add("workdir size ceiling", true, "workdir + home + tmp checked every 10s (E-RUN-013)")

	// A root is composed only when the capsule asks for sealed: a host that
	// could seal still runs a lower floor scoped, on the host's own tree, so
	// tools that expect the host's layout keep working.
	canSeal := scoped && h.MountNS
	sealed := canSeal && p.Floor == Sealed
	sd := "composed root: tmpfs, system paths and staged_runtime trees bound read-only, pivot_root"
	switch {
	case !h.MountNS:
		sd = h.why("mount namespace", "no private mount namespace")
	case canSeal && !sealed:
		sd = "available, not used: the declared floor is below sealed"
	}
	add("composed root", sealed, sd)

	switch {
	case sealed:
		r.Achieved = Sealed
	case scoped:
		r.Achieved = Scoped
	default:
		r.Achieved = Advisory
	}
	add(shellAllowExec, false, shellAllowDetail(r.Achieved))
	if !ll || !h.Seccomp || !h.NetNS {
		msg := "this host cannot enforce"
		var miss []string
		for _, m := range r.Mechanisms {
			if !m.Enforced && m.Name != "composed root" && m.Name != "workdir noexec" && m.Name != shellAllowExec {
				miss = append(miss, m.Name)
			}
		}
		r.Warnings = append(r.Warnings, diag.New(diag.SecNoKernelEnforcement, diag.Pos{}, "capabilities",
			fmt.Sprintf("%s %s; shell and native tools run %s", msg, strings.Join(miss, ", "), r.Achieved)))
	}
	return r
}

// shellAllowExec is the report line that says what capabilities.shell.allow
// means when a command executes a program. It is never enforced: no class
// limits exec to the allowlist (docs/sandbox.md, "What shell.allow means
// for exec"), and the line says what does hold instead.
const shellAllowExec = "shell.allow at exec"

func shellAllowDetail(c Class) string {
	switch c {
	case Sealed:
		return "the allowlisted binaries and every binary in the system trees bound whole into the composed root (/usr, /bin, /sbin, /lib*) can run; nothing else of the host exists in the root. shell.allow names what the model calls: an allowlisted shell, or any program that starts others, runs those system binaries too"
	case Scoped:
		return "the allowlisted binaries and every binary under the host's /usr, /bin, /sbin and /lib* can run (Landlock grants those trees execute). shell.allow names what the model calls: an allowlisted shell, or any program that starts others, runs any system binary"
	}
	return "nothing is checked at exec: shell.allow is checked only when the runtime dispatches a call"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// refusal is a diagnostic that is also an error of a sentinel kind.
type refusal struct {
	d    diag.Diagnostic
	kind error
}

func (r *refusal) Error() string   { return r.d.String() }
func (r *refusal) Unwrap() []error { return []error{r.kind, r.d} }

// CheckFloor refuses, with E-CAP-003, a policy whose declared floor is above
// what host h achieves. Call it before creating anything for the session.
// The error matches ErrFloor and unwraps to a diag.Diagnostic.
func CheckFloor(h Host, p Policy) error {
	r := Explain(h, p)
	if p.Floor == 0 || p.Floor <= r.Achieved {
		return nil
	}
	var miss []string
	for _, m := range r.Mechanisms {
		if !m.Enforced && m.Name != shellAllowExec {
			miss = append(miss, m.Name+" ("+m.Detail+")")
		}
	}
	msg := fmt.Sprintf("capabilities.containment requires %s but this host achieves %s: not enforced: %s; run on a host that enforces these, or lower the floor",
		p.Floor, r.Achieved, strings.Join(miss, "; "))
	return &refusal{d: diag.New(diag.CapProviderToolFloor, diag.Pos{}, "capabilities.containment", msg), kind: ErrFloor}
}
