package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/sandbox/helper"
)

// sizeCheckInterval is how often the workdir ceiling is checked.
const sizeCheckInterval = 10 * time.Second

// Session is one capsule session's sandbox: its cgroup scope, network
// namespace and egress, and the workdir size watcher.
type Session struct {
	policy Policy
	host   Host
	report Report

	cg      *cgroupScope
	watcher *os.File // write end of the watcher's pipe
	// spawn runs Start requests on a thread that lives in the scope's v1
	// directories; nil when there are none.
	spawn chan spawnReq
	// egress is the network namespace and the forwarder that is its only
	// way out.
	egress  *egress
	rootDir string // empty host directory a sealed root is composed on
	// tmpMapped says commands see the session's tmp folder at /tmp.
	tmpMapped bool
	rules     []landlockRule
	mounts    *mountSpec
	holder    *mountHolder
	// ruleset is the Landlock ruleset every command enforces, built once
	// (by the holder, or here without a mount namespace); nil without
	// Landlock.
	ruleset *os.File
	capLast int

	mu       sync.Mutex
	closed   bool
	lastOOM  int64
	lastPids int64

	ended   chan struct{}
	endErr  error
	endOnce sync.Once
	stop    chan struct{}
	wg      sync.WaitGroup
}

// NewSession refuses a policy whose floor this host cannot reach (E-CAP-003)
// before creating anything, then creates the session's cgroup scope,
// network namespace with its egress, and size watcher.
func NewSession(ctx context.Context, p Policy) (*Session, error) {
	return newSession(ctx, Probe(), p)
}

func newSession(ctx context.Context, h Host, p Policy) (*Session, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := CheckFloor(h, p); err != nil {
		return nil, err
	}
	for _, d := range []string{p.Workdir, p.Home, p.Tmp} {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%w: session folder %q must exist before the session starts", ErrPolicy, d)
		}
	}
	s := &Session{policy: p, host: h, report: Explain(h, p), ended: make(chan struct{}), stop: make(chan struct{})}
	name := "mur-" + randomID()
	fail := func(err error) (*Session, error) {
		s.Close()
		return nil, err
	}
	if h.CgroupV2 != "" || len(h.Controllers) > 0 {
		cg, err := newCgroupScope(h, name, p.Cgroup, p.Workdir)
		if err != nil {
			return fail(err)
		}
		s.cg = cg
		s.report.Warnings = append(s.report.Warnings, cg.warnings...)
		for i, m := range s.report.Mechanisms {
			if m.Name == "cgroup scope" && m.Enforced {
				s.report.Mechanisms[i].Detail = fmt.Sprintf("%s (limits written: %s)", m.Detail, strings.Join(cg.enforced, ", "))
			}
		}
	}
	if h.NetNS {
		ns, err := newNetns()
		if err != nil {
			return fail(err)
		}
		if s.egress, err = newEgress(ctx, ns, p.Network.Allow); err != nil {
			return fail(err)
		}
	}
	if err := s.plan(name); err != nil {
		return fail(err)
	}
	landlock := h.LandlockABI >= minLandlockABI
	if s.mounts != nil {
		if landlock {
			s.mounts.LandlockABI, s.mounts.Landlock = h.LandlockABI, s.rules
		}
		mh, err := startHolder(s.mounts)
		if err != nil {
			return fail(err)
		}
		s.holder = mh
		s.ruleset = mh.ruleset
	} else if landlock {
		// Commands see this process's mounts: the ruleset is built here.
		fd, err := helper.LandlockRuleset(h.LandlockABI, s.rules)
		if err != nil {
			return fail(err)
		}
		s.ruleset = os.NewFile(uintptr(fd), "landlock-ruleset")
	}
	s.capLast = helper.CapLast()
	if s.cg != nil && len(s.cg.v1) > 0 || s.holder != nil {
		if err := s.startSpawner(); err != nil {
			return fail(err)
		}
	}
	if s.cg != nil {
		w, err := startWatcher(s.cg, s.rootDir)
		if err != nil {
			return fail(err)
		}
		s.watcher = w
	}
	if p.WorkdirMaxBytes > 0 {
		s.wg.Add(1)
		every := p.SizeCheckEvery
		if every <= 0 {
			every = sizeCheckInterval
		}
		go s.watch(every)
	}
	return s, nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// systemExec are trees every allowlisted binary may need to run.
