//go:build linux

package escape

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/sandbox"
)

// Probes that hide disk from workdir_max_bytes behind an unlinked file
// (issue #12 item 7): the blocks stay allocated while a descriptor or a
// mapping holds the inode, though no name is left for a walk to find.
func init() {
	// Three files of 2 MiB, each unlinked once written: the named tree
	// never passes the 4 MiB ceiling, what the command holds (6 MiB) does.
	probes["disk_unlinked_open"] = func() error {
		for i := range 3 {
			f, err := fillUnlinked(fmt.Sprint("held", i), 2<<20)
			if err != nil {
				return broken(err)
			}
			defer f.Close()
		}
		time.Sleep(30 * time.Second)
		return errors.New("outlived the ceiling with unlinked open files")
	}
	probes["disk_unlinked_mapped"] = func() error {
		for i := range 3 {
			f, err := fillUnlinked(fmt.Sprint("mapped", i), 2<<20)
			if err != nil {
				return broken(err)
			}
			m, err := syscall.Mmap(int(f.Fd()), 0, 2<<20, syscall.PROT_READ, syscall.MAP_SHARED)
			if err != nil {
				return broken(err)
			}
			defer syscall.Munmap(m)
			f.Close() // only the mapping holds the blocks now
		}
		time.Sleep(30 * time.Second)
		return errors.New("outlived the ceiling with unlinked mapped files")
	}
}

// fillUnlinked writes n bytes to a new file in the workdir, under the
// per-file limit in 1 MiB writes, and unlinks it, keeping it open.
func fillUnlinked(name string, n int) (*os.File, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i) // not zeros: no filesystem may keep it sparse
	}
	for written := 0; written < n; written += len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Remove(name); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func TestEscapeDiskUnlinked(t *testing.T) {
	if os.Getenv("MUR_TEST_PRIVILEGED") != "1" {
		t.Skip("set MUR_TEST_PRIVILEGED=1 (make test-escape): the suite needs root and namespaces")
	}
	for _, class := range []sandbox.Class{sandbox.Scoped, sandbox.Sealed} {
		for _, probe := range []string{"disk_unlinked_open", "disk_unlinked_mapped"} {
			t.Run(class.String()+"/"+probe, func(t *testing.T) {
				f := newFixture(t, class, func(p *sandbox.Policy) {
					// 6 MiB held, a 4 MiB ceiling.
					p.WorkdirMaxBytes, p.SizeCheckEvery, p.Rlimits.CPUSeconds = 4<<20, 200*time.Millisecond, 0
				})
				r := f.probe(probe)
				select {
				case <-f.s.Ended():
				default:
					t.Fatalf("ESCAPED: session not ended (exit %d): %s", r.code(), r.out)
				}
				var d diag.Diagnostic
				if !errors.Is(f.s.Err(), sandbox.ErrWorkdirSize) || !errors.As(f.s.Err(), &d) || d.Code != diag.RunWorkdirSize {
					t.Fatalf("session ended without E-RUN-013: %v", f.s.Err())
				}
				if r.signal() != syscall.SIGKILL {
					t.Fatalf("probe outlived the ceiling (exit %d): %s", r.code(), r.out)
				}
				t.Logf("ended: %v", f.s.Err())
			})
		}
	}
}
