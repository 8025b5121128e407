//go:build linux

// Command treepss measures the PSS of a capsule's whole process tree at
// idle: mur run waiting on its first model request (the provider double
// holds it), with its sandbox helpers (the mount holder, the watcher). The
// tree is mur and every process below it; each one's Pss is read from
// /proc/<pid>/smaps_rollup. One capsule runs at a time, so the figure is
// the tree's alone (nothing else maps its pages). Subjects run in turn,
// each iteration starting one further, so load drifts hit them alike.
//
//	treepss [-runs 10] [-settle 500ms] [-pageout name,...] [-guests build/guests] [-src .] name=dir ...
//
// Each subject is a directory holding mur (and, for the helper to be used,
// mur-sandbox beside it): a copy of bin/mur alone measures the runtime
// re-executing itself as its helpers; a copy with bin/mur-sandbox measures
// the small helper. Copies, not bin/ itself: see bench/launch.sh on page
// cache folios. Needs root (the sandbox).
//
// -pageout names subjects whose tree's file-backed pages are paged out
// (process_madvise MADV_PAGEOUT) once idle, before PSS is read: what idle
// trimming of clean file pages would leave resident, and, in "after the
// wait" (the provider's answer released → the run's exit, for every
// subject), what faulting them back costs. Pages out of the page cache
// too, so that cost is an upper bound for a trim that keeps them cached.
package main

import (
	"flag"
	"fmt"
	"github.com/murmur/mur/bench/internal/procmem"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/murmur/mur/internal/providertest"
)

const capsule = `name: treepss
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      api_key: ${OPENAI_API_KEY}
  - name: murmur/file-go
    version: "0.1.0"
    runtime: tool
capabilities:
  shell:
    allow: [sh]
inference:
  transport: http
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 4
`

type subject struct {
	name, mur string
	total     []int64         // KiB per run
	after     []time.Duration // answer released → exit, per run
	pageout   bool
	byRole    map[string][]int64 // KiB per run
}

func main() {
	runs := flag.Int("runs", 10, "measured runs of each subject")
	settle := flag.Duration("settle", 500*time.Millisecond, "idle time after the first request before PSS is read")
	guests := flag.String("guests", "build/guests", "directory of built components (driver-openai.wasm, file-go.wasm)")
	src := flag.String("src", ".", "repository root (the artifacts' murmur.yaml)")
	pageout := flag.String("pageout", "", "comma-separated subjects whose tree's file-backed pages are paged out once idle, before PSS is read")
	flag.Parse()
	var subs []*subject
	for _, a := range flag.Args() {
		name, dir, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "treepss: %q: want name=dir\n", a)
			os.Exit(2)
		}
		abs, _ := filepath.Abs(filepath.Join(dir, "mur"))
		subs = append(subs, &subject{name: name, mur: abs, byRole: map[string][]int64{}, pageout: slices.Contains(strings.Split(*pageout, ","), name)})
	}
	if len(subs) == 0 {
		fmt.Fprintln(os.Stderr, "treepss: name a subject: name=dir (dir holds mur)")
		os.Exit(2)
	}
	if err := run(subs, *runs, *settle, *guests, *src); err != nil {
		fmt.Fprintf(os.Stderr, "treepss: %v\n", err)
		os.Exit(1)
	}
}

// gate holds the first model request of a run until released.
type gate struct {
	prov    *providertest.Server
	arrived chan struct{}
	release chan struct{}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.arrived <- struct{}{}
	<-g.release
	g.prov.ServeHTTP(w, r)
}

