// Package session mints session ids and lays out a session's directories:
// the records directory under ~/.murmur/records, the work folder, and the
// runtime directory, and finds the launch's own task.
package session

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Prefix starts every session id.
const Prefix = "ses_"

// crockford is the lower-case Crockford base32 alphabet: no i, l, o or u,
// so an id read aloud or retyped is unambiguous.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// ErrBadID means a string is not a ses_ id.
var ErrBadID = errors.New("not a session id")

// NewID mints a ses_ id: a uuid v7 written as 26 lower-case Crockford
// base32 characters, so ids sort by creation time as strings and the
// millisecond they were minted can be read back by retention.
func NewID() (string, error) {
	u, err := minter.next(time.Now())
	if err != nil {
		return "", fmt.Errorf("mint session id: %w", err)
	}
	return Prefix + encode(u), nil
}

// UUID is a 128-bit RFC 9562 UUID.
type UUID [16]byte

// Version is the UUID's version number.
func (u UUID) Version() int { return int(u[6] >> 4) }

// v7Minter mints UUID v7s: 48 bits of Unix milliseconds, a 12-bit
// sequence, 62 random bits. Ids minted in one millisecond count up in the
// sequence (RFC 9562's method 3), so its ids sort in the order it minted
// them.
type v7Minter struct {
	mu   sync.Mutex
	last int64 // millisecond << 12 | sequence
}

// minter mints the process's session ids.
var minter v7Minter

func (m *v7Minter) next(now time.Time) (UUID, error) {
	var u UUID
	if _, err := rand.Read(u[:]); err != nil {
		return u, err
	}
	m.mu.Lock()
	t := max(now.UnixMilli()<<12, m.last+1)
	m.last = t
	m.mu.Unlock()
	ms, seq := uint64(t>>12), uint16(t&0xfff)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], ms<<16)
	copy(u[:6], b[:6])
	binary.BigEndian.PutUint16(u[6:8], 0x7000|seq)
	u[8] = u[8]&0x3f | 0x80 // variant 10
	return u, nil
}

