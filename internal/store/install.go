package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/sign"
)

// More error kinds of install and launch.
var (
	// ErrPin: the bytes differ from the digest murmur.lock pins.
	ErrPin = errors.New("bytes differ from the murmur.lock pin")
	// ErrNotInstalled: a declared artifact has no pin or no stored bytes.
	ErrNotInstalled = errors.New("artifact not installed")
	// ErrMismatch: a package's own murmur.yaml names another artifact.
	ErrMismatch = errors.New("package names another artifact")
)

// Codes mur reports for store errors; the catalogue (internal/diag) holds
// them with the spec's.
const (
	CodeNotFound    = diag.RegNotFound
	CodeUnreachable = diag.RegUnreachable
	CodeAuth        = diag.RegAuth
	CodeDigest      = diag.RegDigest
	CodePin         = diag.RegPin
	CodePackage     = diag.RegPackage
	CodeMismatch    = diag.RegMismatch
	CodePublished   = diag.RegPublished
	CodeLock        = diag.RegLock
)

// CodeOf maps an error from this package to its diagnostic code; ok is
// false for errors of no known kind.
func CodeOf(err error) (diag.Code, bool) {
	var d diag.Diagnostic
	switch {
	case errors.As(err, &d):
		return d.Code, true
	case errors.Is(err, ErrPin):
		return CodePin, true
	case errors.Is(err, ErrDigest), errors.Is(err, ErrCorrupt):
		return CodeDigest, true
	case errors.Is(err, ErrAuth):
		return CodeAuth, true
	case errors.Is(err, ErrUnreachable):
		return CodeUnreachable, true
	case errors.Is(err, ErrWITLevel):
		return diag.WITLevel, true
	case errors.Is(err, ErrNotInstalled):
		return diag.RunNotInstalled, true
	case errors.Is(err, artifact.ErrLock):
		return CodeLock, true
	case errors.Is(err, ErrPublished):
		return CodePublished, true
	case errors.Is(err, ErrMismatch):
		return CodeMismatch, true
	case errors.Is(err, artifact.ErrPackage):
		return CodePackage, true
	case errors.Is(err, ErrNotFound):
		return CodeNotFound, true
	}
	return "", false
}

// Project is a capsule's place on disk: its murmur.yaml's directory, the
// project store, the unpacked trees and murmur.lock.
type Project struct {
	Dir   string
	Store *Layout
}

// ProjectAt is the project of the capsule whose murmur.yaml is in dir.
// The store is .murmur/store/ beside murmur.yaml.
func ProjectAt(dir string) *Project {
	return &Project{Dir: dir, Store: NewLayout("project", filepath.Join(dir, ".murmur", "store"))}
}

// GlobalStore is the store under ~/.murmur/store/.
func GlobalStore(murmurDir string) *Layout {
	return NewLayout("global", filepath.Join(murmurDir, "store"))
}

// lock takes the project lock, an flock on the directory holding
// murmur.yaml itself (so a refused install still writes nothing), that
// serialises the processes rewriting murmur.lock; the kernel drops it if
// the process dies.
func (p *Project) lock() (func(), error) { return lockOpen(p.Dir) }

// LockPath is the project's murmur.lock.
func (p *Project) LockPath() string { return filepath.Join(p.Dir, artifact.LockFile) }

// UnpackedDir is where the package with digest d is unpacked: named by its
// digest, so a directory there always holds exactly those bytes' files.
func (p *Project) UnpackedDir(d string) string {
	return filepath.Join(p.Dir, ".murmur", "unpacked", strings.TrimPrefix(d, "sha256:"))
}

// ensureUnpacked extracts pkg at its digest's directory unless a tree
// holding exactly its files is already there. Extract renames a complete
// tree into place; a tree changed since (a file edited, added or removed)
// is replaced by a fresh extraction from the verified package, so what a
// launch stages is always the pinned bytes.
func (p *Project) ensureUnpacked(digest string, pkg *artifact.Package) (string, error) {
	dir := p.UnpackedDir(digest)
	if _, err := os.Stat(dir); err == nil {
		if matches(dir, pkg) {
			return dir, nil
		}
		stale := dir + ".stale-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		// A concurrent launch may have moved it already; either way a
		// fresh extraction follows.
		if err := os.Rename(dir, stale); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("replace changed tree %s: %w", dir, err)
		}
		defer os.RemoveAll(stale)
	}
	if err := pkg.Extract(dir); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	return dir, nil
}

