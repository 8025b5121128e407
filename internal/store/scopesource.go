package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/source"
)

// ScopeSource is one scope's GitHub source (internal/source) as a Source
// of the resolution order: it holds only artifacts of its scope, is
// read-only, and what it fetches carries the owner id murmur.lock records.
type ScopeSource struct {
	c *source.Client

	mu sync.Mutex
	// got keeps what was fetched, by name@version, for the life of the
	// command: Versions reads each package to judge its fit, and Fetch and
	// Signatures then download nothing again.
	got map[string]*fetchedAsset
}

type fetchedAsset struct {
	f      *Fetched
	bundle []byte
}

// NewScopeSource is c as a Source.
func NewScopeSource(c *source.Client) *ScopeSource {
	return &ScopeSource{c: c, got: map[string]*fetchedAsset{}}
}

// ScopeSources opens every scope source config.yaml's sources: names, by
// scope.
func ScopeSources(srcs map[string]config.ScopeSource) ([]Source, error) {
	set := source.NewSet(srcs, nil)
	var out []Source
	for _, scope := range set.Scopes() {
		c, err := set.Client(scope)
		if err != nil {
			return nil, err
		}
		out = append(out, NewScopeSource(c))
	}
	return out, nil
}

// Name is source:<scope>.
func (s *ScopeSource) Name() string { return s.c.Name() }

// ours parses name and reports whether it is of this source's scope.
func (s *ScopeSource) ours(name string) (artifact.Ref, bool) {
	ref, err := artifact.ParseFullName(name)
	return ref, err == nil && ref.Scope == s.c.Scope
}

// Versions lists the released versions of name with each one's metadata.
// A release says nothing of a package's WIT level or platform, so each
// version's package is downloaded and read (and kept for Fetch); a version
// whose package cannot be fetched is listed bare, and Fetch then reports
// why.
func (s *ScopeSource) Versions(ctx context.Context, name string) ([]Meta, error) {
	ref, ok := s.ours(name)
	if !ok {
		return nil, nil
	}
	vs, err := s.c.Versions(ctx, ref.Name)
	if err != nil {
		return nil, s.wrap(err)
	}
	var out []Meta
	for _, v := range vs {
		r := ref
		r.Version = v
		got, err := s.fetch(ctx, r)
		switch {
		case err != nil:
			out = append(out, Meta{Name: ref.Full(), Version: v})
		case got.f.Meta.Name == ref.Full() && got.f.Meta.Version == v:
			out = append(out, got.f.Meta)
		}
		// A package labelled as another artifact is no version of this
		// one; installing it by its version is refused (E-REG-008).
	}
	return out, nil
}

// Fetch downloads ref from the release for its version and reads its
// metadata from the package's own murmur.yaml (the platform from the
// asset's name when it names one).
func (s *ScopeSource) Fetch(ctx context.Context, ref artifact.Ref) (*Fetched, error) {
	if _, ok := s.ours(ref.Full()); !ok {
		return nil, fmt.Errorf("%w: %s holds only scope %s", ErrNotFound, s.Name(), s.c.Scope)
	}
	got, err := s.fetch(ctx, ref)
	if err != nil {
		return nil, err
	}
	return got.f, nil
}

func (s *ScopeSource) fetch(ctx context.Context, ref artifact.Ref) (*fetchedAsset, error) {
	key := ref.String()
	s.mu.Lock()
	got, ok := s.got[key]
	s.mu.Unlock()
	if ok {
		return got, nil
	}
	p, err := s.c.Fetch(ctx, ref.Name, ref.Version)
	if err != nil {
		return nil, s.wrap(err)
	}
	meta := Meta{Name: ref.Full(), Version: ref.Version}
	b, _, _, err := artifact.Inspect(p.Data, ref.String())
	if err != nil {
		return nil, fmt.Errorf("%s from %s (%s): %w", ref, s.Name(), p.URL, err)
	}
	if b != nil {
		// A manifest that does not decode is left to the install checker,
		// which names its file, line and field.
		meta = MetaOf(b, ref.Scope)
	}
	if p.Platform != "" {
		meta.Platform = p.Platform
	}
	got = &fetchedAsset{f: &Fetched{Ref: ref, Digest: p.Digest, Meta: meta, Data: p.Data, From: s.Name(), OwnerID: p.OwnerID}, bundle: p.Bundle}
	s.mu.Lock()
	s.got[key] = got
	s.mu.Unlock()
	return got, nil
}

