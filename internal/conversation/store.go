package conversation

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/murmur/mur/internal/session"
)

// ContextPrefix starts every context id the runtime mints.
const ContextPrefix = "ctx_"

// NewContextID mints a context id for a task that came with none: ctx_
// and a uuid v7, like a session id.
func NewContextID() (string, error) {
	id, err := session.NewID()
	if err != nil {
		return "", err
	}
	return ContextPrefix + strings.TrimPrefix(id, session.Prefix), nil
}

// StoreDir is ~/.murmur/conversations/<record_store>.
func StoreDir(murmurHome, recordStore string) string {
	return filepath.Join(murmurHome, "conversations", recordStore)
}

// safeName is a context id usable as a directory name as it is.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// DirName is the directory a context's record lives in: the id itself when
// it is a plain name, else "_" and a hash of it, so an id a door client
// chose ("../x", "a/b") never becomes a path. A plain name never starts
// with "_", so the two kinds never meet.
func DirName(contextID string) string {
	if safeName.MatchString(contextID) {
		return contextID
	}
	sum := sha256.Sum256([]byte(contextID))
	return "_" + hex.EncodeToString(sum[:20])
}

// Store is one record_store as one capsule uses it.
type Store struct {
	// Dir is ~/.murmur/conversations/<record_store>.
	Dir string
	// Capsule is the capsule's name; Owns is set when it declares
	// context.retain, so the records it creates or opens carry a header
	// naming it.
	Capsule string
	Owns    bool
}

// Path is the record of contextID.
func (s Store) Path(contextID string) string {
	return filepath.Join(s.Dir, DirName(contextID), FileName)
}

// Log is an open record that messages are appended to.
type Log struct {
	store     Store
	contextID string
	path      string

	mu   sync.Mutex
	f    *os.File
	rec  Record // as read at the last (re)scan; Entries kept only from Open
	size int64  // bytes of complete lines as this Log knows the file
	next int64  // id of the next message
}

// Open opens contextID's record, creating it (and, for an owning capsule,
// its header) when absent. A torn last line is cut off. An unowned record
// opened by an owning capsule is adopted: its header is written. The
// record's content as opened is Record().
func (s Store) Open(contextID string) (*Log, error) {
	l := &Log{store: s, contextID: contextID, path: s.Path(contextID), size: -1}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return nil, fmt.Errorf("conversation record: %w", err)
	}
	if err := l.open(); err != nil {
		return nil, err
	}
	unlock, err := l.lock()
	if err != nil {
		l.f.Close()
		return nil, err
	}
	defer unlock()
	if s.Owns && l.rec.Header == nil {
		h := Header{Capsule: s.Capsule, ContextID: contextID, Created: time.Now().UTC()}
		if err := l.rewrite(h, l.rec.Entries); err != nil {
			l.f.Close()
			return nil, err
		}
	}
	return l, nil
}

// Record is the record as it was when opened (after adoption or Trim).
func (l *Log) Record() Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec
}

// ContextID is the record's context.
func (l *Log) ContextID() string { return l.contextID }

// Path is the record's file.
func (l *Log) Path() string { return l.path }

// open opens the record file for appending.
func (l *Log) open() error {
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("conversation record: %w", err)
	}
	l.f = f
	return nil
}

// lock takes the record's flock, reopening the file when another writer
// replaced or removed it since it was opened, and brings the Log up to
// date with the file: a torn tail is cut and the next id follows the
// newest message, whoever wrote it.
func (l *Log) lock() (unlock func(), err error) {
	for {
		if err := flock(l.f); err != nil {
			return nil, fmt.Errorf("conversation record: lock: %w", err)
		}
		same, err := sameFile(l.f, l.path)
		if err != nil {
			funlock(l.f)
			return nil, fmt.Errorf("conversation record: %w", err)
		}
		if same {
			break
		}
		// Renamed over (a rewrite) or removed (an age sweep): the lock
		// is on a file nobody reads any more.
		l.f.Close()
		if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
			return nil, fmt.Errorf("conversation record: %w", err)
		}
		if err := l.open(); err != nil {
			return nil, err
		}
		l.size = -1
	}
	fi, err := l.f.Stat()
	if err != nil {
		funlock(l.f)
		return nil, fmt.Errorf("conversation record: %w", err)
	}
	if fi.Size() != l.size {
		if err := l.rescan(); err != nil {
			funlock(l.f)
			return nil, err
		}
	}
	return func() { funlock(l.f) }, nil
}

