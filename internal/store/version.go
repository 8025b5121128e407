package store

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// semver is a parsed x.y.z[-pre][+build]; ok is false for versions that
// are not semver, which sort after every semver one.
type semver struct {
	ok    bool
	nums  [3]uint64
	pre   []string
	whole string
}

func parseSemver(v string) semver {
	s := semver{whole: v}
	core := strings.TrimPrefix(v, "v")
	core, _, _ = strings.Cut(core, "+")
	core, pre, hasPre := strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return s
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil || (len(p) > 1 && p[0] == '0') {
			return s
		}
		s.nums[i] = n
	}
	if hasPre {
		if pre == "" {
			return s
		}
		s.pre = strings.Split(pre, ".")
	}
	s.ok = true
	return s
}

// compareVersions orders versions by semver precedence; non-semver
// versions sort below all semver ones, among themselves by string.
func compareVersions(a, b string) int {
	x, y := parseSemver(a), parseSemver(b)
	switch {
	case x.ok != y.ok:
		if x.ok {
			return 1
		}
		return -1
	case !x.ok:
		return strings.Compare(a, b)
	}
	for i := range 3 {
		if x.nums[i] != y.nums[i] {
			if x.nums[i] > y.nums[i] {
				return 1
			}
			return -1
		}
	}
	// A pre-release has lower precedence than its release.
	switch {
	case len(x.pre) == 0 && len(y.pre) == 0:
		return 0
	case len(x.pre) == 0:
		return 1
	case len(y.pre) == 0:
		return -1
	}
	for i := 0; i < len(x.pre) && i < len(y.pre); i++ {
		if c := comparePre(x.pre[i], y.pre[i]); c != 0 {
			return c
		}
	}
	return len(x.pre) - len(y.pre)
}

func comparePre(a, b string) int {
	an, aerr := strconv.ParseUint(a, 10, 64)
	bn, berr := strconv.ParseUint(b, 10, 64)
	switch {
	case aerr == nil && berr == nil:
		if an == bn {
			return 0
		}
		if an > bn {
			return 1
		}
		return -1
	case aerr == nil:
		return -1
	case berr == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// sortMetas sorts by name, then newest version first.
func sortMetas(ms []Meta) {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Name != ms[j].Name {
			return ms[i].Name < ms[j].Name
		}
		return compareVersions(ms[i].Version, ms[j].Version) > 0
	})
}

// ServedWIT is the murmur:* package versions this mur serves (the WIT
// level): the packages of the interfaces a session links as host imports
// and of the exports it resolves and calls, at those exact versions
// (component.Runtime.Imports and component.Exports; a test keeps them
// equal). An artifact fits when every murmur:* interface it exports is at
// the version listed for its package. World-only packages (murmur:host,
// murmur:runtime-guest) serve no interface.
var ServedWIT = map[string]string{
	"murmur:artifact-manager": "0.1.0",
	"murmur:capsule":          "0.1.0",
	"murmur:conversation":     "0.1.0",
	"murmur:driver":           "0.1.0",
	"murmur:hook":             "0.5.0",
	"murmur:message":          "0.1.0",
	"murmur:runtime":          "0.2.0",
	"murmur:shell":            "0.1.0",
	"murmur:task":             "0.1.0",
	"murmur:task-io":          "0.1.0",
	"murmur:text":             "0.1.0",
	"murmur:tool":             "0.1.0",
	"murmur:tool-registry":    "0.1.0",
}

// FitsWIT reports whether every export in wit (murmur:pkg/iface@x.y.z) is
// at the served version of its package; the first misfit is returned.
func FitsWIT(wit []string) (bool, string) {
	for _, e := range wit {
		name, ver, ok := strings.Cut(e, "@")
		pkg, _, _ := strings.Cut(name, "/")
		if !ok {
			return false, e
		}
		if served, known := ServedWIT[pkg]; !known || served != ver {
			return false, e
		}
	}
	return true, ""
}

// ErrWITLevel means no version of an artifact fits this mur's WIT level
// and platform, or the one asked for does not.
var ErrWITLevel = errors.New("artifact does not fit this mur's WIT level")

// Newest picks, among candidates, the newest version by semver precedence
// that fits the served WIT level and has a payload for this platform.
func Newest(cands []Meta) (Meta, bool) { return newest(cands, false) }

func newest(cands []Meta, anyPlatform bool) (Meta, bool) {
	sorted := append([]Meta(nil), cands...)
	sortMetas(sorted)
	for _, m := range sorted {
		if ok, _ := FitsWIT(m.WIT); ok && (anyPlatform || RunsHere(m.Platform)) {
			return m, true
		}
	}
	return Meta{}, false
}

// CheckFit refuses m when it does not fit the served WIT level or this
// platform, naming the newest of cands that does (E-WIT-LEVEL-001).
func CheckFit(m Meta, cands []Meta) error {
	ok, misfit := FitsWIT(m.WIT)
	reason := ""
	switch {
	case !ok:
		reason = fmt.Sprintf("it exports %s, this mur serves %s", misfit, servedFor(misfit))
	case !RunsHere(m.Platform):
		reason = fmt.Sprintf("its payload is for %s, this host is %s", m.Platform, HostPlatform())
	default:
		return nil
	}
	hint := "no version of it fits; rebuild it against this mur's WIT packages"
	if ok {
		hint = "no version of it has a payload for this host; publish one built for " + HostPlatform() + " (mur install --all-platforms takes it anyway, for another host)"
	}
	if n, found := Newest(cands); found {
		hint = fmt.Sprintf("the newest that fits is %s@%s", n.Name, n.Version)
	}
	return fmt.Errorf("%w: %s@%s: %s; %s", ErrWITLevel, m.Name, m.Version, reason, hint)
}

func servedFor(export string) string {
	name, _, _ := strings.Cut(export, "@")
	pkg, _, _ := strings.Cut(name, "/")
	if v, ok := ServedWIT[pkg]; ok {
		return pkg + "@" + v
	}
	return "no " + pkg + " package"
}
