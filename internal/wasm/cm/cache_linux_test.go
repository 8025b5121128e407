//go:build linux && cgo

package cm

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

var touched byte // keeps the read below from being optimised away

// residentAfterTouch maps path, reads one byte in its middle and returns
// how much of the mapping that made resident (smaps Rss).
func residentAfterTouch(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	m, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	touched = m[len(m)/2+123]
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&m[0])))
	sm, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps")
	}
	defer sm.Close()
	sc := bufio.NewScanner(sm)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = strings.HasPrefix(line, start) // a mapping's header line
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return kb << 10
		}
	}
	t.Fatal("mapping not found in smaps")
	return 0
}

// TestCacheFileMapsWhatIsTouched: a cache file written the way the cache
// writes it makes little more than the touched page resident, where the
// same bytes written in one go (large page-cache folios) make much more.
func TestCacheFileMapsWhatIsTouched(t *testing.T) {
	dir := t.TempDir()
	b := make([]byte, 16<<20)
	for i := range b {
		b[i] = byte(i * 7)
	}
	whole := filepath.Join(dir, "whole")
	if err := os.WriteFile(whole, b, 0o600); err != nil {
		t.Fatal(err)
	}
	control := residentAfterTouch(t, whole)
	if control <= 256<<10 {
		t.Skipf("one-write file maps %d KiB per touch here: no large folios to avoid", control>>10)
	}
	f, err := os.Create(filepath.Join(dir, "small"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSmall(f, b); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got := residentAfterTouch(t, f.Name())
	t.Logf("one write: %d KiB resident per touch; cache-written: %d KiB", control>>10, got>>10)
	if got > 128<<10 {
		t.Fatalf("a touch of the cache-written file made %d KiB resident", got>>10)
	}
}
