package spend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/murmur/mur/internal/diag"
)

// MachineMeter is spend.machine_tokens_per_day: tokens across every run on
// the machine per UTC day, in one JSON file guarded by flock(2). Each
// in-flight call's reservation is written with its process id, so a run
// killed mid-call does not hold tokens forever: a reservation whose process
// is gone is dropped by the next reader.
type MachineMeter struct {
	path  string
	limit int64
	now   func() time.Time
	pid   int
	seq   atomic.Int64
}

// meterFile is the file's content.
type meterFile struct {
	Day      string        `json:"day"` // YYYY-MM-DD, UTC
	Used     int64         `json:"used"`
	Reserved []reservation `json:"reserved,omitempty"`
}

type reservation struct {
	ID     string `json:"id"` // <pid>-<seq>
	PID    int    `json:"pid"`
	Tokens int64  `json:"tokens"`
	Day    string `json:"day"`
}

// MeterPath is the meter's file under ~/.murmur.
func MeterPath(murmurHome string) string {
	return filepath.Join(murmurHome, "spend", "machine-tokens.json")
}

// NewMachineMeter returns the meter for limit tokens per UTC day.
func NewMachineMeter(path string, limit int64) *MachineMeter {
	return &MachineMeter{path: path, limit: limit, now: time.Now, pid: os.Getpid()}
}

// update runs f on the file's content under an exclusive lock and writes
// the result back atomically: a temporary file, synced, renamed over the
// meter, then the directory synced. A crash at any point leaves either the
// old count or the new one, never a truncated file. The lock is a sibling
// file because the rename replaces the meter's inode.
func (m *MachineMeter) update(f func(*meterFile) error) error {
	dir := filepath.Dir(m.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("spend meter: %w", err)
	}
	lk, err := os.OpenFile(m.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("spend meter: %w", err)
	}
	defer lk.Close()
	if err := syscall.Flock(int(lk.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock spend meter: %w", err)
	}
	defer syscall.Flock(int(lk.Fd()), syscall.LOCK_UN)
	var mf meterFile
	b, err := os.ReadFile(m.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// No run has been metered on this machine yet.
	case err != nil:
		return fmt.Errorf("read spend meter: %w", err)
	default:
		if err := m.decode(b, &mf); err != nil {
			return err
		}
	}
	today := m.now().UTC().Format(time.DateOnly)
	if mf.Day != today {
		mf.Day, mf.Used = today, 0
	}
	live := mf.Reserved[:0]
	for _, r := range mf.Reserved {
		if r.Day == today && alive(r.PID) {
			live = append(live, r)
		}
	}
	mf.Reserved = live
	if err := f(&mf); err != nil {
		return err
	}
	out, err := json.Marshal(mf)
	if err != nil {
		return fmt.Errorf("spend meter: %w", err)
	}
	if err := writeAtomic(m.path, out); err != nil {
		return fmt.Errorf("write spend meter: %w", err)
	}
	return nil
}

// decode reads the file strictly. A file the meter cannot have written
// (empty, truncated, unknown fields, no day, negative counts) is refused:
// guessing a count, or starting again from 0, would let spending through
// unbounded.
func (m *MachineMeter) decode(b []byte, mf *meterFile) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(mf)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON object")
	}
	if err == nil {
		if _, perr := time.Parse(time.DateOnly, mf.Day); perr != nil {
			err = fmt.Errorf("day %q is not a YYYY-MM-DD date", mf.Day)
		} else if mf.Used < 0 {
			err = fmt.Errorf("used is negative (%d)", mf.Used)
		}
	}
	for _, r := range mf.Reserved {
		if err == nil && (r.Tokens < 0 || r.PID <= 0) {
			err = fmt.Errorf("reservation %q holds %d tokens for process %d", r.ID, r.Tokens, r.PID)
		}
	}
	if err == io.EOF {
		err = errors.New("the file is empty")
	}
	if err != nil {
		return diag.New(diag.SpendMeter, diag.Pos{File: m.path}, "",
			fmt.Sprintf("the machine spend meter (spend.machine_tokens_per_day) is damaged: %v; it is not read as 0 used. Check today's spending, then delete the file to restart today's count from 0, or write {\"day\":\"YYYY-MM-DD\",\"used\":N} with the tokens already spent today", err))
	}
	return nil
}

// writeAtomic replaces path with b: a synced temporary file in the same
// directory renamed over it, then the directory synced so the rename
// itself survives a power loss.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// alive reports whether pid is a running process (signal 0 probes).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Admit implements Admitter.
func (m *MachineMeter) Admit(need int64) (Reservation, error) {
	id := strconv.Itoa(m.pid) + "-" + strconv.FormatInt(m.seq.Add(1), 10)
	var day string
	err := m.update(func(mf *meterFile) error {
		used := mf.Used
		for _, r := range mf.Reserved {
			used += r.Tokens
		}
		if used+need > m.limit {
			return &Refusal{Limit: LimitMachine, Ceiling: m.limit, Used: used, Needed: need}
		}
		day = mf.Day
		mf.Reserved = append(mf.Reserved, reservation{ID: id, PID: m.pid, Tokens: need, Day: mf.Day})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &machineRes{m: m, id: id, day: day}, nil
}

// Used returns the tokens charged today so far.
func (m *MachineMeter) Used() (int64, error) {
	var used int64
	err := m.update(func(mf *meterFile) error { used = mf.Used; return nil })
	return used, err
}

type machineRes struct {
	m    *MachineMeter
	id   string
	day  string
	done bool
}

// Settle charges the call to the day it was admitted on; a call that
// straddles midnight is charged to the old day, which is already gone, so
// the new day starts clean as the spec's "per UTC day" reads.
func (r *machineRes) Settle(charged int64) error {
	if r.done {
		return nil
	}
	r.done = true
	return r.m.update(func(mf *meterFile) error {
		for i, res := range mf.Reserved {
			if res.ID == r.id {
				mf.Reserved = append(mf.Reserved[:i], mf.Reserved[i+1:]...)
				break
			}
		}
		if mf.Day == r.day {
			mf.Used += charged
		}
		return nil
	})
}
