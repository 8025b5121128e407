//go:build cgo && linux

package cm

import (
	"fmt"
	"os"
	"syscall"
)

// fileIdentity names one version of a file: any write or replacement
// changes its ctime, which no user-space call can set back.
func fileIdentity(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d %d %d %d.%d %d.%d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}
