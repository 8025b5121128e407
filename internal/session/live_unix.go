//go:build unix

package session

import (
	"errors"
	"os"
	"syscall"
)

// lockLive takes the exclusive flock that marks a session live. It never
// waits: a lock held elsewhere is errLiveElsewhere.
func lockLive(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLiveElsewhere
		}
		return nil, err
	}
	return f, nil
}

// probeLive takes a session's live lock if nobody holds it, so retention
// can remove the session while holding it; ok is false when the session is
// live. A session without a lock file (made before the lock existed) is
// not live.
func probeLive(path string) (release func(), ok bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return func() { f.Close() }, true, nil
}
