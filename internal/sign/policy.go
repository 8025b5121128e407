package sign

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// AnyScope is the trusted_keys entry that applies to every scope that has
// no entry of its own.
const AnyScope = "*"

// Policy is config.yaml's trusted_keys: per scope, the keys one of which
// must have signed every artifact of that scope that mur install installs.
// A scope with no entry (and no "*" entry) demands no signature.
type Policy struct {
	keys map[string][]*PublicKey
	// Where names the file that declared each scope, for messages.
	where map[string]string
}

// NewPolicy loads every key file of scopes (scope → public key paths);
// where names the file each scope's entry came from. A key that cannot be
// read refuses the whole policy: a policy with a key silently dropped
// would trust less than the operator wrote, or, for a scope whose only key
// it is, nothing at all.
func NewPolicy(scopes map[string][]string, where map[string]string) (*Policy, error) {
	p := &Policy{keys: map[string][]*PublicKey{}, where: where}
	var errs []error
	for scope, paths := range scopes {
		for _, path := range paths {
			k, err := LoadPublic(path)
			if err != nil {
				errs = append(errs, fmt.Errorf("trusted_keys.%s in %s: %w", scope, where[scope], err))
				continue
			}
			p.keys[scope] = append(p.keys[scope], k)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// entry is the trusted_keys entry that governs scope: its own, else "*".
func (p *Policy) entry(scope string) string {
	if p == nil {
		return ""
	}
	if _, ok := p.keys[scope]; ok {
		return scope
	}
	if _, ok := p.keys[AnyScope]; ok {
		return AnyScope
	}
	return ""
}

// Demands reports whether an artifact of scope must be signed.
func (p *Policy) Demands(scope string) bool { return p.entry(scope) != "" }

// Keys are the keys trusted for scope.
func (p *Policy) Keys(scope string) []*PublicKey {
	if e := p.entry(scope); e != "" {
		return p.keys[e]
	}
	return nil
}

// Field names the config entry that governs scope and its file, as
// refusals cite it: "trusted_keys.ana in /home/ana/.murmur/config.yaml".
func (p *Policy) Field(scope string) (field, file string) {
	e := p.entry(scope)
	return "trusted_keys." + e, p.where[e]
}

// Check verifies the bundles offered for an artifact of scope with the
// given digest: the first that verifies with a key trusted for scope
// wins. With none offered it is ErrUnsigned; otherwise the reasons every
// bundle failed, joined (each ErrUntrusted, ErrInvalid or ErrMalformed).
func (p *Policy) Check(scope, digest string, bundles [][]byte) (Verified, error) {
	if len(bundles) == 0 {
		return Verified{}, ErrUnsigned
	}
	keys := p.Keys(scope)
	var errs []error
	for _, b := range bundles {
		v, err := Verify(b, digest, keys)
		if err == nil {
			return v, nil
		}
		errs = append(errs, err)
	}
	return Verified{}, errors.Join(errs...)
}

// ErrUnsigned: no signature is attached where the policy demands one.
var ErrUnsigned = errors.New("artifact is not signed")

// KeyList names scope's trusted keys for a message: "sha256:… (a.pub)".
func (p *Policy) KeyList(scope string) string {
	var out []string
	for _, k := range p.Keys(scope) {
		out = append(out, k.ID+" ("+k.Path+")")
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
