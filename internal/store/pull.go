package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/murmur/mur/internal/artifact"
)

// Pull installs one artifact into a running session's project, as
// manage.pull and the pull-artifact tool do: from the project store, then
// the global store (what mur install or mur publish already placed on
// this host), verified like mur install (the trusted_keys in effect for
// the project included), pinned in murmur.lock with origin runtime. name
// must be a full name; version a single path segment, or "" for the newest version that fits this mur's WIT level and platform (on a
// tie the project store wins). A version that does not fit is refused with
// E-WIT-LEVEL-001 naming the newest that does. check runs on the package
// before anything is written (the caller's install-entry and role rules).
func Pull(ctx context.Context, p *Project, global *Layout, name, version string, check Checker) (Installed, error) {
	return PullFrom(ctx, p, global, nil, name, version, check)
}

// PullFrom is Pull for a capsule whose capabilities.install.from names
// sources: a version neither store holds is fetched from the scope's
// source in scopes (ScopeSources), verified the same way, and pinned with
// the owner id — and written to no store: its package is unpacked for the
// session (Installed.Dir, UnpackedResolved) and nothing else keeps it.
func PullFrom(ctx context.Context, p *Project, global *Layout, scopes []Source, name, version string, check Checker) (Installed, error) {
	if strings.HasPrefix(name, "github:") || strings.ContainsAny(name, `\:`) || strings.Count(name, "/") != 1 {
		return Installed{}, fmt.Errorf("%w: pull takes a full name <scope>/<name>, not %q", artifact.ErrName, name)
	}
	ref, err := artifact.ParseFullName(name)
	if err != nil {
		return Installed{}, err
	}
	if version != "" {
		if strings.Contains(version, "/") || strings.Contains(version, "..") || !artifact.ValidVersion(version) {
			return Installed{}, fmt.Errorf("%w: pull version %q must be a single path segment", artifact.ErrName, version)
		}
		ref.Version = version
	}
	srcs := append([]Source{p.Store, global}, scopes...)
	if ref.Version == "" {
		m, err := NewestIn(ctx, srcs, ref.Full())
		if err != nil {
			return Installed{}, err
		}
		ref.Version = m.Version
	}
	chain := func(f *Fetched, pkg *artifact.Package) error {
		if err := InstallChecker(f, pkg); err != nil {
			return err
		}
		if check != nil {
			return check(f, pkg)
		}
		return nil
	}
	// A session's pull is held to trusted_keys as mur install is.
	trust, err := TrustFor(p.Dir)
	if err != nil {
		return Installed{}, err
	}
	in := &Installer{Project: p, Sources: srcs, Check: chain, Origin: artifact.OriginRuntime, Trust: trust, Unstored: true}
	got, err := in.Install(ctx, []artifact.Ref{ref})
	if err != nil {
		return Installed{}, err
	}
	return got[0], nil
}

// ErrNotPulled: a removal names an artifact murmur.lock does not pin as
// pulled by a running session (origin runtime).
var ErrNotPulled = errors.New("not pulled by a running session")

// Unpull drops the murmur.lock pin of an artifact a running session
// pulled, as manage.remove and the remove-artifact tool do. A pin of
// origin operator (mur install's) and a name the lock does not pin are
// refused with ErrNotPulled and nothing is written. The package stays in
// the project store: another pull verifies it again.
func Unpull(p *Project, name string) (artifact.Pin, error) {
	unlock, err := p.lock()
	if err != nil {
		return artifact.Pin{}, err
	}
	defer unlock()
	lock, err := artifact.LoadLock(p.LockPath())
	if err != nil {
		return artifact.Pin{}, err
	}
	pin, ok := lock.Find(name)
	switch {
	case !ok:
		return pin, fmt.Errorf("%w: murmur.lock pins no %s", ErrNotPulled, name)
	case pin.Origin != artifact.OriginRuntime:
		return pin, fmt.Errorf("%w: murmur.lock pins %s@%s with origin %s (mur install's); a session removes only what it pulled", ErrNotPulled, name, pin.Version, pin.Origin)
	}
	lock.Artifacts = slices.DeleteFunc(lock.Artifacts, func(q artifact.Pin) bool { return q.Name == name })
	return pin, lock.Save(p.LockPath())
}
