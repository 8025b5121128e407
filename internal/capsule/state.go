package capsule

import (
	"path/filepath"

	"github.com/murmur/mur/internal/config"
)

// stateDir is the durable store capabilities.state.store names:
// ~/.murmur/state/<store>/, keyed by the store name (the capsule's name
// when the entry omits it) and never by the work folder, so what an
// artifact keeps there outlives the session and a fresh work folder.
// Staging has refused a name that is not one path segment (E-CAP-009).
func stateDir(store string) (string, error) {
	home, err := config.MurmurDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "state", store), nil
}

// stateStore is the store name the explained scope gives artifact name,
// "" when its entry declares no capabilities.state.
func (l *launcher) stateStore(name string) string {
	for _, v := range l.scope.Artifacts {
		if v.Name == name {
			return v.StateStore
		}
	}
	return ""
}
