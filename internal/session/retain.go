package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Retain is trace.retain; a zero field is unset. Both set are ANDed: a
// session survives only inside both limits.
type Retain struct {
	MaxSessions int
	MaxAge      time.Duration
}

// Removal is one session retention deleted.
type Removal struct {
	ID      string
	Reason  string // "max_sessions" or "max_age"
	Records string
	// Workdir is the runtime-created work folder removed with it, when
	// there was one.
	Workdir string
}

// Sweep applies r to the records group of the running session cur. Only
// ses_ ids older than cur are candidates: the running session and any
// launched after it are never this session's to delete, and neither is an
// older one still live in another run (its live lock is held); it goes in
// a later sweep once it has ended. A --workdir folder is never touched;
// only <manifest-dir>/workdir/<id> goes.
func Sweep(cur Dirs, manifestDir string, r Retain, now time.Time) ([]Removal, error) {
	if r.MaxSessions == 0 && r.MaxAge == 0 {
		return nil, nil
	}
	group := filepath.Dir(cur.Records)
	ents, err := os.ReadDir(group)
	if err != nil {
		return nil, fmt.Errorf("retention: %w", err)
	}
	var older []string
	for _, e := range ents {
		id := e.Name()
		if !e.IsDir() || !strings.HasPrefix(id, Prefix) || id >= cur.ID {
			continue
		}
		if _, err := ParseID(id); err != nil {
			continue
		}
		older = append(older, id)
	}
	// Newest first: max_sessions keeps the running session and the
	// newest max_sessions-1 before it.
	sort.Sort(sort.Reverse(sort.StringSlice(older)))
	md, err := filepath.Abs(manifestDir)
	if err != nil {
		return nil, fmt.Errorf("retention: %w", err)
	}
	var out []Removal
	var errs []error
	for i, id := range older {
		reason := ""
		if r.MaxSessions > 0 && i+1 >= r.MaxSessions {
			reason = "max_sessions"
		}
		if r.MaxAge > 0 {
			if t, err := IDTime(id); err == nil && now.Sub(t) > r.MaxAge {
				reason = "max_age"
			}
		}
		if reason == "" {
			continue
		}
		rm := Removal{ID: id, Reason: reason, Records: filepath.Join(group, id)}
		// The lock is held through the removal, so the session cannot be
		// resumed halfway through it.
		release, ended, err := probeLive(filepath.Join(rm.Records, LiveFile))
		if err != nil {
			errs = append(errs, fmt.Errorf("retention: %s: %w", id, err))
			continue
		}
		if !ended {
			continue
		}
		err = os.RemoveAll(rm.Records)
		release()
		if err != nil {
			errs = append(errs, fmt.Errorf("retention: remove %s: %w", id, err))
			continue
		}
		wd := filepath.Join(md, "workdir", id)
		if _, err := os.Lstat(wd); err == nil {
			if err := os.RemoveAll(wd); err != nil {
				errs = append(errs, fmt.Errorf("retention: remove %s's work folder: %w", id, err))
			} else {
				rm.Workdir = wd
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("retention: %w", err))
		}
		out = append(out, rm)
	}
	return out, errors.Join(errs...)
}