// encode writes 128 bits as 26 base32 digits, most significant first; the
// first digit carries only the top 3 bits (130 bits of digits, 2 always 0).
func encode(u UUID) string {
	var out [26]byte
	// Big-endian 128-bit value as two halves.
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(u[i])
		lo = lo<<8 | uint64(u[8+i])
	}
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// ParseID returns the uuid inside a ses_ id.
func ParseID(id string) (UUID, error) {
	s, ok := strings.CutPrefix(id, Prefix)
	if !ok || len(s) != 26 {
		return UUID{}, fmt.Errorf("%w: %q", ErrBadID, id)
	}
	var hi, lo uint64
	for i := 0; i < 26; i++ {
		d := strings.IndexByte(crockford, s[i])
		if d < 0 || (i == 0 && d > 7) {
			return UUID{}, fmt.Errorf("%w: %q", ErrBadID, id)
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(d)
	}
	var u UUID
	for i := 7; i >= 0; i-- {
		u[i] = byte(hi)
		u[8+i] = byte(lo)
		hi >>= 8
		lo >>= 8
	}
	if u.Version() != 7 {
		return UUID{}, fmt.Errorf("%w: %q is not a uuid v7", ErrBadID, id)
	}
	return u, nil
}

// IDTime returns the millisecond a ses_ id was minted, from its uuid v7.
func IDTime(id string) (time.Time, error) {
	u, err := ParseID(id)
	if err != nil {
		return time.Time{}, err
	}
	var b [8]byte
	copy(b[2:], u[:6])
	return time.UnixMilli(int64(binary.BigEndian.Uint64(b[:]))).UTC(), nil
}

// Dirs are one session's directories.
type Dirs struct {
	ID string
	// Records is ~/.murmur/records/<manifest dir>/<id>: trace.jsonl,
	// blobs/, out/, home/, tmp/, logs/ and runtime/.
	Records string
	// Workdir is the work folder: --workdir, or
	// <manifest-dir>/workdir/<id>.
	Workdir string
	// OwnWorkdir is true when the runtime created Workdir (no --workdir);
	// only such a folder is ever removed by retention.
	OwnWorkdir bool

	// live holds the flock on Records/.live that marks the session live
	// until Release or the process's end (a crash releases it too).
	live *os.File
}

// LiveFile is the file in a records directory whose flock marks the
// session live; retention never removes a session whose lock is held.
const LiveFile = ".live"

// errLiveElsewhere is a session's live lock held by another process.
var errLiveElsewhere = errors.New("the session is live in another mur process")

// Release ends the session's claim on its records directory: retention in
// another run may remove it from now on. Later calls do nothing.
func (d Dirs) Release() error {
	if d.live == nil {
		return nil
	}
	err := d.live.Close()
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

// Trace is the records directory's trace.jsonl.
func (d Dirs) Trace() string { return filepath.Join(d.Records, "trace.jsonl") }

// Blobs is where trace.capture: content writes bodies.
func (d Dirs) Blobs() string { return filepath.Join(d.Records, "blobs") }

// Out holds result.txt and other outputs.
func (d Dirs) Out() string { return filepath.Join(d.Records, "out") }

// Result is out/result.txt.
func (d Dirs) Result() string { return filepath.Join(d.Records, "out", "result.txt") }

// Home is the session's HOME, never the host user's.
func (d Dirs) Home() string { return filepath.Join(d.Records, "home") }

// Tmp is the session's temporary directory.
func (d Dirs) Tmp() string { return filepath.Join(d.Records, "tmp") }

// Logs holds hook and shell logs.
func (d Dirs) Logs() string { return filepath.Join(d.Records, "logs") }

// Runtime is the session's runtime directory (MURMUR_RUNTIME_DIR):
// MURMUR.md and tools/<name>/. It lives in the records directory so that
// retention removes it with the session and a --workdir stays untouched.
func (d Dirs) Runtime() string { return filepath.Join(d.Records, "runtime") }

// RecordsGroup is the directory holding every session of the project whose
// manifest lives in manifestDir: ~/.murmur/records followed by the
// manifest directory's absolute path, as in
// /home/dev/.murmur/records/home/dev/proj/ses_….
func RecordsGroup(murmurHome, manifestDir string) (string, error) {
	abs, err := filepath.Abs(manifestDir)
	if err != nil {
		return "", fmt.Errorf("records group: %w", err)
	}
	rel := strings.TrimPrefix(filepath.ToSlash(abs), "/")
	// A Windows volume name has no place in a path; keep its letter.
	rel = strings.ReplaceAll(rel, ":", "")
	return filepath.Join(murmurHome, "records", filepath.FromSlash(rel)), nil
}

// Layout says where a session's directories go.
type Layout struct {
	// MurmurHome is ~/.murmur.
	MurmurHome string
	// ManifestDir is the directory holding the capsule's murmur.yaml.
	ManifestDir string
	// Workdir is --workdir; empty means <manifest-dir>/workdir/<id>.
	Workdir string
}

// Create mints an id and creates every directory of the session. A
// --workdir that does not exist is created; one that is a file is refused.
func Create(l Layout) (Dirs, error) {
	id, err := NewID()
	if err != nil {
		return Dirs{}, err
	}
	return CreateWithID(l, id)
}

// CreateWithID is Create with a given id (a resumed or test session).
func CreateWithID(l Layout, id string) (Dirs, error) {
	group, err := RecordsGroup(l.MurmurHome, l.ManifestDir)
	if err != nil {
		return Dirs{}, err
	}
	d := Dirs{ID: id, Records: filepath.Join(group, id)}
	if l.Workdir != "" {
		d.Workdir, err = filepath.Abs(l.Workdir)
		if err != nil {
			return Dirs{}, fmt.Errorf("workdir: %w", err)
		}
	} else {
		md, err := filepath.Abs(l.ManifestDir)
		if err != nil {
			return Dirs{}, fmt.Errorf("workdir: %w", err)
		}
		d.Workdir = filepath.Join(md, "workdir", id)
		d.OwnWorkdir = true
	}
	if d.live, err = claim(group, id); err != nil {
		return Dirs{}, fmt.Errorf("create session %s: %w", id, err)
	}
	for _, dir := range []string{d.Blobs(), d.Out(), d.Home(), d.Tmp(), d.Logs(), d.Runtime(), d.Workdir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			d.Release()
			return Dirs{}, fmt.Errorf("create session directory: %w", err)
		}
	}
	return d, nil
}

// claim creates group/id holding its live lock. A new records directory is
// made under a dot name, locked, then renamed into place, so retention in
// another run never sees it unlocked; an existing one (a resumed session)
// is locked where it is, and refused if another process holds it.
func claim(group, id string) (*os.File, error) {
	rec := filepath.Join(group, id)
	if err := os.MkdirAll(group, 0o700); err != nil {
		return nil, err
	}
	if _, err := os.Stat(rec); err == nil {
		return lockLive(filepath.Join(rec, LiveFile))
	}
	tmp, err := os.MkdirTemp(group, ".new-"+id+"-")
	if err != nil {
		return nil, err
	}
	f, err := lockLive(filepath.Join(tmp, LiveFile))
	if err == nil {
		if err = os.Rename(tmp, rec); err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return f, nil
}

// TaskSource says where the launch's task came from.
type TaskSource string

const (
	TaskFlag   TaskSource = "flag"      // mur run --task
	TaskMD     TaskSource = "task.md"   // task.md in the work folder
	TaskInput  TaskSource = "input.txt" // input.txt in the work folder
	TaskAbsent TaskSource = ""          // none: the session waits for A2A
)

// LaunchTask finds the launch's own task: --task, else task.md, else
// input.txt in the work folder. A file that exists but cannot be read is
// an error rather than "no task", so a permissions slip is not silently an
// idle session.
func LaunchTask(flag, workdir string) (string, TaskSource, error) {
	if flag != "" {
		return flag, TaskFlag, nil
	}
	for _, src := range []TaskSource{TaskMD, TaskInput} {
		b, err := os.ReadFile(filepath.Join(workdir, string(src)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", TaskAbsent, fmt.Errorf("read the launch task %s: %w", src, err)
		}
		return string(b), src, nil
	}
	return "", TaskAbsent, nil
}