var systemExec = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/alternatives"}

// systemRead are the /etc files programs read to start; the rest of /etc
// (shadow, ssh keys, …) stays out of reach.
var systemRead = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone",
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf",
	"/etc/bash.bashrc", "/etc/profile", "/etc/inputrc", "/etc/locale.alias", "/etc/mime.types",
	"/etc/protocols", "/etc/services", "/etc/magic", "/etc/os-release", "/etc/debian_version",
}

// tlsTrust is the host's TLS trust store, granted when the capsule may
// reach any IP destination.
var tlsTrust = []string{"/etc/ssl", "/etc/ca-certificates", "/etc/pki"}

// devNodes are the device nodes a command may open. No terminal is among
// them: a command has no controlling terminal (see Prepare), so /dev/tty
// would name nothing, and any other terminal is the operator's.
var devNodes = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// plan computes, once per session, the Landlock rules and mounts every
// command gets.
func (s *Session) plan(name string) error {
	p := s.policy
	var rules []landlockRule
	m := &mountSpec{}
	sealed := s.report.Achieved == Sealed
	bindRO := func(path string) {
		if sealed {
			m.Binds = append(m.Binds, bind{Src: path, RO: true})
		}
	}
	for _, d := range systemExec {
		rules = append(rules, landlockRule{Path: d, Kind: grantReadExec})
		if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if t, err := os.Readlink(d); err == nil && sealed {
				m.Symlinks = append(m.Symlinks, [2]string{t, d})
			}
			continue
		}
		bindRO(d)
	}
	read := systemRead
	if len(p.Network.Allow) > 0 {
		read = append(append([]string(nil), systemRead...), tlsTrust...)
	}
	for _, f := range read {
		rules = append(rules, landlockRule{Path: f, Kind: grantRead})
		bindRO(f)
	}
	for _, d := range devNodes {
		rules = append(rules, landlockRule{Path: d, Kind: grantDev})
		if sealed {
			m.Binds = append(m.Binds, bind{Src: d})
		}
	}
	rules = append(rules, landlockRule{Path: "/proc", Kind: grantRead})
	// A fresh procfs with hidepid=ptraceable shows a command only the
	// processes it could ptrace, and Landlock refuses that outside its own
	// domain: the runtime's and other sessions' command lines stay hidden.
	m.Proc = true
	for _, e := range p.ExecPaths {
		// Both the name the command is run by and what it resolves to: a
		// composed root must hold the former, Landlock rules the latter.
		paths := []string{e}
		if r, err := filepath.EvalSymlinks(e); err == nil && r != e {
			paths = append(paths, r)
		}
		for _, x := range paths {
			rules = append(rules, landlockRule{Path: x, Kind: grantReadExec})
			bindRO(x)
		}
	}
	for _, d := range p.InterpreterRuntime {
		k := grantExecRead
		if d.ListDir {
			k = grantReadExec
		}
		rules = append(rules, landlockRule{Path: d.Path, Kind: k})
		bindRO(d.Path)
	}
	if sealed {
		for _, st := range p.StagedRuntime {
			rules = append(rules, landlockRule{Path: st.SourcePath, Kind: grantReadExec})
			bindRO(st.SourcePath)
		}
	}
	rw := grantRW
	if p.WorkdirExec {
		rw = grantRWX
	}
	for _, d := range []string{p.Workdir, p.Home, p.Tmp} {
		rules = append(rules, landlockRule{Path: d, Kind: rw})
		if sealed || !p.WorkdirExec {
			m.Binds = append(m.Binds, bind{Src: d, NoExec: !p.WorkdirExec})
		}
	}
	for _, d := range p.StateDirs {
		rules = append(rules, landlockRule{Path: d, Kind: grantRW})
		if sealed || s.host.MountNS {
			m.Binds = append(m.Binds, bind{Src: d, NoExec: true})
		}
	}
	s.tmpMapped = s.host.MountNS && !underTmp(p)
	if s.tmpMapped {
		m.Binds = append(m.Binds, bind{Src: p.Tmp, Dst: "/tmp", NoExec: !p.WorkdirExec})
	}
	for _, ro := range p.ReadOnly {
		if !filepath.IsAbs(ro) {
			ro = filepath.Join(p.Workdir, ro)
		}
		ro = filepath.Clean(ro)
		// The namespace is built once, at launch: a subtree missing then is
		// created empty so it is bound read-only too, and the capsule cannot
		// create it and write there later.
		if s.host.MountNS && !fileExists(ro) {
			if err := os.MkdirAll(ro, 0o755); err != nil {
				return fmt.Errorf("read_only subtree %q: %w", ro, err)
			}
		}
		m.Binds = append(m.Binds, bind{Src: ro, RO: true, NoExec: !p.WorkdirExec})
	}
	s.rules = rules
	if s.host.MountNS && len(m.Binds)+len(m.Symlinks) > 0 {
		if sealed {
			dir, err := os.MkdirTemp("", name+"-root-")
			if err != nil {
				return fmt.Errorf("sealed root: %w", err)
			}
			s.rootDir = dir
			m.Root = dir
		}
		s.mounts = m
	}
	return nil
}

