package cm

import (
	"strconv"
	"strings"
)

// semver is the version of a WIT interface name (pkg:ns/iface@1.2.3).
type semver struct {
	major, minor, patch int
	pre                 string
}

// splitVersion splits "wasi:io/streams@0.2.3" into its versionless base and
// version.
func splitVersion(name string) (string, semver, bool) {
	i := strings.LastIndexByte(name, '@')
	if i < 0 {
		return "", semver{}, false
	}
	v, ok := parseSemver(name[i+1:])
	return name[:i], v, ok
}

func parseSemver(s string) (semver, bool) {
	var v semver
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		v.pre, s = s[i:], s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return semver{}, false
	}
	nums := [3]*int{&v.major, &v.minor, &v.patch}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return semver{}, false
		}
		*nums[i] = n
	}
	return v, true
}

// compatible reports whether a definition at v can serve an import of w:
// same major (and, for 0.x, same minor), no pre-release on either side,
// as Cargo-style semver reads them.
func (v semver) compatible(w semver) bool {
	if v.pre != "" || w.pre != "" || v.major != w.major {
		return false
	}
	return v.major != 0 || v.minor == w.minor
}

func (v semver) less(w semver) bool {
	if v.major != w.major {
		return v.major < w.major
	}
	if v.minor != w.minor {
		return v.minor < w.minor
	}
	return v.patch < w.patch
}

// bestMatch picks, among the defined instance names, the one serving an
// import of name: the exact name, else the highest semver-compatible
// version of the same interface.
func bestMatch(name string, defined []string) (string, bool) {
	base, ver, ok := splitVersion(name)
	best, bestVer := "", semver{}
	for _, def := range defined {
		if def == name {
			return def, true
		}
		if !ok {
			continue
		}
		b, v, ok := splitVersion(def)
		if !ok || b != base || !v.compatible(ver) {
			continue
		}
		if best == "" || bestVer.less(v) {
			best, bestVer = def, v
		}
	}
	return best, best != ""
}
