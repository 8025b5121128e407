package store

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/sign"
)

// Trust is config.yaml's trusted_keys in effect here, every key read; nil
// when no scope demands a signature. Every path that brings an artifact's
// bytes onto the host (mur install, mur install -g, Pull) verifies under
// it through Installer.verifySignature, and a launch re-verifies a pin's
// recorded signature under it (reverify).
func (o *Open) Trust() (*sign.Policy, error) {
	return policyOf(o.Config)
}

// TrustFor is Open.Trust for the project in projectDir ("" for none),
// for callers that have no Open.
func TrustFor(projectDir string) (*sign.Policy, error) {
	cfg, err := config.LoadEffective(projectDir)
	if err != nil {
		return nil, err
	}
	return policyOf(cfg)
}

func policyOf(cfg *config.Effective) (*sign.Policy, error) {
	if len(cfg.TrustedKeys) == 0 {
		return nil, nil
	}
	return sign.NewPolicy(cfg.TrustedKeys, cfg.TrustedKeysFrom)
}

// launchTrust loads the policy once per resolution, and only when a pin
// records a verification: a launch with no signed pin never reads a key.
type launchTrust struct {
	once   sync.Once
	dir    string
	policy *sign.Policy
	err    error
}

func (t *launchTrust) get() (*sign.Policy, error) {
	t.once.Do(func() { t.policy, t.err = TrustFor(t.dir) })
	return t.policy, t.err
}

// reverifyEntry is reverify for a stored entry resolveStored accepted.
func (p *Project) reverifyEntry(lock *artifact.Lock, e Entry, trust *launchTrust) error {
	ref, err := artifact.ParseFullName(e.Name)
	if err != nil {
		return err
	}
	pin, _ := lock.Find(ref.Full())
	ref.Version = pin.Version
	return p.reverify(ref, pin, trust)
}

// reverify checks, at launch, the signature murmur.lock says install
// verified for pin: the bundle it names (by its sha256, the blob it is
// kept as in the project store) must still be there unchanged, sign the
// pinned digest — the staged bytes, which resolveStored has just checked
// against the pin — and verify with a key trusted_keys trusts today for
// the scope. A key dropped from trusted_keys since install refuses with
// E-REG-014; a missing or changed bundle, or one that no longer verifies,
// with E-REG-015. Either way the fix is to install again.
func (p *Project) reverify(ref artifact.Ref, pin artifact.Pin, trust *launchTrust) error {
	v := pin.Verified
	if v == nil {
		return nil
	}
	const again = "; run `mur install` to verify it again under today's trusted_keys"
	policy, err := trust.get()
	if err != nil {
		return diag.New(diag.RegUntrusted, diag.Pos{}, "trusted_keys", fmt.Sprintf("%s: murmur.lock records a signature by %s, and trusted_keys cannot be read to check it: %v", ref, v.Key, err))
	}
	field, pos := "trusted_keys."+ref.Scope, diag.Pos{}
	if policy.Demands(ref.Scope) {
		f, file := policy.Field(ref.Scope)
		field, pos = f, diag.Pos{File: file}
	}
	path, err := p.Store.blobPath(v.Bundle)
	if err != nil {
		return diag.New(diag.RegSignature, pos, field, fmt.Sprintf("%s: %v", ref, err))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return diag.New(diag.RegSignature, pos, field, fmt.Sprintf("%s: the signature bundle murmur.lock records (%s) is not in the project store: %v%s", ref, v.Bundle, err, again))
	}
	if got := artifact.Digest(b); got != v.Bundle {
		return diag.New(diag.RegSignature, pos, field, fmt.Sprintf("%s: the signature bundle %s in the project store was changed on disk (its bytes hash to %s)%s", ref, v.Bundle, got, again))
	}
	got, err := sign.Verify(b, pin.Digest, policy.Keys(ref.Scope))
	switch {
	case err == nil && got.Key != v.Key:
		// Verify picks the key the bundle names; one bundle names one key.
		return diag.New(diag.RegSignature, pos, field, fmt.Sprintf("%s: murmur.lock records key %s, its bundle names %s%s", ref, v.Key, got.Key, again))
	case err == nil:
		return nil
	case errors.Is(err, sign.ErrUntrusted):
		trusted := policy.KeyList(ref.Scope)
		if trusted == "" {
			trusted = "none"
		}
		return diag.New(diag.RegUntrusted, pos, field, fmt.Sprintf("%s was installed signed by %s, a key %s no longer trusts (trusted now: %s)%s", ref, v.Key, field, trusted, again))
	}
	return diag.New(diag.RegSignature, pos, field, fmt.Sprintf("%s: its recorded signature no longer verifies over the pinned %s: %v%s", ref, pin.Digest, err, again))
}
