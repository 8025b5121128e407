//go:build linux

package helper

import "golang.org/x/sys/unix"

const AuditArch = unix.AUDIT_ARCH_X86_64

// x32Bit marks x32 ABI syscall numbers, which reach the same kernel entry
// points under other numbers; every one is refused.
const x32Bit = 0x40000000

// archDeniedSyscalls are deniedSyscalls this architecture alone has.
var archDeniedSyscalls = []uintptr{unix.SYS_INOTIFY_INIT}
