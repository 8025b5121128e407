package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/murmur/mur/internal/artifact"
)

// Pull installs one artifact into a running session's project, as
// manage.pull and the pull-artifact tool do: from the project store, then
// the global store (what mur install or mur publish already placed on
// this host), verified like mur install, pinned in murmur.lock with origin
// runtime. name must be a full name; version a single path segment, or ""
// for the newest version that fits this mur's WIT level and platform (on a
// tie the project store wins). A version that does not fit is refused with
// E-WIT-LEVEL-001 naming the newest that does. check runs on the package
// before anything is written (the caller's install-entry and role rules).
func Pull(ctx context.Context, p *Project, global *Layout, name, version string, check Checker) (Installed, error) {
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
	srcs := []Source{p.Store, global}
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
	in := &Installer{Project: p, Sources: srcs, Check: chain, Origin: artifact.OriginRuntime}
	got, err := in.Install(ctx, []artifact.Ref{ref})
	if err != nil {
		return Installed{}, err
	}
	return got[0], nil
}