// matches reports whether dir holds exactly pkg's files with its bytes.
func matches(dir string, pkg *artifact.Package) bool {
	want := pkg.Names()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return errors.New("not a regular file")
		}
		n++
		return nil
	})
	if err != nil || n != len(want) {
		return false
	}
	for _, name := range want {
		b, err := pkg.ReadFile(name)
		if err != nil {
			return false
		}
		have, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(have, b) {
			return false
		}
	}
	return true
}

// Checker inspects a fetched package before anything is written: its
// packed murmur.yaml (E-REG-011 for a malformed models:, a name that is not
// the one asked for). The CLI wires the manifest package in here.
type Checker func(f *Fetched, pkg *artifact.Package) error

// Installer resolves, verifies and installs a capsule's artifacts.
type Installer struct {
	Project *Project
	// Sources in resolution order.
	Sources []Source
	Check   Checker
	// Origin is the pin origin written: operator (mur install, the
	// default) or runtime (a pull by a running session).
	Origin string
	// Trust is config.yaml's trusted_keys: an artifact of a scope it names
	// is installed only with a signature by one of that scope's keys
	// (verifySignature). nil demands none.
	Trust *sign.Policy
	// AnyPlatform takes a native payload built for another platform
	// (mur install --all-platforms): the WIT level still has to fit.
	AnyPlatform bool
	// Unstored puts what a scope source served into no store (a runtime
	// pull, spec 004 capabilities.install.from): it is unpacked and pinned
	// only.
	Unstored bool
}

// stores reports whether f goes into the project store.
func (in *Installer) stores(f *Fetched) bool {
	return f.From != in.Project.Store.Name() && !(in.Unstored && f.OwnerID != 0)
}

// Installed is one installed artifact.
type Installed struct {
	Ref    artifact.Ref
	Digest string
	From   string
	Dir    string
	// Changed is false when the lock already pinned these bytes.
	Changed bool
	// Runtime is the role the package's metadata declares.
	Runtime string
	// OwnerID is the scope source's owner id when it came from one.
	OwnerID int64
}

func (in *Installer) lockPath() string {
	if in.Project == nil {
		return artifact.LockFile
	}
	return in.Project.LockPath()
}

func (in *Installer) origin() string {
	if in.Origin == "" {
		return artifact.OriginOperator
	}
	return in.Origin
}

type planned struct {
	f   *Fetched
	pkg *artifact.Package
	sig *signature
}

// Install resolves every ref (exact versions; "latest" takes the newest
// that fits this mur), verifies all of them against their sources and
// murmur.lock, and only then writes: packages into the project store,
// unpacked trees, and murmur.lock last, atomically, with origin operator.
// Any refusal writes nothing at all.
func (in *Installer) Install(ctx context.Context, refs []artifact.Ref) ([]Installed, error) {
	// murmur.lock is read, checked against and rewritten: a second install
	// in the project between the read and the write would lose its pins.
	unlock, err := in.Project.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	lock, err := artifact.LoadLock(in.Project.LockPath())
	if err != nil {
		return nil, err
	}
	plan, err := in.fetchAll(ctx, refs, lock)
	if err != nil {
		return nil, err
	}
	var items []Item
	for _, p := range plan {
		if in.stores(p.f) {
			items = append(items, Item{Ref: p.f.Ref, Meta: p.f.Meta, Data: p.f.Data})
		}
	}
	if len(items) > 0 {
		if _, err := in.Project.Store.PutMany(ctx, items); err != nil {
			return nil, err
		}
	}
	for _, p := range plan {
		if in.Unstored && p.f.OwnerID != 0 {
			continue // no store keeps the package, so none keeps its signature
		}
		if err := keepSignature(ctx, in.Project.Store, p.f.Ref, p.sig); err != nil {
			return nil, err
		}
	}
	out := make([]Installed, 0, len(plan))
	for _, p := range plan {
		dir, err := in.Project.ensureUnpacked(p.f.Digest, p.pkg)
		if err != nil {
			return nil, err
		}
		old, had := lock.Find(p.f.Ref.Full())
		changed := !had || old.Digest != p.f.Digest || old.Version != p.f.Ref.Version
		owner := p.f.OwnerID
		if owner == 0 && !changed {
			// The same bytes now found in a store keep the owner a scope
			// source's fetch recorded.
			owner = old.OwnerID
		}
		lock.Upsert(artifact.Pin{Name: p.f.Ref.Full(), Version: p.f.Ref.Version, Digest: p.f.Digest, Origin: in.origin(), From: p.f.From, Verified: p.sig.pin(), OwnerID: owner})
		out = append(out, Installed{Ref: p.f.Ref, Digest: p.f.Digest, From: p.f.From, Dir: dir, Changed: changed, Runtime: p.f.Meta.Runtime, OwnerID: p.f.OwnerID})
	}
	// The unpacked trees are flushed before the lock that makes them live.
	if err := syncFS(in.Project.Dir); err != nil {
		return nil, err
	}
	if err := lock.Save(in.Project.LockPath()); err != nil {
		return nil, err
	}
	return out, nil
}

