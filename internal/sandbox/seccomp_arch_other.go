//go:build linux && !amd64 && !arm64

package sandbox

// No filter is built for other architectures; Probe reports seccomp as
// unavailable there.
const auditArch = 0

const x32Bit = 0

var archDeniedSyscalls []uintptr
