// Package artifact is the artifact itself, independent of where it is kept:
// names, the reproducible .mur.zip format (pack and hostile-input-safe
// unpack), what mur build puts in it, and the murmur.lock that pins it.
package artifact

import (
	"errors"
	"fmt"
	"strings"
)

// ErrName is the kind of every artifact name or version refusal.
var ErrName = errors.New("invalid artifact name")

// MaxNameLen is the longest bare name the spec allows.
const MaxNameLen = 100

// ValidBareName reports whether s is a bare artifact name: lowercase
// letters, digits and inner hyphens, 1 to 100 characters.
func ValidBareName(s string) bool {
	if s == "" || len(s) > MaxNameLen || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Ref is a full artifact name, <scope>/<name>, and optionally a version.
type Ref struct {
	Scope   string
	Name    string
	Version string
}

// Full returns "<scope>/<name>".
func (r Ref) Full() string { return r.Scope + "/" + r.Name }

// String returns "<scope>/<name>@<version>", or the full name alone when
// the version is empty.
func (r Ref) String() string {
	if r.Version == "" {
		return r.Full()
	}
	return r.Full() + "@" + r.Version
}

// ParseFullName parses "<scope>/<name>"; both parts follow the bare-name
// rule. A bare name is refused with a hint naming its scoped forms.
func ParseFullName(s string) (Ref, error) {
	scope, name, ok := strings.Cut(s, "/")
	if !ok {
		if ValidBareName(s) {
			return Ref{}, fmt.Errorf("%w: %q has no scope: name it '<scope>/%s', such as 'local/%s'", ErrName, s, s, s)
		}
		return Ref{}, fmt.Errorf("%w: %q is not <scope>/<name>", ErrName, s)
	}
	if !ValidBareName(scope) {
		return Ref{}, fmt.Errorf("%w: scope %q of %q must be lowercase letters, digits and inner hyphens", ErrName, scope, s)
	}
	if !ValidBareName(name) {
		return Ref{}, fmt.Errorf("%w: name %q of %q must be lowercase letters, digits and inner hyphens, at most %d characters", ErrName, name, s, MaxNameLen)
	}
	return Ref{Scope: scope, Name: name}, nil
}

// ValidVersion reports whether v can be a version: one path segment that is
// also a valid OCI tag ([A-Za-z0-9_][A-Za-z0-9._-]{0,127}), since the
// version is the tag an artifact is stored under.
func ValidVersion(v string) bool {
	if v == "" || len(v) > 128 || v == "." || v == ".." {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' ||
			i > 0 && (c == '.' || c == '-')
		if !ok {
			return false
		}
	}
	return true
}

// ParseRef parses "<scope>/<name>@<version>" (the version is required).
func ParseRef(s string) (Ref, error) {
	full, ver, ok := strings.Cut(s, "@")
	if !ok || ver == "" {
		return Ref{}, fmt.Errorf("%w: %q has no version: write '%s@<version>'", ErrName, s, full)
	}
	r, err := ParseFullName(full)
	if err != nil {
		return Ref{}, err
	}
	if !ValidVersion(ver) {
		return Ref{}, fmt.Errorf("%w: version %q of %q must be one segment of letters, digits, '.', '_' and '-'", ErrName, ver, s)
	}
	r.Version = ver
	return r, nil
}
