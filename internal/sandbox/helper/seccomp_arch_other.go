//go:build linux && !amd64 && !arm64

package helper

// No filter is built for other architectures; Probe reports seccomp as
// unavailable there.
const AuditArch = 0

const x32Bit = 0

var archDeniedSyscalls []uintptr
