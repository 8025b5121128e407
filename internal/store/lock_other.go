//go:build !unix

package store

// lockDir has no cross-process lock on this platform: concurrent mur
// processes writing one store may lose a tag (the index is still replaced
// atomically, so it is never torn).
func lockDir(string) (func(), error) { return func() {}, nil }

// lockOpen has no cross-process lock on this platform: concurrent installs
// in one project may lose a pin (murmur.lock is still replaced atomically).
func lockOpen(string) (func(), error) { return func() {}, nil }