// fetchAll resolves every ref (pinned ones to their pinned bytes when lock
// is not nil), opens each package and runs the checker, writing nothing.
func (in *Installer) fetchAll(ctx context.Context, refs []artifact.Ref, lock *artifact.Lock) ([]planned, error) {
	// Fetch and verify concurrently (registries answer slowly, each
	// package is small). Every entry that cannot be fetched is reported at
	// once (errors.Join, in declaration order), so an operator fixes them
	// all in one pass rather than one per attempt.
	fetched := make([]*Fetched, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var pin artifact.Pin
			if lock != nil {
				pin, _ = lock.Find(ref.Full())
			}
			fetched[i], errs[i] = in.resolve(ctx, ref, pin)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var plan []planned
	for i := range refs {
		f := fetched[i]
		pkg, err := artifact.Open(f.Data, artifact.DefaultLimits)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", f.Ref, f.From, err)
		}
		if !pkg.Has("murmur.yaml") {
			return nil, fmt.Errorf("%w: %s from %s has no murmur.yaml", artifact.ErrPackage, f.Ref, f.From)
		}
		if err := checkOwner(f, lock, in.lockPath()); err != nil {
			return nil, err
		}
		if in.Check != nil {
			if err := in.Check(f, pkg); err != nil {
				return nil, err
			}
		}
		sig, err := in.verifySignature(ctx, f)
		if err != nil {
			return nil, err
		}
		plan = append(plan, planned{f, pkg, sig})
	}
	return plan, nil
}

