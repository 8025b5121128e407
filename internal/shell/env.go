package shell

import (
	"path"
	"sort"
	"strings"

	"github.com/murmur/mur/internal/manifest"
)

// BaselineNames are row 1 of the process environment: the host values of
// these names, when the host sets them, start every subprocess environment.
var BaselineNames = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "CARGO_HOME", "RUSTUP_HOME", "TERM"}

// IsCredentialName reports whether name matches the credential backstop,
// manifest.CredentialBackstop — the list E-CAP-016 refuses in
// capabilities.env.allow — matched case-insensitively here.
func IsCredentialName(name string) bool {
	return matchAny(manifest.CredentialBackstop, strings.ToUpper(name), true)
}

// hostCredentials carry a credential, or the way to one, without a
// credential-shaped name.
var hostCredentials = []string{"DATABASE_URL", "*_DATABASE_URL", "NETRC", "GPG_AGENT_INFO", "SSH_AGENT_PID"}

// credential is row 4's credential rule: the backstop, a credential-shaped
// name (manifest.CredentialShaped, W-SEC-024's rule: a shell command or
// native tool is not a WASM component, and nothing declares it a grant),
// or a host credential.
func credential(name string) bool {
	return IsCredentialName(name) || manifest.CredentialShaped(name) || matchAny(hostCredentials, strings.ToUpper(name), true)
}

func matchAny(patterns []string, name string, upper bool) bool {
	for _, p := range patterns {
		if upper {
			p = strings.ToUpper(p)
		}
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// runtimeSet are names only the runtime sets; no host-value row may supply
// them (rows 5–7 and a native tool's own variables).
var runtimeSet = map[string]bool{
	"TMPDIR": true, "TMP": true, "TEMP": true,
	"MURMUR_ARTIFACT_CONFIG": true, "MURMUR_STATE_DIR": true,
}

// envList is an environment under construction: a later set of a name
// replaces its value and keeps its first position.
type envList struct {
	names []string
	vals  map[string]string
}

func (e *envList) set(k, v string) {
	if e.vals == nil {
		e.vals = map[string]string{}
	}
	if _, ok := e.vals[k]; !ok {
		e.names = append(e.names, k)
	}
	e.vals[k] = v
}

func (e *envList) drop(match func(string) bool) {
	kept := e.names[:0]
	for _, k := range e.names {
		if match(k) {
			delete(e.vals, k)
			continue
		}
		kept = append(kept, k)
	}
	e.names = kept
}

func (e *envList) list() []string {
	out := make([]string, len(e.names))
	for i, k := range e.names {
		out[i] = k + "=" + e.vals[k]
	}
	return out
}

// envRequest says which optional rows apply to one process.
type envRequest struct {
	identity bool        // row 2: a shell tool call (not a native tool)
	extra    [][2]string // murmur:shell/execute's own env, applied before the strip
	native   *NativeTool // MURMUR_ARTIFACT_CONFIG and MURMUR_STATE_DIR
}

// buildEnv builds a subprocess environment row by row, in the spec's order.
func (s *Session) buildEnv(r envRequest) []string {
	host := s.hostEnv
	var e envList
	// Row 1: baseline names the host sets.
	for _, k := range BaselineNames {
		if v, ok := host[k]; ok {
			e.set(k, v)
		}
	}
	// Row 2: the session's identity, for a shell tool call.
	if r.identity {
		for _, kv := range s.p.Identity {
			e.set(kv[0], kv[1])
		}
	}
	// Row 3: capabilities.shell.baseline_env, patterns over host names.
	if len(s.p.BaselineEnv) > 0 {
		names := make([]string, 0, len(host))
		for k := range host {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if !runtimeSet[k] && matchAny(s.p.BaselineEnv, k, false) {
				e.set(k, host[k])
			}
		}
	}
	for _, kv := range r.extra {
		if !runtimeSet[kv[0]] {
			e.set(kv[0], kv[1])
		}
	}
	// Row 4: the credential patterns and strip_env, whatever set the name.
	e.drop(func(k string) bool {
		return credential(k) || matchAny(s.p.StripEnv, k, false)
	})
	// Row 5: the session's home folder.
	e.set("HOME", s.p.Home)
	e.set("USERPROFILE", s.p.Home)
	// Row 6: the session's directories.
	e.set("MURMUR_RUNTIME_DIR", s.p.RuntimeDir)
	e.set("MURMUR_RECORDS_DIR", s.p.RecordsDir)
	// Row 7: the session's temporary folder.
	tmp := s.p.Tmp
	if s.p.TmpMapped {
		tmp = "/tmp"
	}
	for _, k := range []string{"TMPDIR", "TMP", "TEMP"} {
		e.set(k, tmp)
	}
	// A native tool's own variables, set by the runtime alone.
	if n := r.native; n != nil {
		if n.Config != nil {
			e.set("MURMUR_ARTIFACT_CONFIG", string(n.Config))
		}
		if n.StateDir != "" {
			e.set("MURMUR_STATE_DIR", n.StateDir)
		}
	}
	return e.list()
}

func parseEnv(kvs []string) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" {
			m[k] = v
		}
	}
	return m
}