// rescan reads the whole record, cutting a torn tail off. Called under
// the lock when the file is not as this Log left it.
func (l *Log) rescan() error {
	if _, err := l.f.Seek(0, 0); err != nil {
		return fmt.Errorf("conversation record: %w", err)
	}
	rec, err := Read(l.f)
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	if rec.Torn {
		if err := l.f.Truncate(rec.Size); err != nil {
			return fmt.Errorf("conversation record: cut the torn last line: %w", err)
		}
		rec.Torn = false
	}
	l.rec, l.size, l.next = rec, rec.Size, rec.LastID()+1
	return nil
}

// Append writes m to the record as the next message and returns it with
// its id and time. The line reaches the file in one write, before Append
// returns.
func (l *Log) Append(e Entry) (Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return e, errors.New("conversation record: the record is closed")
	}
	unlock, err := l.lock()
	if err != nil {
		return e, err
	}
	defer unlock()
	e.ID, e.ContextID = l.next, l.contextID
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	b, err := marshalEntry(e)
	if err != nil {
		return e, fmt.Errorf("conversation record: %w", err)
	}
	n, err := l.f.Write(b)
	l.size += int64(n)
	if err != nil {
		// A short write leaves a torn line the next lock cuts off.
		l.size = -1
		return e, fmt.Errorf("conversation record: %w", err)
	}
	l.next++
	return e, nil
}

// Trim keeps the newest max messages of a record this capsule owns and
// drops the rest, recording the drop in the header. It returns how many
// went; a record another capsule owns, or an unowned one, is not touched.
func (l *Log) Trim(max int) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	unlock, err := l.lock()
	if err != nil {
		return 0, err
	}
	defer unlock()
	// Appends do not keep entries in memory: read what the file holds.
	if err := l.rescan(); err != nil {
		return 0, err
	}
	h := l.rec.Header
	if h == nil || h.Capsule != l.store.Capsule || len(l.rec.Entries) <= max {
		return 0, nil
	}
	drop := len(l.rec.Entries) - max
	nh := *h
	nh.Dropped += int64(drop)
	nh.DroppedThrough = l.rec.Entries[drop-1].ID
	nh.TrimmedAt = time.Now().UTC()
	if err := l.rewrite(nh, l.rec.Entries[drop:]); err != nil {
		return 0, err
	}
	return drop, nil
}

// rewrite replaces the record with h and entries: a temporary file in the
// same directory, synced, renamed over the record. Called under the lock;
// the Log moves to the new file and keeps the lock on it.
func (l *Log) rewrite(h Header, entries []Entry) error {
	dir := filepath.Dir(l.path)
	tmp, err := os.CreateTemp(dir, ".conversation-*.tmp")
	if err != nil {
		return fmt.Errorf("conversation record: %w", err)
	}
	defer os.Remove(tmp.Name())
	hb, err := marshalHeader(h)
	if err != nil {
		tmp.Close()
		return fmt.Errorf("conversation record: %w", err)
	}
	buf := hb
	for _, e := range entries {
		b, err := marshalEntry(e)
		if err != nil {
			tmp.Close()
			return fmt.Errorf("conversation record: %w", err)
		}
		buf = append(buf, b...)
	}
	_, err = tmp.Write(buf)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("conversation record: %w", err)
	}
	nf, err := os.OpenFile(tmp.Name(), os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("conversation record: %w", err)
	}
	if err := flock(nf); err != nil {
		nf.Close()
		return fmt.Errorf("conversation record: lock: %w", err)
	}
	if err := os.Rename(tmp.Name(), l.path); err != nil {
		nf.Close()
		return fmt.Errorf("conversation record: %w", err)
	}
	syncDir(dir)
	// The old file's lock goes with its descriptor; a writer waiting on it
	// finds the file replaced and reopens.
	l.f.Close()
	l.f = nf
	hc := h
	l.rec = Record{Header: &hc, Entries: entries, Size: int64(len(buf))}
	l.size, l.next = int64(len(buf)), l.rec.LastID()+1
	return nil
}

