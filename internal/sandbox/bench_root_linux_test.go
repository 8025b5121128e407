package sandbox

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkComposedRoot measures what a stricter sealed root would cost
// (issue #12 item 9): today a sealed root binds the system trees whole, so
// any binary under /usr runs; the stricter root binds them noexec and only
// the allowlisted binaries, their ELF interpreter and the shared libraries
// they link (the DT_NEEDED closure) executable. It reports the closure's
// size and resolution time and the session's namespace setup (the holder
// building the root, once per session) for both roots.
func BenchmarkComposedRoot(b *testing.B) {
	if os.Getenv("MUR_TEST_PRIVILEGED") != "1" {
		b.Skip("set MUR_TEST_PRIVILEGED=1 (make bench-sandbox)")
	}
	var allow []string
	for _, name := range []string{"bash", "git", "ls", "grep", "sed", "python3"} {
		if p, err := exec.LookPath(name); err == nil {
			allow = append(allow, p)
		}
	}
	var files []string
	b.Run("closure", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			fs, err := elfClosure(allow)
			if err != nil {
				b.Fatal(err)
			}
			files = fs
		}
		b.ReportMetric(float64(len(allow)), "binaries")
		b.ReportMetric(float64(len(files)), "files")
	})
	base := b.TempDir()
	p := Policy{Workdir: base, Home: base, Tmp: base, Floor: Sealed, ExecPaths: allow}
	h := Probe()
	today := func() *mountSpec {
		s := &Session{policy: p, host: h, report: Explain(h, p)}
		if err := s.plan("bench"); err != nil {
			b.Fatal(err)
		}
		return s.mounts
	}
	strict := func() *mountSpec {
		m := today()
		for i := range m.Binds {
			if m.Binds[i].RO {
				m.Binds[i].NoExec = true
			}
		}
		for _, f := range files {
			m.Binds = append(m.Binds, bind{Src: f, RO: true})
		}
		return m
	}
	for _, c := range []struct {
		name string
		spec func() *mountSpec
	}{{"today", today}, {"strict", strict}} {
		b.Run("holder/"+c.name, func(b *testing.B) {
			var total time.Duration
			for i := 0; i < b.N; i++ {
				m := c.spec()
				t0 := time.Now()
				hd, err := startHolder(m)
				if err != nil {
					b.Fatal(err)
				}
				total += time.Since(t0)
				hd.close()
				os.Remove(m.Root)
				b.ReportMetric(float64(len(m.Binds)), "binds")
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "setup-ms")
		})
	}
}

// elfClosure is the binaries, their ELF interpreters and every shared
// library they link, transitively, resolved on the usual library paths.
func elfClosure(bins []string) ([]string, error) {
	dirs := []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}
	seen := map[string]bool{}
	var out []string
	queue := append([]string(nil), bins...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		f, err := elf.Open(p)
		if err != nil {
			continue // a script: its interpreter is another binary
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				b := make([]byte, prog.Filesz)
				if _, err := prog.ReadAt(b, 0); err == nil && len(b) > 1 {
					queue = append(queue, string(b[:len(b)-1]))
				}
			}
		}
		libs, err := f.ImportedLibraries()
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, l := range libs {
			for _, d := range dirs {
				if _, err := os.Stat(filepath.Join(d, l)); err == nil {
					queue = append(queue, filepath.Join(d, l))
					break
				}
			}
		}
	}
	return out, nil
}
