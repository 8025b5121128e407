package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	digest "github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/murmur/mur/internal/artifact"
)

// Layout is a store kept as an OCI image layout on disk: blobs under
// blobs/sha256/, and index.json naming each manifest by
// org.opencontainers.image.ref.name = <scope>/<name>:<version>. Every
// write is a temporary file renamed into place, and index.json is
// rewritten under an exclusive file lock, so a killed writer leaves at most
// an unreferenced blob behind and concurrent writers never lose a tag.
type Layout struct {
	root string
	name string
}

// NewLayout is the layout at root, created on first write. name is the
// source name shown to users (project or global).
func NewLayout(name, root string) *Layout { return &Layout{root: root, name: name} }

// Name implements Source.
func (l *Layout) Name() string { return l.name }

// Root is the layout's directory.
func (l *Layout) Root() string { return l.root }

func (l *Layout) blobPath(d string) (string, error) {
	dg, err := digest.Parse(d)
	if err != nil || dg.Algorithm() != digest.SHA256 {
		return "", fmt.Errorf("%w: %s: bad digest %q", ErrCorrupt, l.root, d)
	}
	return filepath.Join(l.root, "blobs", "sha256", dg.Encoded()), nil
}

// readBlob reads a blob and checks its bytes hash to its name and size.
func (l *Layout) readBlob(d ocispec.Descriptor) ([]byte, error) {
	p, err := l.blobPath(d.Digest.String())
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %s store: blob %s: %w", ErrCorrupt, l.name, d.Digest, err)
	}
	if got := artifact.Digest(b); got != d.Digest.String() || int64(len(b)) != d.Size {
		return nil, fmt.Errorf("%w: %s store: blob %s holds bytes that hash to %s", ErrDigest, l.name, d.Digest, got)
	}
	return b, nil
}

func (l *Layout) writeBlob(b []byte) (ocispec.Descriptor, error) {
	d := artifact.Digest(b)
	p, err := l.blobPath(d)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	desc := ocispec.Descriptor{Digest: digest.Digest(d), Size: int64(len(b))}
	if fi, err := os.Stat(p); err == nil && fi.Size() == int64(len(b)) {
		return desc, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return desc, fmt.Errorf("write blob: %w", err)
	}
	// Not synced one by one: PutMany flushes the file system once before
	// the index names any of them.
	return desc, artifact.WriteFileRename(p, b, 0o644, false)
}

func (l *Layout) readIndex() (*ocispec.Index, error) {
	b, err := os.ReadFile(filepath.Join(l.root, ocispec.ImageIndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return &ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s store index: %w", l.name, err)
	}
	idx := &ocispec.Index{}
	if err := json.Unmarshal(b, idx); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, filepath.Join(l.root, ocispec.ImageIndexFile), err)
	}
	return idx, nil
}

func refName(ref artifact.Ref) string { return ref.Full() + ":" + ref.Version }

// manifest finds and reads the manifest tagged ref.
func (l *Layout) manifest(idx *ocispec.Index, ref artifact.Ref) (ocispec.Manifest, bool, error) {
	want := refName(ref)
	for _, d := range idx.Manifests {
		if d.Annotations[ocispec.AnnotationRefName] != want {
			continue
		}
		b, err := l.readBlob(d)
		if err != nil {
			return ocispec.Manifest{}, false, err
		}
		var m ocispec.Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			return ocispec.Manifest{}, false, fmt.Errorf("%w: %s store: manifest of %s: %w", ErrCorrupt, l.name, ref, err)
		}
		return m, true, nil
	}
	return ocispec.Manifest{}, false, nil
}

// Fetch implements Source.
func (l *Layout) Fetch(_ context.Context, ref artifact.Ref) (*Fetched, error) {
	m, layer, err := l.layer(ref)
	if err != nil {
		return nil, err
	}
	b, err := l.readBlob(layer)
	if err != nil {
		return nil, err
	}
	return &Fetched{Ref: ref, Digest: layer.Digest.String(), Meta: metaFrom(m.Annotations), Data: b, From: l.name}, nil
}

// layer finds the manifest tagged ref (its blob verified) and its package
// layer's descriptor, without reading the package itself.
func (l *Layout) layer(ref artifact.Ref) (ocispec.Manifest, ocispec.Descriptor, error) {
	idx, err := l.readIndex()
	if err != nil {
		return ocispec.Manifest{}, ocispec.Descriptor{}, err
	}
	m, ok, err := l.manifest(idx, ref)
	if err != nil {
		return m, ocispec.Descriptor{}, err
	}
	if !ok {
		return m, ocispec.Descriptor{}, fmt.Errorf("%w: %s in the %s store", ErrNotFound, ref, l.name)
	}
	layer, err := layerOf(m, l.name+" store "+ref.String())
	return m, layer, err
}

// Put implements Source.
func (l *Layout) Put(ctx context.Context, ref artifact.Ref, meta Meta, pkg []byte) (string, error) {
	ds, err := l.PutMany(ctx, []Item{{Ref: ref, Meta: meta, Data: pkg}})
	if err != nil {
		return "", err
	}
	return ds[0], nil
}