// Close closes the record.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Removal is one record context.retain.max_age removed.
type Removal struct {
	ContextID string
	Dir       string
	LastWrite time.Time
}

// Sweep removes every record this capsule owns whose conversation.jsonl
// was last written more than maxAge before now, except keep's (the
// context the launch is using). Unowned records and those another capsule
// owns are never touched.
func (s Store) Sweep(maxAge time.Duration, keep string, now time.Time) ([]Removal, error) {
	if maxAge <= 0 {
		return nil, nil
	}
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("conversation retention: %w", err)
	}
	var out []Removal
	var errs []error
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || (keep != "" && e.Name() == DirName(keep)) {
			continue
		}
		dir := filepath.Join(s.Dir, e.Name())
		r, err := s.sweepOne(dir, maxAge, now)
		if err != nil {
			errs = append(errs, err)
		}
		if r != nil {
			out = append(out, *r)
		}
	}
	return out, errors.Join(errs...)
}

// sweepOne removes one context directory if the age rule takes it. The
// record's lock is held through the check and the removal, so a writer
// appending at that moment either lands before (and the record is young
// again) or reopens a new record after.
func (s Store) sweepOne(dir string, maxAge time.Duration, now time.Time) (*Removal, error) {
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("conversation retention: %w", err)
	}
	defer f.Close()
	if err := flock(f); err != nil {
		return nil, fmt.Errorf("conversation retention: %w", err)
	}
	fi, err := f.Stat()
	if err != nil || now.Sub(fi.ModTime()) <= maxAge {
		return nil, err
	}
	h, err := readHeader(f)
	if err != nil {
		return nil, fmt.Errorf("conversation retention: %s: %w", path, err)
	}
	if h == nil || h.Capsule != s.Capsule {
		return nil, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("conversation retention: %w", err)
	}
	return &Removal{ContextID: h.ContextID, Dir: dir, LastWrite: fi.ModTime()}, nil
}

// readHeader reads only a record's first line's header, nil for none.
func readHeader(f *os.File) (*Header, error) {
	buf := make([]byte, 64<<10)
	n, err := f.ReadAt(buf, 0)
	if n == 0 && err != nil {
		return nil, nil
	}
	line, _, found := strings.Cut(string(buf[:n]), "\n")
	if !found {
		return nil, nil
	}
	rec, err := parse([]byte(line + "\n"))
	if err != nil {
		return nil, err
	}
	return rec.Header, nil
}

// Summary is one record of a store, for mur conversation ls.
type Summary struct {
	ContextID string    `json:"context_id"`
	Dir       string    `json:"dir"`
	Owner     string    `json:"owner,omitempty"`
	Messages  int       `json:"messages"`
	Dropped   int64     `json:"dropped,omitempty"`
	LastWrite time.Time `json:"last_write"`
	// Error says why a record that is there cannot be read.
	Error string `json:"error,omitempty"`
}

// List summarises every record of the store, newest write first.
func (s Store) List() ([]Summary, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Summary
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(s.Dir, e.Name(), FileName)
		fi, err := os.Stat(path)
		if err != nil {
			continue
		}
		rec, err := ReadFile(path)
		sum := Summary{ContextID: e.Name(), Dir: filepath.Dir(path), Messages: len(rec.Entries), LastWrite: fi.ModTime().UTC()}
		if err != nil {
			sum.Error = err.Error()
		}
		if rec.Header != nil {
			sum.ContextID, sum.Owner, sum.Dropped = rec.Header.ContextID, rec.Header.Capsule, rec.Header.Dropped
		} else if len(rec.Entries) > 0 && rec.Entries[0].ContextID != "" {
			sum.ContextID = rec.Entries[0].ContextID
		}
		out = append(out, sum)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastWrite.After(out[j].LastWrite) })
	return out, nil
}

// ErrNoRecord means a store holds no record for a context.
var ErrNoRecord = errors.New("no conversation record")

// Remove deletes contextID's record whole, whoever owns it.
func (s Store) Remove(contextID string) error {
	dir := filepath.Dir(s.Path(contextID))
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w for context %q in %s", ErrNoRecord, contextID, s.Dir)
		}
		return err
	}
	return os.RemoveAll(dir)
}
