//go:build !linux

package wasi

import (
	"syscall"
	"time"
)

// statTimes reports no access or change time where Stat_t's layout differs;
// the guest sees them as absent.
func statTimes(*syscall.Stat_t) (atime, ctime time.Time) { return time.Time{}, time.Time{} }
