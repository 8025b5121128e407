package spend

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
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
// the result back.
func (m *MachineMeter) update(f func(*meterFile) error) error {
	if err := os.MkdirAll(filepath.Dir(m.path), 0o700); err != nil {
		return fmt.Errorf("spend meter: %w", err)
	}
	fd, err := os.OpenFile(m.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("spend meter: %w", err)
	}
	defer fd.Close()
	if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock spend meter: %w", err)
	}
	defer syscall.Flock(int(fd.Fd()), syscall.LOCK_UN)
	b, err := io.ReadAll(fd)
	if err != nil {
		return fmt.Errorf("read spend meter: %w", err)
	}
	var mf meterFile
	if len(b) > 0 {
		if err := json.Unmarshal(b, &mf); err != nil {
			// Guessing a count would let spending through unbounded.
			return fmt.Errorf("spend meter %s is corrupt (remove it to restart today's count): %w", m.path, err)
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
	if err := fd.Truncate(0); err != nil {
		return fmt.Errorf("write spend meter: %w", err)
	}
	if _, err := fd.WriteAt(out, 0); err != nil {
		return fmt.Errorf("write spend meter: %w", err)
	}
	return nil
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
