package kill

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/spend"
	"github.com/murmur/mur/internal/store"
)

// fixture is one suite run: a private copy of mur, a HOME of its own and
// the random source every kill moment is drawn from.
type fixture struct {
	t     *testing.T
	root  string // every path of the run is under it; processes are found by it
	mur   string // root/bin/mur: a process running it is one of ours
	home  string
	guest string
	env   []string
	rng   *rand.Rand
	kills int
	// spent is the machine meter's last reading; it never goes down.
	spent int64
	// published: the driver and tool components are in the global store.
	published bool
	// hashed are the blobs already found to hold their named bytes.
	hashed map[string]blobID
}

// blobID tells whether a blob file is the one hashed before.
type blobID struct {
	ino   uint64
	size  int64
	mtime int64
}

func newFixture(t *testing.T) *fixture {
	bin, guest := os.Getenv("MUR_KILL_BIN"), os.Getenv("MUR_GUEST_OUT")
	if bin == "" || guest == "" {
		t.Skip("set MUR_KILL_BIN and MUR_GUEST_OUT (make test-kill): the suite kills the built mur running the built components")
	}
	if os.Geteuid() != 0 {
		t.Skip("mur run's sandbox needs root: run make test-kill as root")
	}
	// tmpfs when there is one: the suite syncs thousands of times, and a
	// shared disk makes every sync wait for everyone else's writes.
	base := os.Getenv("MUR_KILL_DIR")
	if base == "" {
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && syscall.Access("/dev/shm", 2) == nil {
			base = "/dev/shm"
		}
	}
	root, err := os.MkdirTemp(base, "mur-kill-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	f := &fixture{t: t, root: root, mur: filepath.Join(root, "bin", "mur"), home: filepath.Join(root, "home"), guest: guest, hashed: map[string]blobID{}}
	for _, d := range []string{filepath.Dir(f.mur), filepath.Join(f.home, ".murmur")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatalf("MUR_KILL_BIN: %v", err)
	}
	if err := os.WriteFile(f.mur, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// The sandbox's helper make build puts beside mur, which mur starts
	// from beside itself (without it mur re-executes itself).
	if h, err := os.ReadFile(filepath.Join(filepath.Dir(bin), "mur-sandbox")); err == nil {
		if err := os.WriteFile(filepath.Join(root, "bin", "mur-sandbox"), h, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The compile cache is keyed by each component's verified identity,
	// so it is kept beside the components between suite runs: only the
	// first run after a rebuild compiles them. It is linked before any mur
	// command runs, since several of them create the cache folder.
	cache := filepath.Join(guest, ".killcache")
	if err := os.MkdirAll(filepath.Join(cache, "wasm"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cache, filepath.Join(f.home, ".murmur", "cache")); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") {
			f.env = append(f.env, kv)
		}
	}
	f.env = append(f.env, "HOME="+f.home)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("MUR_KILL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("MUR_KILL_SEED=%d root %s", seed, root)
	f.rng = rand.New(rand.NewPCG(seed, seed>>1))
	return f
}

func (f *fixture) murmurDir() string { return filepath.Join(f.home, ".murmur") }

func (f *fixture) command(dir string, args ...string) *exec.Cmd {
	c := exec.Command(f.mur, args...)
	c.Dir = dir
	c.Env = f.env
	return c
}

// must runs mur to its end and fails the test unless it exits 0.
func (f *fixture) must(dir string, args ...string) (string, time.Duration) {
	f.t.Helper()
	c := f.command(dir, args...)
	start := time.Now()
	out, err := c.CombinedOutput()
	if err != nil {
		f.t.Fatalf("mur %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out), time.Since(start)
}

// killAfter starts mur, sends it SIGKILL after d (as kill -9 does: to mur
// alone, not its process group) and reaps it. landed is false when mur
// had already exited. ws are the sandbox watchers mur had started, seen
// just before and just after the kill.
func (f *fixture) killAfter(d time.Duration, dir string, args ...string) (landed bool, pid int, ws []watcher) {
	f.t.Helper()
	c := f.command(dir, args...)
	if err := c.Start(); err != nil {
		f.t.Fatal(err)
	}
	pid = c.Process.Pid
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
		return false, pid, nil
	case <-time.After(d):
	}
	ws = watchersOf(pid)
	if err := c.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		f.t.Fatal(err)
	}
	err := <-done
	ws = append(ws, watchersOf(pid)...)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() && st.Signal() == syscall.SIGKILL {
			f.kills++
			return true, pid, ws
		}
	}
	return false, pid, ws
}

// between draws a kill moment in [0, 0.9 d): d is a whole command's
// duration, so most kills land before it ends.
func (f *fixture) between(d time.Duration) time.Duration {
	return time.Duration(f.rng.Int64N(int64(d)*9/10 + 1))
}

// watcher is a sandbox session watcher (argv[0] mur-sandbox-watch): what
// it must remove once the runtime that started it is gone.
type watcher struct {
	PID     int      `json:"-"`
	Cgroups []string `json:"cgroups"`
	Root    string   `json:"root"`
	Runtime int      `json:"runtime"`
}

// watchersOf lists the live watchers of the mur process pid.
func watchersOf(pid int) []watcher {
	var out []watcher
	for _, p := range procs() {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(argv) != 2 || argv[0] != "mur-sandbox-watch" {
			continue
		}
		var w watcher
		if json.Unmarshal([]byte(argv[1]), &w) == nil && w.Runtime == pid {
			w.PID = p
			out = append(out, w)
		}
	}
	return out
}

func procs() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n != os.Getpid() {
			out = append(out, n)
		}
	}
	return out
}

// leftovers lists what of the killed mur pid is still there: a process
// running the suite's mur or carrying its paths in its environment (every
// sandboxed command's HOME and TMPDIR are in the session's records), a
// watcher of pid, a cgroup or sealed root a watcher was to remove, a mount
// naming the suite's paths.
func (f *fixture) leftovers(pid int, ws []watcher) []string {
	var out []string
	for _, p := range procs() {
		dir := filepath.Join("/proc", strconv.Itoa(p))
		if exe, err := os.Readlink(filepath.Join(dir, "exe")); err == nil && strings.HasPrefix(exe, f.root) {
			out = append(out, fmt.Sprintf("process %d runs %s", p, exe))
			continue
		}
		if env, err := os.ReadFile(filepath.Join(dir, "environ")); err == nil && bytes.Contains(env, []byte(f.root)) {
			cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
			out = append(out, fmt.Sprintf("process %d (%s) has the killed session's environment", p, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
		}
	}
	for _, w := range watchersOf(pid) {
		out = append(out, fmt.Sprintf("watcher %d of the killed mur %d is still running", w.PID, pid))
	}
	for _, w := range ws {
		for _, cg := range w.Cgroups {
			if _, err := os.Stat(cg); err == nil {
				out = append(out, "cgroup "+cg)
			}
		}
		if w.Root != "" {
			if _, err := os.Stat(w.Root); err == nil {
				out = append(out, "sealed root "+w.Root)
			}
		}
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(mi), "\n") {
			if strings.Contains(line, f.root) {
				out = append(out, "mount "+line)
			}
		}
	}
	return out
}

// settle waits until nothing of the killed mur pid is left: its watchers
// need a moment to see the runtime gone and kill its scope.
func (f *fixture) settle(pid int, ws []watcher, what string) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		left := f.leftovers(pid, ws)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s: 20 s after the kill, the killed session left:\n%s", what, strings.Join(left, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkStore reads every tagged artifact of a store back through its index
// with its digest verified, and hashes every blob against its name.
func (f *fixture) checkStore(l *store.Layout, what string) int {
	f.t.Helper()
	ctx := context.Background()
	metas, err := l.List(ctx)
	if err != nil {
		f.t.Fatalf("%s: %s store index: %v", what, l.Name(), err)
	}
	for _, m := range metas {
		r, err := artifact.ParseFullName(m.Name)
		if err != nil {
			f.t.Fatalf("%s: %s store lists %q: %v", what, l.Name(), m.Name, err)
		}
		r.Version = m.Version
		if _, err := l.Fetch(ctx, r); err != nil {
			f.t.Fatalf("%s: %s store: %v", what, l.Name(), err)
		}
	}
	blobs := filepath.Join(l.Root(), "blobs", "sha256")
	ents, err := os.ReadDir(blobs)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		f.t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue // a killed writer's temporary file, never named by the index
		}
		path := filepath.Join(blobs, e.Name())
		fi, err := os.Stat(path)
		if err != nil {
			f.t.Fatal(err)
		}
		// A blob hashed before is hashed again only if its file changed.
		st := fi.Sys().(*syscall.Stat_t)
		id := blobID{st.Ino, fi.Size(), fi.ModTime().UnixNano()}
		if f.hashed[path] == id {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != e.Name() {
			f.t.Fatalf("%s: %s store blob %s holds other bytes", what, l.Name(), e.Name())
		}
		f.hashed[path] = id
	}
	return len(metas)
}

// checkProject checks murmur.lock reads whole and every pin it holds is
// served by the project store with the pinned bytes.
func (f *fixture) checkProject(dir string, roles map[string]string, what string) *artifact.Lock {
	f.t.Helper()
	p := store.ProjectAt(dir)
	lock, err := artifact.LoadLock(p.LockPath())
	if err != nil {
		f.t.Fatalf("%s: %v", what, err)
	}
	f.checkStore(p.Store, what)
	var entries []store.Entry
	for _, pin := range lock.Artifacts {
		entries = append(entries, store.Entry{Name: pin.Name, Version: pin.Version, Role: roles[pin.Name]})
	}
	if _, err := p.Resolve(context.Background(), entries); err != nil {
		f.t.Fatalf("%s: murmur.lock pins what the project cannot serve: %v", what, err)
	}
	return lock
}

// checkMeter reads the machine spend meter: whole, and never lower than
// it read last.
func (f *fixture) checkMeter(what string) {
	f.t.Helper()
	used, err := spend.NewMachineMeter(spend.MeterPath(f.murmurDir()), 1).Used()
	if err != nil {
		f.t.Fatalf("%s: %v", what, err)
	}
	if used < f.spent {
		f.t.Fatalf("%s: the machine meter went down from %d to %d", what, f.spent, used)
	}
	f.spent = used
}

// checkRecords reads every session's trace.jsonl in the capsule's records
// group: each line whole and JSON, the last one ended.
func (f *fixture) checkRecords(capDir, what string) []string {
	f.t.Helper()
	group, err := session.RecordsGroup(f.murmurDir(), capDir)
	if err != nil {
		f.t.Fatal(err)
	}
	ents, err := os.ReadDir(group)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		f.t.Fatal(err)
	}
	var ids []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), session.Prefix) {
			continue
		}
		ids = append(ids, e.Name())
		b, err := os.ReadFile(filepath.Join(group, e.Name(), "trace.jsonl"))
		if errors.Is(err, os.ErrNotExist) {
			continue // killed before its trace was created
		}
		if err != nil {
			f.t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			f.t.Fatalf("%s: %s's trace.jsonl ends in a torn line: %q", what, e.Name(), tail(b))
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 16<<20)
		for n := 1; sc.Scan(); n++ {
			if !json.Valid(sc.Bytes()) {
				f.t.Fatalf("%s: %s's trace.jsonl line %d is not JSON: %q", what, e.Name(), n, sc.Text())
			}
		}
	}
	return ids
}

func tail(b []byte) []byte {
	if len(b) > 200 {
		return b[len(b)-200:]
	}
	return b
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatalf("%v (make drivers guests builds the components)", err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