func run(subs []*subject, runs int, settle time.Duration, guests, src string) error {
	guests, _ = filepath.Abs(guests)
	src, _ = filepath.Abs(src)
	// Not under /tmp: the session's tmp is mapped there.
	root, err := os.MkdirTemp("/var/tmp", "treepss-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	env := append(os.Environ(), "HOME="+filepath.Join(root, "home"), "OPENAI_API_KEY=")
	mur := func(dir string, args ...string) error {
		cmd := exec.Command(subs[0].mur, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("mur %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	for name, dir := range map[string]string{"driver-openai": "drivers/driver-openai", "file-go": "examples/file-go"} {
		pkg := filepath.Join(root, "src", name)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			return err
		}
		for from, to := range map[string]string{filepath.Join(src, dir, "murmur.yaml"): "murmur.yaml", filepath.Join(guests, name+".wasm"): name + ".wasm"} {
			if err := copyFile(from, filepath.Join(pkg, to)); err != nil {
				return err
			}
		}
		zip := filepath.Join(root, name+".mur.zip")
		if err := mur(root, "build", pkg, "-o", zip); err != nil {
			return err
		}
		if err := mur(root, "publish", zip, "--scope", "murmur"); err != nil {
			return err
		}
	}
	if err := mur(root, "config", "set", "-g", "credentials.OPENAI_API_KEY", "bench-key"); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	g := &gate{prov: &providertest.Server{}, arrived: make(chan struct{}), release: make(chan struct{})}
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	capDir := filepath.Join(root, "cap")
	if err := os.MkdirAll(capDir, 0o755); err != nil {
		return err
	}
	m := strings.ReplaceAll(capsule, "%ENDPOINT%", "http://"+ln.Addr().String())
	if err := os.WriteFile(filepath.Join(capDir, "murmur.yaml"), []byte(m), 0o644); err != nil {
		return err
	}
	if err := mur(capDir, "install"); err != nil {
		return err
	}
	once := func(s *subject, measured bool) error {
		g.prov.Push(providertest.Step{Text: "done", InputTokens: 20, OutputTokens: 2})
		cmd := exec.Command(s.mur, "run", "--task", "say done")
		cmd.Dir, cmd.Env = capDir, env
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			return err
		}
		select {
		case <-g.arrived:
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return fmt.Errorf("%s: no model request:\n%s", s.name, out.String())
		}
		time.Sleep(settle)
		if measured && s.pageout {
			for _, pid := range procmem.Descendants(cmd.Process.Pid) {
				if err := pageOut(pid); err != nil {
					return fmt.Errorf("%s: page out %d: %w", s.name, pid, err)
				}
			}
		}
		if measured {
			roles := map[string]int64{}
			var total int64
			for _, pid := range procmem.Descendants(cmd.Process.Pid) {
				pss := procmem.Rollup(pid)["Pss"]
				total += pss
				roles[role(pid)] += pss
			}
			s.total = append(s.total, total)
			for r, v := range roles {
				s.byRole[r] = append(s.byRole[r], v)
			}
		}
		g.release <- struct{}{}
		released := time.Now()
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("%s: %v\n%s", s.name, err, out.String())
		}
		if measured {
			s.after = append(s.after, time.Since(released))
		}
		return nil
	}
	for _, s := range subs {
		if err := once(s, false); err != nil {
			return err
		}
	}
	for i := 0; i < runs; i++ {
		for k := range subs {
			if err := once(subs[(i+k)%len(subs)], true); err != nil {
				return err
			}
		}
	}
	la, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("%d runs of each subject, interleaved; PSS read %v after the first model request; load %s\n", runs, settle, strings.Join(strings.Fields(string(la))[:3], " "))
	base := med(subs[0].total)
	fmt.Printf("| subject | tree PSS p50 | ratio to %s | per process (p50) | after the wait p50 (answer released → exit) |\n| --- | --- | --- | --- | --- |\n", subs[0].name)
	for _, s := range subs {
		var parts []string
		var names []string
		for r := range s.byRole {
			names = append(names, r)
		}
		sort.Strings(names)
		for _, r := range names {
			parts = append(parts, fmt.Sprintf("%s %.1f MB", r, float64(med(s.byRole[r]))/1024))
		}
		fmt.Printf("| %s | %.1f MB | %.2f | %s | %.1f ms |\n", s.name, float64(med(s.total))/1024, float64(med(s.total))/float64(base), strings.Join(parts, ", "), float64(medDur(s.after))/1e6)
	}
	return nil
}

// role names a process of the tree by its argv[0]'s base name (the
// helpers' argv[0] says which helper they are).
func role(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "?"
	}
	a0, _, _ := strings.Cut(string(b), "\x00")
	return filepath.Base(a0)
}

// pageOut asks the kernel to reclaim pid's file-backed pages
// (process_madvise(2), MADV_PAGEOUT; pages other processes also map are
// skipped by the kernel).
func pageOut(pid int) error {
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return err
	}
	var iov []uint64 // struct iovec {base, len} pairs, addresses in pid
	for _, l := range strings.Split(string(maps), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("maps line %q", l)
		}
		iov = append(iov, a, b-a)
	}
	if len(iov) == 0 {
		return nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// At most UIO_MAXIOV (1024) ranges per call.
	for len(iov) > 0 {
		n := min(len(iov)/2, 1024)
		if _, _, e := unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(n), unix.MADV_PAGEOUT, 0, 0); e != 0 {
			return e
		}
		iov = iov[2*n:]
	}
	return nil
}

func medDur(xs []time.Duration) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func med(xs []int64) int64 {
	s := append([]int64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