// TmpMapped says commands see the session's temporary folder at /tmp (the
// spec's row 7 then sets TMPDIR=/tmp). It is false when the host has no
// mount namespace, or when a granted path lies under /tmp, which the
// mapping would hide.
func (s *Session) TmpMapped() bool { return s.tmpMapped }

// underTmp says whether any path the policy grants lies under /tmp.
func underTmp(p Policy) bool {
	paths := append(append([]string{p.Workdir, p.Home, p.Tmp}, p.ExecPaths...), p.StateDirs...)
	for _, d := range p.InterpreterRuntime {
		paths = append(paths, d.Path)
	}
	for _, st := range p.StagedRuntime {
		paths = append(paths, st.SourcePath)
	}
	for _, x := range paths {
		if x == "/tmp" || strings.HasPrefix(filepath.Clean(x), "/tmp/") {
			return true
		}
	}
	return false
}

// Report is the session's containment report, with what the cgroup scope
// could and could not enforce.
func (s *Session) Report() Report { return s.report }

// Warnings are the session's W-SEC diagnostics (W-SEC-001, W-SEC-021).
func (s *Session) Warnings() diag.List { return s.report.Warnings }

// Notes are lines the runtime should print on stderr at launch (allowlist
// hosts whose resolver timed out).
func (s *Session) Notes() []string {
	if s.egress == nil {
		return nil
	}
	return s.egress.rule.notes
}

// Denied lists the newest destinations the egress refused (at most 64).
func (s *Session) Denied() []string {
	if s.egress == nil {
		return nil
	}
	d, _ := s.egress.Denied()
	return d
}

// Ended is closed when the session was ended from inside: the workdir size
// ceiling was crossed. Err then says why.
func (s *Session) Ended() <-chan struct{} { return s.ended }

// Err is the reason the session ended (wrapping ErrWorkdirSize, with an
// E-RUN-013 diagnostic), or nil.
func (s *Session) Err() error {
	select {
	case <-s.ended:
		return s.endErr
	default:
		return nil
	}
}

func (s *Session) end(err error) {
	s.endOnce.Do(func() {
		s.endErr = err
		// Closed before the kill, so whoever sees a command die also sees why.
		close(s.ended)
		if s.cg != nil {
			s.cg.kill()
		}
	})
}