// Item is one package to store.
type Item struct {
	Ref  artifact.Ref
	Meta Meta
	Data []byte
}

// PutMany stores packages with one index update. Blobs go first, then the
// file system is flushed once, then index.json is replaced atomically, so
// a reader or a crash sees either the old tags or every new one, and never
// a tag whose blobs are not on disk.
func (l *Layout) PutMany(_ context.Context, items []Item) ([]string, error) {
	if err := os.MkdirAll(l.root, 0o755); err != nil {
		return nil, fmt.Errorf("create %s store: %w", l.name, err)
	}
	if err := l.ensureLayoutFile(); err != nil {
		return nil, err
	}
	if _, err := l.writeBlob(ocispec.DescriptorEmptyJSON.Data); err != nil {
		return nil, err
	}
	digests := make([]string, len(items))
	tagged := map[string]ocispec.Descriptor{}
	for i, it := range items {
		m, layer, err := buildManifest(it.Meta, it.Data)
		if err != nil {
			return nil, err
		}
		if _, err := l.writeBlob(it.Data); err != nil {
			return nil, err
		}
		mdesc, err := l.writeBlob(m)
		if err != nil {
			return nil, err
		}
		mdesc.MediaType = ocispec.MediaTypeImageManifest
		mdesc.ArtifactType = ArtifactType
		mdesc.Annotations = map[string]string{ocispec.AnnotationRefName: refName(it.Ref)}
		tagged[refName(it.Ref)] = mdesc
		digests[i] = layer.Digest.String()
	}
	if err := syncFS(l.root); err != nil {
		return nil, err
	}
	unlock, err := lockDir(l.root)
	if err != nil {
		return nil, err
	}
	defer unlock()
	idx, err := l.readIndex()
	if err != nil {
		return nil, err
	}
	kept := idx.Manifests[:0]
	for _, d := range idx.Manifests {
		if _, replaced := tagged[d.Annotations[ocispec.AnnotationRefName]]; !replaced {
			kept = append(kept, d)
		}
	}
	for _, d := range tagged {
		kept = append(kept, d)
	}
	idx.Manifests = kept
	sort.Slice(idx.Manifests, func(i, j int) bool {
		return idx.Manifests[i].Annotations[ocispec.AnnotationRefName] < idx.Manifests[j].Annotations[ocispec.AnnotationRefName]
	})
	b, err := json.Marshal(idx)
	if err != nil {
		return nil, fmt.Errorf("encode index: %w", err)
	}
	if err := artifact.WriteFileAtomic(filepath.Join(l.root, ocispec.ImageIndexFile), b, 0o644); err != nil {
		return nil, err
	}
	return digests, nil
}

func (l *Layout) ensureLayoutFile() error {
	p := filepath.Join(l.root, ocispec.ImageLayoutFile)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	b, _ := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})
	return artifact.WriteFileAtomic(p, b, 0o644)
}

// Versions implements Source.
func (l *Layout) Versions(ctx context.Context, name string) ([]Meta, error) {
	all, err := l.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Meta
	for _, m := range all {
		if m.Name == name {
			out = append(out, m)
		}
	}
	return out, nil
}

// List implements Source.
func (l *Layout) List(context.Context) ([]Meta, error) {
	idx, err := l.readIndex()
	if err != nil {
		return nil, err
	}
	var out []Meta
	for _, d := range idx.Manifests {
		rn := d.Annotations[ocispec.AnnotationRefName]
		full, ver, ok := strings.Cut(rn, ":")
		if !ok {
			continue
		}
		r, err := artifact.ParseFullName(full)
		if err != nil || !artifact.ValidVersion(ver) {
			continue
		}
		r.Version = ver
		m, found, err := l.manifest(idx, r)
		if err != nil {
			return nil, err
		}
		if found {
			meta := metaFrom(m.Annotations)
			meta.Name, meta.Version = r.Full(), r.Version
			out = append(out, meta)
		}
	}
	sortMetas(out)
	return out, nil
}

// buildManifest renders the OCI image manifest (v1.1, artifactType, empty
// config) for a package.
func buildManifest(meta Meta, pkg []byte) ([]byte, ocispec.Descriptor, error) {
	layer := ocispec.Descriptor{
		MediaType: LayerMediaType,
		Digest:    digest.Digest(artifact.Digest(pkg)),
		Size:      int64(len(pkg)),
		Annotations: map[string]string{
			ocispec.AnnotationTitle: strings.ReplaceAll(meta.Name, "/", "-") + "-" + meta.Version + ".mur.zip",
		},
	}
	m := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactType,
		Config:       ocispec.DescriptorEmptyJSON,
		Layers:       []ocispec.Descriptor{layer},
		Annotations:  meta.annotations(),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(m); err != nil {
		return nil, layer, fmt.Errorf("encode manifest: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), layer, nil
}
