package manifest

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	bareRE       = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	credRefRE    = regexp.MustCompile(`^\$\{([A-Z_][A-Z0-9_]*)\}$`)
	credNameRE   = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
	altNameRE    = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)
	doorCredRE   = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// ValidBareName reports whether s is a bare artifact name: lowercase
// letters, digits and inner hyphens, 1–100 characters.
func ValidBareName(s string) bool { return len(s) <= 100 && bareRE.MatchString(s) }

// SplitName splits <scope>/<name>; ok is false for anything else.
func SplitName(s string) (scope, name string, ok bool) {
	scope, name, found := strings.Cut(s, "/")
	if !found || !ValidBareName(scope) || !ValidBareName(name) {
		return "", "", false
	}
	return scope, name, true
}

func bareOf(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// scopedHint is the spec's hint naming a bare name's scoped forms.
func scopedHint(bare string) string {
	return fmt.Sprintf("write it as '<scope>/%s', such as 'local/%s' for an artifact built on this host or 'murmur/%s' for a published one", bare, bare, bare)
}

// CredentialRef returns NAME when s is exactly ${NAME} in upper snake case;
// anything else is a literal.
func CredentialRef(s string) (string, bool) {
	m := credRefRE.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// NetEntry is a parsed network allow entry.
type NetEntry struct {
	Scheme string // "" for host and host:port forms
	Host   string
	Port   int // 0 when not written
}

// EffectivePort is the port the entry pins, with scheme defaults.
func (e NetEntry) EffectivePort() int {
	switch {
	case e.Port != 0:
		return e.Port
	case e.Scheme == "https":
		return 443
	case e.Scheme == "http":
		return 80
	}
	return 0
}

// Covers reports whether every destination d reaches is also reached by e:
// a bare host covers every scheme and port, host:port that port, and
// scheme://host[:port] that scheme and port.
func (e NetEntry) Covers(d NetEntry) bool {
	if !strings.EqualFold(e.Host, d.Host) {
		return false
	}
	if e.Scheme != "" && e.Scheme != d.Scheme {
		return false
	}
	if p := e.EffectivePort(); p != 0 && p != d.EffectivePort() {
		return false
	}
	return true
}

// validLabels reports a DNS name: dot-separated labels of letters, digits
// and inner hyphens, 1–63 characters each. Hand-written because it runs for
// every allow entry and a regexp is several times slower.
func validLabels(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func validHost(h string) bool {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		ip := net.ParseIP(h[1 : len(h)-1])
		return ip != nil && ip.To4() == nil
	}
	return net.ParseIP(h) != nil || validLabels(h)
}

// ParseNetEntry parses one network allow entry: https://host[:port],
// host, or host:port. The error says what is wrong.
func ParseNetEntry(s string) (NetEntry, error) {
	if s == "" || strings.TrimSpace(s) != s {
		return NetEntry{}, fmt.Errorf("must be a host, host:port or scheme://host[:port], not %q", s)
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return NetEntry{}, fmt.Errorf("is not a valid URL: %q", s)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return NetEntry{}, fmt.Errorf("scheme must be http or https, not %q", u.Scheme)
		}
		if u.User != nil {
			return NetEntry{}, fmt.Errorf("must not carry userinfo: %q", s)
		}
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
			return NetEntry{}, fmt.Errorf("a URL entry must carry no path, query or fragment: %q", s)
		}
		if u.Path == "/" {
			return NetEntry{}, fmt.Errorf("a URL entry must carry no path, not even /: %q", s)
		}
		e := NetEntry{Scheme: u.Scheme, Host: u.Hostname()}
		if strings.Contains(u.Host, "[") {
			e.Host = "[" + e.Host + "]"
		}
		if !validHost(e.Host) {
			return NetEntry{}, fmt.Errorf("has no valid host: %q", s)
		}
		if p := u.Port(); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return NetEntry{}, fmt.Errorf("port must be 1 to 65535: %q", s)
			}
			e.Port = n
		} else if strings.HasSuffix(u.Host, ":") {
			return NetEntry{}, fmt.Errorf("has an empty port: %q", s)
		}
		return e, nil
	}
	if strings.ContainsAny(s, "/?#@ \t") {
		return NetEntry{}, fmt.Errorf("must be a host, host:port or scheme://host[:port], not %q", s)
	}
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]"); i > 0 {
			host, port = s[:i+1], strings.TrimPrefix(s[i+1:], ":")
			if port == "" && len(s) > i+1 {
				return NetEntry{}, fmt.Errorf("has an empty port: %q", s)
			}
		}
	} else if h, p, found := strings.Cut(s, ":"); found {
		host, port = h, p
		if port == "" || strings.Contains(port, ":") {
			return NetEntry{}, fmt.Errorf("must be host or host:port, not %q", s)
		}
	}
	if !validHost(host) {
		return NetEntry{}, fmt.Errorf("has no valid host: %q", s)
	}
	e := NetEntry{Host: host}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return NetEntry{}, fmt.Errorf("port must be 1 to 65535: %q", s)
		}
		e.Port = n
	}
	return e, nil
}