func (s *Session) watch(every time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	p := s.policy
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if n := s.usedBytes(); n > p.WorkdirMaxBytes {
			d := diag.New(diag.RunWorkdirSize, diag.Pos{}, "capabilities.resources.workdir_max_bytes",
				fmt.Sprintf("the work, temporary and home folders hold %d bytes, over the %d-byte ceiling; the session is ended — remove files as you go or raise workdir_max_bytes", n, p.WorkdirMaxBytes))
			s.end(&refusal{d: d, kind: ErrWorkdirSize})
			return
		}
	}
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// startSpawner dedicates a locked OS thread, moved into the scope's v1
// directories, to starting commands: a process forked there is born in the
// scope instead of migrating into it.
func (s *Session) startSpawner() error {
	s.spawn = make(chan spawnReq)
	ready := make(chan error, 1)
	s.wg.Add(1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			s.spawnLoop(ready)
			return
		}
		// The main thread never exits, so it must not be the one that joins
		// the scope: hold it while a second goroutine, which then cannot
		// run here, takes another thread.
		inner := make(chan error, 1)
		go s.spawnLoop(inner)
		err := <-inner
		runtime.UnlockOSThread()
		ready <- err
	}()
	if err := <-ready; err != nil {
		s.spawn = nil
		return err
	}
	return nil
}

func (s *Session) spawnLoop(ready chan error) {
	defer s.wg.Done()
	// Never unlocked: when this returns, the runtime ends the thread, which
	// leaves the scope empty for removal.
	runtime.LockOSThread()
	if s.cg != nil && len(s.cg.v1) > 0 {
		if err := s.cg.adoptThread(); err != nil {
			ready <- err
			return
		}
	}
	if s.holder != nil {
		// This thread's children are born in the session's PID namespace.
		// Go starts new threads from its template thread, never from a
		// locked one, so none inherits this setting (a thread cannot be
		// created into another PID namespace).
		if err := unix.Setns(int(s.holder.pid.Fd()), unix.CLONE_NEWPID); err != nil {
			ready <- fmt.Errorf("join PID namespace: %w", err)
			return
		}
	}
	ready <- nil
	for r := range s.spawn {
		r.done <- r.cmd.Start()
	}
}

// Start starts a prepared command. It is cmd.Start run where the command is
// born inside the session's cgroups, which saves a cgroup migration (tens of
// milliseconds on a hybrid cgroup host) per command; calling cmd.Start
// directly is equally contained, only slower.
func (s *Session) Start(cmd *exec.Cmd) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.spawn == nil {
		return cmd.Start()
	}
	done := make(chan error, 1)
	s.spawn <- spawnReq{cmd: cmd, done: done}
	return <-done
}

// Command is exec.CommandContext with Prepare applied, for a command that
// needs no Dir, Env or ExtraFiles of its own (set those, then call Prepare,
// otherwise); cancelling ctx kills the command's whole process group. A
// preparation failure is left in the command's Err, so Start reports it.
func (s *Session) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := s.Prepare(cmd); err != nil {
		cmd.Err = err
	}
	return cmd
}

