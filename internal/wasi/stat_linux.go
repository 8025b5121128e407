//go:build linux

package wasi

import (
	"syscall"
	"time"
)

func statTimes(st *syscall.Stat_t) (atime, ctime time.Time) {
	return time.Unix(st.Atim.Sec, st.Atim.Nsec), time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
}