// CheckEndpoint validates a gateway.endpoint; the error is the reason.
func CheckEndpoint(s string) error {
	if strings.Contains(s, "${") {
		return fmt.Errorf("gateway.endpoint is not interpolated; write the upstream URL itself")
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || !strings.Contains(s, "://") {
		return fmt.Errorf("is not a URL: write https://host[:port][/path]")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("carries userinfo before @, so its host is %q; remove the userinfo", u.Hostname())
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("has no host")
	}
	if !validHost(u.Hostname()) && net.ParseIP(u.Hostname()) == nil {
		return fmt.Errorf("host %q is not valid", u.Hostname())
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port must be 1 to 65535")
		}
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
		return fmt.Errorf("carries a query or fragment; each request keeps its own query")
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("http:// to %q would send the key across a network unencrypted; use https:// or a loopback host", u.Hostname())
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	// ::ffff:127.0.0.1 is an IPv4-mapped address; the spec rejects it.
	if ip.To4() != nil && strings.Contains(host, ":") {
		return false
	}
	return ip.IsLoopback()
}

// relPathProblem says why p is not a relative path inside the workdir, or
// "" when it is.
func relPathProblem(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "is empty"
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || (len(p) > 1 && p[1] == ':'):
		return "is absolute; write a path relative to the workdir"
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "escapes the workdir with ..; write a path inside it"
	}
	return ""
}

// hasDotDot reports any .. component.
func hasDotDot(p string) bool {
	for _, s := range strings.Split(strings.ReplaceAll(p, `\`, "/"), "/") {
		if s == ".." {
			return true
		}
	}
	return false
}

// segmentProblem says why s is not a single safe path segment.
func segmentProblem(s string) string {
	switch {
	case s == "":
		return "is empty"
	case strings.HasPrefix(s, "/"):
		return "is absolute"
	case strings.Contains(s, "/") || strings.Contains(s, `\`):
		return "contains a /"
	case s == "." || s == "..":
		return "is . or .."
	case strings.HasPrefix(s, "."):
		return "begins with a dot"
	}
	return ""
}

// ParseByteSize reads a bare byte count or one suffixed Ki, Mi or Gi.
func ParseByteSize(s string) (int64, error) {
	mult := int64(1)
	num := s
	for suf, m := range map[string]int64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30} {
		if strings.HasSuffix(s, suf) {
			num, mult = strings.TrimSuffix(s, suf), m
			break
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || num == "" || num[0] == '+' || num[0] == '-' && v >= 0 {
		return 0, fmt.Errorf("must be a byte count, optionally suffixed Ki, Mi or Gi, not %q", s)
	}
	if v <= 0 {
		return 0, fmt.Errorf("must be greater than zero, not %q", s)
	}
	if v > (1<<62)/mult {
		return 0, fmt.Errorf("is too large: %q", s)
	}
	return v * mult, nil
}

// ParseDuration reads an integer optionally suffixed by one of units
// (from s, m, h, d); a bare integer is seconds.
func ParseDuration(s, units string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("is empty")
	}
	unit := time.Second
	num := s
	if last := s[len(s)-1]; last < '0' || last > '9' {
		if !strings.ContainsRune(units, rune(last)) {
			return 0, fmt.Errorf("must be an integer optionally suffixed %s, not %q", strings.Join(strings.Split(units, ""), ", "), s)
		}
		num = s[:len(s)-1]
		unit = map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}[last]
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || num == "" || num[0] == '+' || num[0] == '-' {
		return 0, fmt.Errorf("must be an integer optionally suffixed %s, not %q", strings.Join(strings.Split(units, ""), ", "), s)
	}
	if v == 0 {
		return 0, fmt.Errorf("must be greater than zero")
	}
	if v > int64(1<<62)/int64(unit) {
		return 0, fmt.Errorf("is too large: %q", s)
	}
	return time.Duration(v) * unit, nil
}
