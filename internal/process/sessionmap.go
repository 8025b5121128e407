package process

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// SessionMap is the harness session map: each context id mapped to the
// harness's own session id, what lifecycle.conversation: threaded
// continues. It is one JSON object in a file, rewritten by rename, so a
// reader never sees half of it.
type SessionMap struct {
	mu   sync.Mutex
	path string
}

// SessionMapFile is the map's file name in the capsule's record store.
const SessionMapFile = "harness-sessions.json"

// OpenSessionMap keeps the map at dir/harness-sessions.json (dir is the
// capsule's record store under ~/.murmur/conversations/).
func OpenSessionMap(dir string) *SessionMap {
	return &SessionMap{path: filepath.Join(dir, SessionMapFile)}
}

func (m *SessionMap) read() (map[string]string, error) {
	b, err := os.ReadFile(m.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("harness session map %s: %w", m.path, err)
	}
	return out, nil
}

// Get is the harness session of contextID, "" when none is held.
func (m *SessionMap) Get(contextID string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	all, err := m.read()
	return all[contextID], err
}

// Put maps contextID to the harness session id; "" removes it.
func (m *SessionMap) Put(contextID, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	all, err := m.read()
	if err != nil {
		return err
	}
	if id == "" {
		delete(all, contextID)
	} else {
		all[contextID] = id
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(m.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(m.path), ".harness-sessions-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), m.path)
}
