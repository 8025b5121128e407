package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
)

// Entry is what launch needs of one artifacts: entry.
type Entry struct {
	// Name as written: <scope>/<name>, or the bare name of a source: entry.
	Name    string
	Version string
	Role    string
	// Source is the source: path as written ("" for a stored artifact);
	// relative paths resolve against the project directory.
	Source string
	// LocalSource is local_source with its default applied.
	LocalSource bool
}

// Resolved is one artifact ready to stage: its files on disk.
type Resolved struct {
	Name    string
	Version string // "local" for a local source
	Role    string
	Digest  string // "" for a local source
	Local   bool
	// Dir holds the unpacked package of a stored artifact; "" for a local
	// source, whose files are listed in Files.
	Dir string
	// Files maps each install path (tools/<name>/<path>) to its bytes'
	// location on the host.
	Files map[string]string
	// Manifest is the artifact's own murmur.yaml; nil for a local skill.
	Manifest []byte

	parsedState
}

// Resolution is every artifact of a capsule, resolved. It answers the
// manifest package's Installed interface through Artifact.
type Resolution struct {
	byName map[string]*Resolved
	List   []*Resolved
}

// Get returns the resolved artifact for an entry name as written.
func (r *Resolution) Get(name string) (*Resolved, bool) {
	a, ok := r.byName[name]
	return a, ok
}

// Resolve resolves every entry for launch, in order: a source: entry from
// disk (never locked); any other from its murmur.lock pin, the project
// store's blob re-hashed against the pin, unpacked by digest. Nothing is
// fetched from a registry here: an entry not installed is E-RUN-006.
func (p *Project) Resolve(ctx context.Context, entries []Entry) (*Resolution, error) {
	res, errs := p.ResolveEach(ctx, entries)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

func (p *Project) resolveStored(ctx context.Context, lock *artifact.Lock, e Entry) (*Resolved, error) {
	ref, err := artifact.ParseFullName(e.Name)
	if err != nil {
		return nil, err
	}
	ref.Version = e.Version
	pin, ok := lock.Find(ref.Full())
	if !ok || pin.Version != e.Version {
		return nil, fmt.Errorf("%w: %s is declared but murmur.lock pins no such version; run `mur install`", ErrNotInstalled, ref)
	}
	if r := p.stamped(ref, pin.Digest, e.Role); r != nil {
		return r, nil
	}
	// Stats taken before the bytes are verified: a stamp made from them
	// cannot describe a change made during or after the verification.
	since := time.Now()
	blobPath, _ := p.Store.blobPath(pin.Digest)
	blobAt, blobOK := statFile(blobPath)
	treeAt, treeErr := snapshotTree(p.UnpackedDir(pin.Digest))
	f, err := p.Store.Fetch(ctx, ref)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %s is pinned but missing from the project store %s; run `mur install`", ErrNotInstalled, ref, p.Store.Root())
	}
	if err != nil {
		return nil, err
	}
	if f.Digest != pin.Digest {
		return nil, fmt.Errorf("%w: %s in the project store is %s, murmur.lock pins %s; run `mur install` to restore the pinned bytes", ErrPin, ref, f.Digest, pin.Digest)
	}
	pkg, err := artifact.Open(f.Data, artifact.DefaultLimits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	dir, err := p.ensureUnpacked(f.Digest, pkg)
	if err != nil {
		return nil, err
	}
	mf, err := pkg.ReadFile("murmur.yaml")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	// The tree verified is the one stat'ed only if ensureUnpacked kept it.
	if now, err := snapshotTree(dir); blobOK && treeErr == nil && err == nil && maps.Equal(now, treeAt) {
		st := &stamp{Digest: f.Digest, Blob: blobPath, BlobAt: blobAt, Files: treeAt}
		if !st.racy(since) {
			st.write(dir)
		}
	}
	return stored(ref, e.Role, f.Digest, dir, pkg.Names(), mf), nil
}

// stored is the Resolved of a package unpacked at dir holding names.
func stored(ref artifact.Ref, role, digest, dir string, names []string, mf []byte) *Resolved {
	files := map[string]string{}
	for _, n := range names {
		if n == "murmur.yaml" {
			continue
		}
		files[artifact.InstallPath(ref.Name, n)] = filepath.Join(dir, filepath.FromSlash(n))
	}
	return &Resolved{Name: ref.Full(), Version: ref.Version, Role: role, Digest: digest, Dir: dir, Files: files, Manifest: mf}
}

// stamped resolves ref from its unpacked tree without reading the package
// when the tree's stamp still holds for the pinned digest: the store tags
// ref with exactly that layer, and neither its blob nor any file of the
// tree changed since a launch verified them in full. nil means verify in
// full.
func (p *Project) stamped(ref artifact.Ref, pin, role string) *Resolved {
	_, layer, err := p.Store.layer(ref)
	if err != nil || layer.Digest.String() != pin {
		return nil
	}
	blobPath, err := p.Store.blobPath(pin)
	if err != nil {
		return nil
	}
	dir := p.UnpackedDir(pin)
	st, err := readStamp(dir)
	if err != nil || st.BlobAt.Size != layer.Size || !st.holds(pin, blobPath, dir) {
		return nil
	}
	if _, ok := st.Files["murmur.yaml"]; !ok {
		return nil
	}
	mf, err := os.ReadFile(filepath.Join(dir, "murmur.yaml"))
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(st.Files))
	for n := range st.Files {
		names = append(names, n)
	}
	return stored(ref, role, pin, dir, names, mf)
}

// resolveLocal reads a source: entry from disk, with the spec's messages.
func (p *Project) resolveLocal(i int, e Entry) (*Resolved, error) {
	field := fmt.Sprintf("artifacts[%d].source", i)
	if !e.LocalSource {
		return nil, diag.New(diag.ManInvalid, diag.Pos{}, field, fmt.Sprintf("artifact '%s' declares 'source:' but does not declare 'local_source: true' (runtime: %s)", e.Name, e.Role))
	}
	src := e.Source
	if !filepath.IsAbs(src) {
		src = filepath.Join(p.Dir, src)
	}
	fi, err := os.Lstat(src)
	if err != nil {
		return nil, diag.New(diag.IONotFound, diag.Pos{}, field, fmt.Sprintf("skill source path not found: %s", src))
	}
	r := &Resolved{Name: e.Name, Version: "local", Role: e.Role, Local: true, Files: map[string]string{}}
	base := artifact.InstallPath(e.Name, "")
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, diag.New(diag.BldPath, diag.Pos{}, field, fmt.Sprintf("skill source refused: %s is a symlink", src))
	case fi.Mode().IsRegular():
		// A file is the skill.md, whatever its name.
		r.Files[base+"skill.md"] = src
	case fi.IsDir():
		sf, err := artifact.ReadSkillFolder(src)
		if err != nil {
			var d diag.Diagnostic
			if errors.As(err, &d) {
				d.Field = field
				return nil, d
			}
			return nil, err
		}
		for _, f := range sf.Files {
			host := filepath.Join(src, filepath.FromSlash(f.Path))
			if f.Path == "skill.md" {
				host = findFold(src, "skill.md")
			}
			r.Files[base+f.Path] = host
		}
	default:
		return nil, diag.New(diag.BldPath, diag.Pos{}, field, fmt.Sprintf("skill source refused: %s is not a file or directory", src))
	}
	return r, nil
}

// findFold returns the path of the entry of dir named name ignoring case.
func findFold(dir, name string) string {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.EqualFold(e.Name(), name) {
			return filepath.Join(dir, e.Name())
		}
	}
	return filepath.Join(dir, name)
}
