//go:build unix

package manifest

import (
	"syscall"
	"time"
)

// processCPU is the user+system CPU time the process has used, so a
// benchmark on a shared machine can report CPU per op beside wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