// InstallTo resolves and verifies every ref as Install does and puts the
// packages into dst (mur install -g: the global store), with no project,
// no unpacked tree and no pin. Any refusal writes nothing.
func (in *Installer) InstallTo(ctx context.Context, dst *Layout, refs []artifact.Ref) ([]Installed, error) {
	plan, err := in.fetchAll(ctx, refs, nil)
	if err != nil {
		return nil, err
	}
	var items []Item
	out := make([]Installed, 0, len(plan))
	for _, p := range plan {
		have, err := dst.Fetch(ctx, p.f.Ref)
		changed := err != nil || have.Digest != p.f.Digest
		if err == nil && changed {
			// A version is immutable: the store keeps what it has and the
			// operator decides.
			return nil, fmt.Errorf("%w: %s in %s is %s, %s has %s; nothing was installed. Remove it from %s first if the new bytes are intended", ErrPublished, p.f.Ref, dst.Name(), have.Digest, p.f.From, p.f.Digest, dst.Root())
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		if changed {
			items = append(items, Item{Ref: p.f.Ref, Meta: p.f.Meta, Data: p.f.Data})
		}
		out = append(out, Installed{Ref: p.f.Ref, Digest: p.f.Digest, From: p.f.From, Changed: changed, Runtime: p.f.Meta.Runtime})
	}
	if len(items) > 0 {
		if _, err := dst.PutMany(ctx, items); err != nil {
			return nil, err
		}
	}
	for _, p := range plan {
		if err := keepSignature(ctx, dst, p.f.Ref, p.sig); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// resolve finds ref in the first source that holds it. A source that
// fails (unreachable, refused credentials) does not hide a later one that
// has it; if none has it, every failure is reported. When murmur.lock pins
// this version, only the pinned bytes are taken: a source holding other
// bytes is passed over for one holding the pinned ones, and if none does
// the install is refused (ErrPin).
func (in *Installer) resolve(ctx context.Context, ref artifact.Ref, pin artifact.Pin) (*Fetched, error) {
	if ref.Version == "latest" || ref.Version == "" {
		m, err := newestIn(ctx, in.Sources, ref.Full(), in.AnyPlatform)
		if err != nil {
			return nil, err
		}
		ref.Version = m.Version
	}
	pinned := pin.Name != "" && pin.Version == ref.Version
	var errs []error
	var differ []string
	for _, s := range in.Sources {
		f, err := s.Fetch(ctx, ref)
		if err == nil && pinned && f.Digest != pin.Digest {
			differ = append(differ, fmt.Sprintf("%s has %s", s.Name(), f.Digest))
			continue
		}
		if err == nil {
			if f.Meta.Name != "" && (f.Meta.Name != ref.Full() || f.Meta.Version != ref.Version) {
				return nil, fmt.Errorf("%w: %s in %s is labelled %s@%s", ErrMismatch, ref, s.Name(), f.Meta.Name, f.Meta.Version)
			}
			if ok, _ := FitsWIT(f.Meta.WIT); !ok || (!RunsHere(f.Meta.Platform) && !in.AnyPlatform) {
				cands, _ := versionsIn(ctx, in.Sources, ref.Full())
				return nil, CheckFit(f.Meta, cands)
			}
			return f, nil
		}
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if errors.Is(err, ErrDigest) || errors.Is(err, ErrCorrupt) {
			// Tampered bytes are never skipped over: the operator must see them.
			return nil, err
		}
		errs = append(errs, err)
	}
	names := make([]string, len(in.Sources))
	for i, s := range in.Sources {
		names[i] = s.Name()
	}
	if len(differ) > 0 {
		return nil, fmt.Errorf("%w: murmur.lock pins %s to %s, but %s; nothing was installed. If the new bytes are intended, remove its entry from murmur.lock and install again", ErrPin, ref, pin.Digest, strings.Join(differ, ", "))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s is in no reachable source (tried %s): %w", ref, strings.Join(names, ", "), errors.Join(errs...))
	}
	return nil, fmt.Errorf("%w: %s is in none of %s%s; publish it with `mur publish`, or add the registry that has it to resolution in ~/.murmur/config.yaml", ErrNotFound, ref, strings.Join(names, ", "), whatExists(ctx, in.Sources, ref.Full()))
}

// whatExists says, for a name@version no source holds, which versions of
// the name the sources do hold, or else which held name is closest to it
// (a misspelling): "" when neither helps.
func whatExists(ctx context.Context, srcs []Source, name string) string {
	if ms, _ := versionsIn(ctx, srcs, name); len(ms) > 0 {
		sortMetas(ms)
		var vs []string
		seen := map[string]bool{}
		for _, m := range ms {
			if !seen[m.Version] {
				seen[m.Version] = true
				vs = append(vs, m.Version)
			}
		}
		return "; the versions that exist are " + strings.Join(vs, ", ")
	}
	var held []string
	for _, s := range srcs {
		ms, err := s.List(ctx)
		if err != nil {
			continue
		}
		for _, m := range ms {
			held = append(held, m.Name)
		}
	}
	if s := diag.Suggest(name, held); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}

func versionsIn(ctx context.Context, srcs []Source, name string) ([]Meta, error) {
	var all []Meta
	var errs []error
	for _, s := range srcs {
		ms, err := s.Versions(ctx, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all = append(all, ms...)
	}
	if len(all) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return all, nil
}

// NewestIn picks the newest version of name, by semver precedence, that
// fits the served WIT level and has a payload for this platform, across
// sources; on a tie the earlier source wins.
func NewestIn(ctx context.Context, srcs []Source, name string) (Meta, error) {
	return newestIn(ctx, srcs, name, false)
}

// newestIn is NewestIn; anyPlatform also takes a native payload built for
// another platform.
func newestIn(ctx context.Context, srcs []Source, name string, anyPlatform bool) (Meta, error) {
	all, err := versionsIn(ctx, srcs, name)
	if err != nil {
		return Meta{}, err
	}
	if len(all) == 0 {
		return Meta{}, fmt.Errorf("%w: no version of %s in any source", ErrNotFound, name)
	}
	m, ok := newest(all, anyPlatform)
	if !ok {
		sortMetas(all)
		return Meta{}, CheckFit(all[0], nil)
	}
	return m, nil
}