// Prepare makes an unstarted command run contained: its own session and
// process group (no controlling terminal),
// the session's cgroup, network namespace, mounts, rlimits, Landlock and
// seccomp, applied by a re-executed init (see Main) just before the target
// is exec'd. A nil cmd.Env becomes an empty environment, never mur's own.
// Set Dir, Env and ExtraFiles before calling it: ExtraFiles replaced
// afterwards makes the command fail to start contained (exit 126).
func (s *Session) Prepare(cmd *exec.Cmd) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := s.Err(); err != nil {
		return err
	}
	if cmd.Err != nil {
		return cmd.Err
	}
	if cmd.Process != nil {
		return errors.New("sandbox: command already started")
	}
	path := cmd.Path
	if !filepath.IsAbs(path) {
		base := cmd.Dir
		if base == "" {
			base = s.policy.Workdir
		}
		path = filepath.Join(base, path)
	}
	args := cmd.Args
	if len(args) == 0 {
		args = []string{cmd.Path}
	}
	spec := initSpec{
		V: helper.Protocol, Path: path, Args: args, NetnsFD: -1,
		Rlimits: s.rlimits(), MntnsFD: -1, IpcnsFD: -1, PidnsFD: -1, LandlockFD: -1, CapLast: s.capLast,
		Seccomp: s.host.Seccomp && helper.AuditArch != 0, UnixSockets: s.policy.Network.UnixSockets,
	}
	if cmd.Dir == "" {
		// Never mur's own working directory, which the sandbox may hide.
		cmd.Dir = s.policy.Workdir
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Its own session, which is also its own process group (pgid = pid, as
	// Setpgid gave): a new session has no controlling terminal, so nothing
	// the command starts can open /dev/tty or inject input into the
	// terminal mur runs in. setpgid on a session leader fails, so Setpgid
	// goes.
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pgid = false, 0
	cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Foreground = false, false
	if s.cg != nil {
		if s.cg.v2fd >= 0 {
			cmd.SysProcAttr.UseCgroupFD = true
			cmd.SysProcAttr.CgroupFD = s.cg.v2fd
		}
		spec.CgroupJoin = s.cg.v1Joins()
	}
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	if s.egress != nil {
		// An ExtraFiles list replaced after Prepare loses this descriptor,
		// and the init then fails closed instead of running unconfined.
		spec.NetnsFD = 3 + len(cmd.ExtraFiles)
		cmd.ExtraFiles = append(cmd.ExtraFiles, s.egress.ns.file)
		spec.Proxy = s.egress.ns.proxy.Addr().String()
	}
	if s.holder != nil {
		spec.MntnsFD = 3 + len(cmd.ExtraFiles)
		cmd.ExtraFiles = append(cmd.ExtraFiles, s.holder.ns)
		spec.IpcnsFD = 3 + len(cmd.ExtraFiles)
		cmd.ExtraFiles = append(cmd.ExtraFiles, s.holder.ipc)
		spec.PidnsFD = 3 + len(cmd.ExtraFiles)
		cmd.ExtraFiles = append(cmd.ExtraFiles, s.holder.pid)
	}
	if s.ruleset != nil {
		spec.LandlockFD = 3 + len(cmd.ExtraFiles)
		cmd.ExtraFiles = append(cmd.ExtraFiles, s.ruleset)
	}
	spec.MaxFD = 2 + len(cmd.ExtraFiles)
	raw, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("sandbox spec: %w", err)
	}
	cmd.Path = helperPath()
	cmd.Args = []string{helper.InitArg0, string(raw)}
	return nil
}

func (s *Session) rlimits() []rlimit {
	r := s.policy.Rlimits
	var out []rlimit
	set := func(res int, v uint64) { out = append(out, rlimit{Resource: res, Cur: v, Max: v}) }
	if r.MaxOpenFiles > 0 {
		set(unix.RLIMIT_NOFILE, uint64(r.MaxOpenFiles))
	}
	if r.MaxFileSizeBytes > 0 {
		set(unix.RLIMIT_FSIZE, uint64(r.MaxFileSizeBytes))
	}
	if r.MemoryBytes > 0 {
		set(unix.RLIMIT_AS, uint64(r.MemoryBytes))
	}
	if r.CPUSeconds > 0 {
		// SIGXCPU at the limit, SIGKILL one second later.
		out = append(out, rlimit{Resource: unix.RLIMIT_CPU, Cur: uint64(r.CPUSeconds), Max: uint64(r.CPUSeconds) + 1})
	}
	pidsBound := s.cg != nil && s.policy.Cgroup.PidsMax > 0 && s.host.Controllers["pids"] != ""
	if r.MaxProcesses > 0 && !pidsBound {
		set(unix.RLIMIT_NPROC, uint64(accountThreads(os.Getuid())+r.MaxProcesses))
	}
	return out
}

