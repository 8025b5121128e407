// Package helper is the code of the sandbox's helper processes: each
// contained command's init, the session's mount holder and its watcher.
// They run as cmd/mur-sandbox, a small static binary installed beside mur,
// or as the calling binary re-executed (internal/sandbox.Main) where there
// is none. It imports nothing beyond the standard library and x/sys, so the
// helper starts in what its job costs: no package inits of the runtime's
// other dependencies, no cgo.
package helper

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Protocol is the version of the specs the runtime hands its helpers.
// Bump it whenever a spec's meaning changes: a helper from another build
// then refuses the spec (the init exits 126) instead of applying part of
// it. Unknown fields are refused too.
const Protocol = 2

// decode reads a spec strictly: unknown fields or another Protocol fail.
func decode(arg string, v any, version *int) error {
	d := json.NewDecoder(strings.NewReader(arg))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	if *version != Protocol {
		return fmt.Errorf("spec version %d, this helper reads %d: mur and mur-sandbox come from different builds; reinstall both", *version, Protocol)
	}
	return nil
}

// Encode is a spec as the helper's argv carries it.
func Encode(v any) (string, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// LandlockScopeABI is the Landlock ABI that scopes signals and abstract unix
// sockets to the sandbox.
const LandlockScopeABI = 6

// ProxyEnv are the variables that point a command at the egress's HTTP
// proxy, and keep loopback direct.
func ProxyEnv(addr string) []string {
	u := "http://" + addr
	return []string{
		"http_proxy=" + u, "HTTP_PROXY=" + u, "https_proxy=" + u, "HTTPS_PROXY=" + u, "ALL_PROXY=" + u,
		"no_proxy=localhost,127.0.0.1,::1", "NO_PROXY=localhost,127.0.0.1,::1",
	}
}

// ParseProcCgroup reads a /proc/<pid>/cgroup file: each v1 controller (and
// "" for v2) to its path.
func ParseProcCgroup(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}