// Put refuses: a scope source is a GitHub repository mur only reads.
func (s *ScopeSource) Put(context.Context, artifact.Ref, Meta, []byte) (string, error) {
	return "", fmt.Errorf("%s is read-only: publish to a store or registry, or attach the .mur.zip to a release of %s", s.Name(), s.c.Repo)
}

// AttachSignature refuses, as Put does.
func (s *ScopeSource) AttachSignature(ctx context.Context, ref artifact.Ref, _ []byte) error {
	_, err := s.Put(ctx, ref, Meta{}, nil)
	return err
}

// Signatures returns the bundle the release holds beside ref's asset.
func (s *ScopeSource) Signatures(ctx context.Context, ref artifact.Ref) ([][]byte, error) {
	got, err := s.fetch(ctx, ref)
	if err != nil {
		return nil, err
	}
	if got.bundle == nil {
		return nil, nil
	}
	return [][]byte{got.bundle}, nil
}

// List lists what the releases hold, by asset name.
func (s *ScopeSource) List(ctx context.Context) ([]Meta, error) {
	rs, err := s.c.List(ctx)
	if err != nil {
		return nil, s.wrap(err)
	}
	out := make([]Meta, len(rs))
	for i, r := range rs {
		out[i] = Meta{Name: s.c.Scope + "/" + r.Name, Version: r.Version}
	}
	sortMetas(out)
	return out, nil
}

// wrap gives a source error its kind in this package, or its code.
func (s *ScopeSource) wrap(err error) error {
	field := "sources." + s.c.Scope
	switch {
	case errors.Is(err, source.ErrUnknown):
		return diag.New(diag.RegScopeSource, diag.Pos{}, field+".repo", err.Error())
	case errors.Is(err, source.ErrAsset):
		return diag.New(diag.RegAsset, diag.Pos{}, field, err.Error())
	case errors.Is(err, source.ErrNotFound):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, source.ErrDigest):
		return fmt.Errorf("%w: %w", ErrDigest, err)
	case errors.Is(err, source.ErrAuth):
		return fmt.Errorf("%w: %w", ErrAuth, err)
	case errors.Is(err, source.ErrUnreachable):
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return err
}

// checkOwner refuses f when it came from a scope source whose owner
// account is not the one murmur.lock recorded for its scope: a login
// renamed and taken by another account, deleted and re-registered, or a
// repository transferred keeps its name but not its owner id.
func checkOwner(f *Fetched, lock *artifact.Lock, lockPath string) error {
	if f.OwnerID == 0 || lock == nil {
		return nil
	}
	for i, p := range lock.Artifacts {
		r, err := artifact.ParseFullName(p.Name)
		if err != nil || r.Scope != f.Ref.Scope || p.OwnerID == 0 || p.OwnerID == f.OwnerID {
			continue
		}
		field := fmt.Sprintf("artifacts[%d].owner_id", i)
		return diag.New(diag.RegOwner, diag.Pos{File: lockPath}, field, fmt.Sprintf("%s from %s: the repository is now owned by GitHub account %d, but murmur.lock recorded account %d for scope %s (pinning %s@%s); the owner's login was renamed and taken, deleted and re-registered, or the repository was transferred. Nothing was installed. If the new owner is trusted, remove owner_id from murmur.lock's pins of scope %s and install again", f.Ref, f.From, f.OwnerID, p.OwnerID, f.Ref.Scope, p.Name, p.Version, f.Ref.Scope))
	}
	return nil
}

// UnpackedResolved is a pulled artifact as launch would resolve it, from
// the tree Install unpacked (Installed.Dir) rather than from a store: what
// a runtime pull from a scope source, which no store keeps, stages.
func UnpackedResolved(got Installed, role string) (*Resolved, error) {
	if got.Dir == "" {
		return nil, fmt.Errorf("%w: %s was not unpacked", ErrNotInstalled, got.Ref)
	}
	var names []string
	err := filepath.WalkDir(got.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(got.Dir, p)
		if err == nil {
			names = append(names, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	mf, err := os.ReadFile(filepath.Join(got.Dir, "murmur.yaml"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", got.Ref, err)
	}
	return stored(got.Ref, role, got.Digest, got.Dir, names, mf), nil
}