// accountThreads counts the threads uid runs now, the base RLIMIT_NPROC
// headroom is added to.
func accountThreads(uid int) int64 {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var n int64
	want := strconv.Itoa(uid)
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var mine bool
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				f := strings.Fields(v)
				mine = len(f) > 0 && f[0] == want
			}
			if v, ok := strings.CutPrefix(line, "Threads:"); ok && mine {
				t, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += t
			}
		}
	}
	return n
}

// LimitHit names the limit a finished command ran into, as a line for the
// model, or "" when none did. err is what Wait returned (or an error the
// command's own I/O produced), state the command's process state.
func (s *Session) LimitHit(err error, state *os.ProcessState) string {
	p := s.policy
	if errors.Is(err, ErrWorkdirSize) || errors.Is(s.Err(), ErrWorkdirSize) {
		return fmt.Sprintf("The session was ended: the work, temporary and home folders passed workdir_max_bytes (%d bytes).", p.WorkdirMaxBytes)
	}
	var oom, pids int64
	if s.cg != nil {
		oom, pids = s.cg.counters()
	}
	s.mu.Lock()
	newOOM, newPids := oom > s.lastOOM, pids > s.lastPids
	s.lastOOM, s.lastPids = oom, pids
	s.mu.Unlock()
	if errors.Is(err, syscall.EMFILE) {
		return fmt.Sprintf("The command ran out of file descriptors: max_open_files is %d per process.", p.Rlimits.MaxOpenFiles)
	}
	if errors.Is(err, syscall.EFBIG) {
		return fmt.Sprintf("The command tried to write a file larger than max_file_size_bytes (%d bytes).", p.Rlimits.MaxFileSizeBytes)
	}
	var sig syscall.Signal = -1
	if state != nil {
		if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			sig = ws.Signal()
		}
	}
	cpuUsed := func() bool {
		if state == nil || p.Rlimits.CPUSeconds <= 0 {
			return false
		}
		return state.UserTime()+state.SystemTime() >= time.Duration(p.Rlimits.CPUSeconds)*time.Second-100*time.Millisecond
	}
	switch {
	case sig == syscall.SIGKILL && newOOM:
		return fmt.Sprintf("The command was killed: the session's processes together exceeded cgroup_memory_bytes (%d bytes).", p.Cgroup.MemoryBytes)
	case sig == syscall.SIGXCPU || sig == syscall.SIGKILL && cpuUsed():
		return fmt.Sprintf("The command was killed: it used its cpu_seconds limit (%d s of CPU time).", p.Rlimits.CPUSeconds)
	case sig == syscall.SIGXFSZ:
		return fmt.Sprintf("The command was killed: it tried to write a file larger than max_file_size_bytes (%d bytes).", p.Rlimits.MaxFileSizeBytes)
	case newPids:
		return fmt.Sprintf("The command could not start more processes: the session's processes together reached cgroup_pids_max (%d).", p.Cgroup.PidsMax)
	case newOOM:
		return fmt.Sprintf("A process was killed: the session's processes together exceeded cgroup_memory_bytes (%d bytes).", p.Cgroup.MemoryBytes)
	}
	return ""
}

// Close kills every process the session's commands left, however they
// detached, and removes the scope, namespace and proxy. It is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	if s.spawn != nil {
		close(s.spawn)
	}
	s.wg.Wait()
	if s.cg != nil {
		s.cg.remove()
	}
	if s.watcher != nil {
		s.watcher.Close()
	}
	if s.holder != nil {
		s.holder.close()
	} else if s.ruleset != nil {
		s.ruleset.Close()
	}
	if s.egress != nil {
		s.egress.close()
	}
	if s.rootDir != "" {
		_ = os.Remove(s.rootDir)
	}
	return nil
}
