// Package sandbox contains the host processes a capsule starts (shell tools,
// native tools): a portable Policy, a probe of what this host can enforce,
// the containment class that follows, and a Session that runs commands under
// that policy. Enforcement lives in *_linux.go; elsewhere everything runs
// advisory and says so (W-SEC-001).
//
// Every binary that starts sandboxed commands must call Main as the first
// statement of main (and of TestMain in tests): commands are started by
// re-executing the current binary as a small init that applies the policy in
// the child and then execs the target.
package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel error kinds, checked with errors.Is.
var (
	// ErrFloor: the declared containment floor is above what this host
	// achieves (E-CAP-003).
	ErrFloor = errors.New("containment floor not achievable")
	// ErrWorkdirSize: the work, temp and home folders together passed
	// workdir_max_bytes (E-RUN-013).
	ErrWorkdirSize = errors.New("workdir size ceiling crossed")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("sandbox session closed")
	// ErrPolicy: the policy itself is malformed (relative paths, a missing
	// workdir).
	ErrPolicy = errors.New("invalid sandbox policy")
)

// Class is a containment class. The zero value means "no requirement".
type Class int

// Containment classes in ascending strength.
const (
	Advisory Class = iota + 1
	Scoped
	Sealed
)

func (c Class) String() string {
	switch c {
	case Advisory:
		return "advisory"
	case Scoped:
		return "scoped"
	case Sealed:
		return "sealed"
	}
	return "none"
}

// ParseClass reads a capabilities.containment value; "" is no requirement.
func ParseClass(s string) (Class, error) {
	switch s {
	case "":
		return 0, nil
	case "advisory":
		return Advisory, nil
	case "scoped":
		return Scoped, nil
	case "sealed":
		return Sealed, nil
	}
	return 0, fmt.Errorf("%w: containment %q is not advisory, scoped or sealed", ErrPolicy, s)
}

// RuntimeDir is one capabilities.shell.interpreter_runtime directory.
type RuntimeDir struct {
	Path string
	// ListDir grants directory listing besides execute and read.
	ListDir bool
}

// StagedTree is one capabilities.shell.staged_runtime entry: a pinned host
// tree bind-mounted read-only, at the same path, into a sealed root.
type StagedTree struct {
	Binary     string
	SourcePath string
	Pin        string
}

// AllowHost is one capabilities.network.allow entry. Scheme "" spans http
// and https, Port 0 every port. Host is a lower-case name or an IP literal.
type AllowHost struct {
	Scheme string
	Host   string
	Port   int
}

// Network is the capsule's network grant.
type Network struct {
	Allow       []AllowHost
	UnixSockets bool
}

// Rlimits are the per-process resource limits; zero leaves a limit as mur
// was started with.
type Rlimits struct {
	// MaxProcesses is RLIMIT_NPROC headroom, applied only when the command
	// is not in a pids-limited cgroup.
	MaxProcesses     int64
	MaxOpenFiles     int64
	MaxFileSizeBytes int64
	CPUSeconds       int64
	MemoryBytes      int64
}

// Cgroup holds the session scope's aggregate limits; zero leaves one unset.
type Cgroup struct {
	MemoryBytes   int64 // memory.max; swap is bounded to 0 alongside
	PidsMax       int64
	CPUPercent    int64 // of one core
	IOBytesPerSec int64 // read and write, on the workdir's backing device
}

// Policy is what one capsule session's processes may touch. It is
// independent of the manifest types: the integrator maps the manifest onto
// it. All paths are absolute.
type Policy struct {
	Workdir string
	Home    string
	Tmp     string
	// ReadOnly are subtrees of Workdir (absolute, or relative to Workdir)
	// that are readable but never writable.
	ReadOnly []string
	// ExecPaths are files or trees that allowlisted binaries need to run
	// (the binary itself, its libraries), granted read and execute.
	ExecPaths []string
	// StateDirs are durable stores (capabilities.state of a native tool)
	// granted read and write, never execute, beside the workdir.
	StateDirs []string
	// InterpreterRuntime are interpreter_runtime directories.
	InterpreterRuntime []RuntimeDir
	// StagedRuntime are staged_runtime trees (sealed only).
	StagedRuntime []StagedTree
	// WorkdirExec lets files under Workdir, Home and Tmp be executed; it caps
	// the achieved class at advisory.
	WorkdirExec     bool
	Network         Network
	Rlimits         Rlimits
	Cgroup          Cgroup
	WorkdirMaxBytes int64
	// SizeCheckEvery is how often the ceiling is checked; zero is the
	// spec's 10 seconds.
	SizeCheckEvery time.Duration
	// Floor is capabilities.containment: the minimum class required.
	Floor Class
}

// Validate checks the policy's own shape.
func (p *Policy) Validate() error {
	var bad []string
	for _, f := range []struct{ name, v string }{{"workdir", p.Workdir}, {"home", p.Home}, {"tmp", p.Tmp}} {
		if !strings.HasPrefix(f.v, "/") {
			bad = append(bad, fmt.Sprintf("%s %q is not an absolute path", f.name, f.v))
		}
	}
	for _, e := range p.ExecPaths {
		if !strings.HasPrefix(e, "/") {
			bad = append(bad, fmt.Sprintf("exec path %q is not absolute", e))
		}
	}
	for _, d := range p.StateDirs {
		if !strings.HasPrefix(d, "/") {
			bad = append(bad, fmt.Sprintf("state directory %q is not absolute", d))
		}
	}
	for _, d := range p.InterpreterRuntime {
		if !strings.HasPrefix(d.Path, "/") {
			bad = append(bad, fmt.Sprintf("interpreter_runtime path %q is not absolute", d.Path))
		}
	}
	for _, s := range p.StagedRuntime {
		if !strings.HasPrefix(s.SourcePath, "/") {
			bad = append(bad, fmt.Sprintf("staged_runtime source_path %q is not absolute", s.SourcePath))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrPolicy, strings.Join(bad, "; "))
	}
	return nil
}
