//go:build linux

package helper

import "golang.org/x/sys/unix"

const AuditArch = unix.AUDIT_ARCH_AARCH64

const x32Bit = 0

// archDeniedSyscalls are deniedSyscalls this architecture alone has.
var archDeniedSyscalls []uintptr
