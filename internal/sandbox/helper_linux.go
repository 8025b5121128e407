package sandbox

import (
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/sandbox/helper"
)

// The specs the helpers read, and their grants, live in package helper so
// that cmd/mur-sandbox builds without this package's imports.
type (
	initSpec     = helper.InitSpec
	cgroupJoin   = helper.CgroupJoin
	rlimit       = helper.Rlimit
	bind         = helper.Bind
	mountSpec    = helper.MountSpec
	landlockRule = helper.LandlockRule
)

const (
	grantRead     = helper.GrantRead
	grantReadExec = helper.GrantReadExec
	grantExecRead = helper.GrantExecRead
	grantRW       = helper.GrantRW
	grantRWX      = helper.GrantRWX
	grantDev      = helper.GrantDev
	auditArch     = helper.AuditArch
)

// Main turns this process into a sandbox helper — a contained command's
// init, the session's mount holder or its watcher — when the session
// started it as one, and returns at once otherwise. Call it as the first
// statement of main and of TestMain in any binary that starts sandboxed
// commands: where no mur-sandbox is installed beside the binary, the
// session re-executes the binary itself as its helpers. As a helper it
// never returns.
func Main() { helper.Main() }

// SeccompProgram is the filter every contained command runs under, for a
// tool that applies it elsewhere (bench/sandboxcall hands it to bubblewrap,
// so the two are compared under one filter).
func SeccompProgram(unixSockets bool) ([]unix.SockFilter, error) {
	return helper.SeccompFilter(unixSockets)
}

// HelperName is the helper binary's file name, looked for beside the
// running executable.
const HelperName = "mur-sandbox"

// selfExe re-executes the running binary, which calls Main first.
const selfExe = "/proc/self/exe"

var helperState struct {
	mu    sync.Mutex
	set   string
	found string
	once  bool
}

// SetHelper names the binary started as every contained command's init, the
// mount holder and the watcher; "" restores the default (mur-sandbox beside
// the executable, else the executable itself). A benchmark uses it to
// compare helpers in one run.
func SetHelper(path string) {
	helperState.mu.Lock()
	helperState.set = path
	helperState.mu.Unlock()
}

// helperPath is the binary the session starts its helpers from: the small
// cmd/mur-sandbox installed beside the running executable (make build puts
// bin/mur-sandbox beside bin/mur), which costs a helper what its job costs,
// or else the running executable re-executed, which works anywhere (a test
// binary, a mur copied alone) at the price of its whole startup per call.
func helperPath() string {
	helperState.mu.Lock()
	defer helperState.mu.Unlock()
	if helperState.set != "" {
		return helperState.set
	}
	if !helperState.once {
		helperState.once = true
		if exe, err := os.Executable(); err == nil {
			helperState.found = besideExecutable(exe)
		}
	}
	if helperState.found != "" {
		return helperState.found
	}
	return selfExe
}

// besideExecutable is mur-sandbox in the directory of exe (the running
// executable, symlinks resolved), when it is a regular executable file; ""
// otherwise.
func besideExecutable(exe string) string {
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	p := filepath.Join(filepath.Dir(exe), HelperName)
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || unix.Access(p, unix.X_OK) != nil {
		return ""
	}
	return p
}
