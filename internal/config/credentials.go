package config

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Credentials serves credentials.<NAME> from one config file to the
// credential gateway, which asks on every request. Each call costs a stat;
// the file is re-read only when its size, mtime or inode changed, so a key
// rotated with `mur config set -g` is seen on the next request.
type Credentials struct {
	path string

	mu    sync.Mutex
	stamp stamp
	vals  map[string]string
	err   error
}

type stamp struct {
	size  int64
	mtime time.Time
	ino   uint64
	ok    bool
}

// NewCredentials serves the credentials of the config file at path.
func NewCredentials(path string) *Credentials { return &Credentials{path: path} }

// GlobalCredentials serves ~/.murmur/config.yaml's credentials.
func GlobalCredentials() (*Credentials, error) {
	p, err := GlobalPath()
	if err != nil {
		return nil, err
	}
	return NewCredentials(p), nil
}

// Credential returns credentials.<name> when it is set and non-empty. A
// missing file holds no credentials; a malformed one is an error, so a
// half-edited file never silently drops a key.
func (c *Credentials) Credential(name string) (string, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := os.Stat(c.path)
	var s stamp
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", false, err
	default:
		s = stamp{size: st.Size(), mtime: st.ModTime(), ino: inode(st), ok: true}
	}
	if s != c.stamp || (c.vals == nil && c.err == nil) {
		c.stamp = s
		c.vals, c.err = nil, nil
		if s.ok {
			f, err := Load(c.path)
			if err != nil {
				c.err = err
			} else {
				c.vals = f.Credentials
			}
		}
		if c.vals == nil && c.err == nil {
			c.vals = map[string]string{}
		}
	}
	if c.err != nil {
		return "", false, c.err
	}
	v, ok := c.vals[name]
	return v, ok && v != "", nil
}
