package door

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Running is one session with an open door on this machine, as its
// registration file under ~/.murmur/run/ records it (mur ps, watch, stop).
type Running struct {
	Session string    `json:"session"`
	Capsule string    `json:"capsule"`
	Version string    `json:"version,omitempty"`
	URL     string    `json:"url"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Token is the operator token of a door with authentication. The file
	// is 0600 in a 0700 directory, so only the user who ran mur reads it.
	Token string `json:"token,omitempty"`
}

// Registration is a session's claim to be running: its file exists and its
// flock is held for as long as the session lives. A mur that crashes or is
// killed drops the lock with its last descriptor, so its file is stale and
// the next ListRunning removes it.
type Registration struct {
	path string
	f    *os.File
}

// RunDir is where registrations live: <murmur home>/run.
func RunDir(home string) string { return filepath.Join(home, "run") }

// Register writes <home>/run/<session>.json. The file is locked before it
// is renamed into place, so no reader ever sees it unlocked while the
// session lives.
func Register(home string, r Running) (*Registration, error) {
	if r.Session == "" || strings.ContainsAny(r.Session, `/\`) || strings.HasPrefix(r.Session, ".") {
		return nil, fmt.Errorf("register session: %q is not a session id", r.Session)
	}
	dir := RunDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("register session: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("register session: %w", err)
	}
	fail := func(err error) (*Registration, error) {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, fmt.Errorf("register session: %w", err)
	}
	// CreateTemp makes the file 0600; Chmod says so whatever the umask.
	if err := f.Chmod(0o600); err != nil {
		return fail(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	path := filepath.Join(dir, r.Session+".json")
	if err := os.Rename(f.Name(), path); err != nil {
		return fail(err)
	}
	return &Registration{path: path, f: f}, nil
}

// Close removes the registration, then drops its lock.
func (g *Registration) Close() error {
	if g == nil || g.f == nil {
		return nil
	}
	err := os.Remove(g.path)
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	g.f = nil
	return err
}

// ListRunning reads every live registration under home, oldest first. A
// file whose lock nobody holds belongs to a mur that is gone: it is
// removed and not listed.
func ListRunning(home string) ([]Running, error) {
	dir := RunDir(home)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Running
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, tempPrefix) {
			removeAbandoned(filepath.Join(dir, name))
			continue
		}
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		r, live, err := readRegistration(filepath.Join(dir, name))
		if err != nil || !live {
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

// tempPrefix names a registration still being written.
const tempPrefix = ".reg-"

// abandonAfter is how old an unlocked half-written registration must be
// before it is removed: a live Register locks its file moments after
// creating it, and a young file may be in that moment.
const abandonAfter = time.Minute

// removeAbandoned removes a half-written registration left by a mur that
// died inside Register.
func removeAbandoned(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || time.Since(st.ModTime()) < abandonAfter {
		return
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) == nil {
		_ = os.Remove(path)
	}
}

// readRegistration opens one file and tells whether its session still
// holds it; a stale one is removed while this reader holds its lock, so a
// session that registered a new file under the same name is never touched.
func readRegistration(path string) (Running, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return Running{}, false, err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		_ = os.Remove(path)
		return Running{}, false, nil
	} else if !errors.Is(err, unix.EWOULDBLOCK) {
		return Running{}, false, err
	}
	var r Running
	if err := json.NewDecoder(f).Decode(&r); err != nil {
		return Running{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return r, true, nil
}

// Gone reports whether the session's registration has been released: its
// file is absent or no longer locked (mur stop waits on it).
func Gone(home, session string) bool {
	_, live, err := readRegistration(filepath.Join(RunDir(home), session+".json"))
	return err != nil || !live
}
