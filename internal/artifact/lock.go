package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"go.yaml.in/yaml/v3"
)

// LockFile is the lock's file name, beside the capsule's murmur.yaml.
const LockFile = "murmur.lock"

// Pin origins: who caused the pin. operator pins come from mur install and
// are never removed by a running session; runtime pins come from a pull.
const (
	OriginOperator = "operator"
	OriginRuntime  = "runtime"
)

// ErrLock is the kind of every malformed-lock refusal.
var ErrLock = errors.New("malformed murmur.lock")

// Pin fixes one artifact of a capsule to the exact bytes it runs.
type Pin struct {
	Name    string `yaml:"name"`
	Version string `yaml:"version"`
	// Digest is the sha256 of the .mur.zip: the bytes mur build printed and
	// the OCI layer the store or registry serves.
	Digest string `yaml:"digest"`
	Origin string `yaml:"origin"`
	// From is the source it was resolved from (project, global or
	// registry:<name>); informative only, a pin is valid from any source.
	From string `yaml:"from,omitempty"`
	// Verified records the signature mur install checked when the trust
	// policy (config.yaml's trusted_keys) demanded one; absent otherwise.
	Verified *Verified `yaml:"verified,omitempty"`
	// OwnerID is the numeric GitHub id of the account owning the scope
	// source the pin was fetched from (absent for a store or registry): an
	// account renamed, or deleted and its login taken by someone else,
	// keeps or loses this id whatever its login.
	OwnerID int64 `yaml:"owner_id,omitempty"`
}

// Verified is what install established of a pin's signature: the trusted
// key that signed Digest, and the sha256 of the Sigstore bundle saying so.
type Verified struct {
	// Key is the signing key's id: sha256 of its DER public key.
	Key string `yaml:"key"`
	// Bundle is the sha256 of the bundle verified.
	Bundle string `yaml:"bundle"`
}

// Lock is the content of murmur.lock.
type Lock struct {
	LockVersion int   `yaml:"lock_version"`
	Artifacts   []Pin `yaml:"artifacts"`
}

const lockVersion = 1

// ParseLock decodes and validates a lock. Unknown keys, a bad name, version
// or digest, an unknown origin and two pins for one name are refused.
func ParseLock(b []byte) (*Lock, error) {
	l := &Lock{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(l); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %w", ErrLock, err)
	}
	if l.LockVersion == 0 && len(l.Artifacts) == 0 {
		l.LockVersion = lockVersion
	}
	if l.LockVersion != lockVersion {
		return nil, fmt.Errorf("%w: lock_version %d, this mur reads %d", ErrLock, l.LockVersion, lockVersion)
	}
	seen := map[string]bool{}
	for i, p := range l.Artifacts {
		if _, err := ParseFullName(p.Name); err != nil {
			return nil, fmt.Errorf("%w: artifacts[%d].name: %w", ErrLock, i, err)
		}
		if !ValidVersion(p.Version) {
			return nil, fmt.Errorf("%w: artifacts[%d].version %q", ErrLock, i, p.Version)
		}
		if !ValidDigest(p.Digest) {
			return nil, fmt.Errorf("%w: artifacts[%d].digest %q is not sha256:<64 hex>", ErrLock, i, p.Digest)
		}
		if p.Origin != OriginOperator && p.Origin != OriginRuntime {
			return nil, fmt.Errorf("%w: artifacts[%d].origin %q is neither operator nor runtime", ErrLock, i, p.Origin)
		}
		if v := p.Verified; v != nil && (!ValidDigest(v.Key) || !ValidDigest(v.Bundle)) {
			return nil, fmt.Errorf("%w: artifacts[%d].verified: key and bundle must each be sha256:<64 hex>", ErrLock, i)
		}
		if p.OwnerID < 0 {
			return nil, fmt.Errorf("%w: artifacts[%d].owner_id %d is not a GitHub account id", ErrLock, i, p.OwnerID)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%w: %s is pinned twice", ErrLock, p.Name)
		}
		seen[p.Name] = true
	}
	return l, nil
}

// ValidDigest reports whether d is "sha256:" and 64 lowercase hex digits.
func ValidDigest(d string) bool {
	const p = "sha256:"
	if len(d) != len(p)+64 || d[:len(p)] != p {
		return false
	}
	for _, c := range d[len(p):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// LoadLock reads the lock at path; a missing file is an empty lock.
func LoadLock(path string) (*Lock, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{LockVersion: lockVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock: %w", err)
	}
	l, err := ParseLock(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// Find returns the pin for the full name, if any.
func (l *Lock) Find(name string) (Pin, bool) {
	for _, p := range l.Artifacts {
		if p.Name == name {
			return p, true
		}
	}
	return Pin{}, false
}

// Upsert replaces the pin for p.Name or adds it.
func (l *Lock) Upsert(p Pin) {
	for i := range l.Artifacts {
		if l.Artifacts[i].Name == p.Name {
			l.Artifacts[i] = p
			return
		}
	}
	l.Artifacts = append(l.Artifacts, p)
}

// Marshal renders the lock with pins sorted by name, so the file diffs
// cleanly in version control.
func (l *Lock) Marshal() ([]byte, error) {
	out := Lock{LockVersion: lockVersion, Artifacts: append([]Pin(nil), l.Artifacts...)}
	sort.Slice(out.Artifacts, func(i, j int) bool { return out.Artifacts[i].Name < out.Artifacts[j].Name })
	var buf bytes.Buffer
	buf.WriteString("# murmur.lock: written by mur install; pins each artifact to the sha256 of its .mur.zip.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("encode lock: %w", err)
	}
	return buf.Bytes(), enc.Close()
}

// Save writes the lock atomically: a temporary file in the same directory,
// synced, then renamed over path, so a reader or a crash never sees half a
// lock.
func (l *Lock) Save(path string) error {
	b, err := l.Marshal()
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, b, 0o644)
}

// WriteFileAtomic writes b to path through a synced temporary file and a
// rename, then syncs the directory so the rename itself is durable.
func WriteFileAtomic(path string, b []byte, mode fs.FileMode) error {
	if err := WriteFileRename(path, b, mode, true); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err == nil {
		err = d.Sync()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: sync its directory: %w", path, err)
	}
	return nil
}

// WriteFileRename writes b to path through a temporary file and a rename,
// so path never holds part of b. With sync false the caller makes the
// bytes durable itself (one syncfs for many files is far cheaper than a
// fsync each).
func WriteFileRename(path string, b []byte, mode fs.FileMode, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, mode)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
