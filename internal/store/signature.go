package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	digest "github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/sign"
)

// Signatures travel as OCI 1.1 referrers of the artifact's manifest: a
// manifest of artifactType application/vnd.dev.sigstore.bundle.v0.3+json
// whose one layer is the Sigstore bundle and whose subject is the
// artifact's manifest, as cosign --new-bundle-format attaches them. A
// registry without the referrers API gets the referrers tag schema
// (sha256-<hex>), which oras maintains; a store lists the signature
// manifest in index.json untagged, as the image-layout spec keeps
// referrers.

// annBundleContent is the annotation cosign puts on a bundle's manifest
// to say what the bundle holds.
const annBundleContent = "dev.sigstore.bundle.content"

// maxSigs bounds the signatures read for one artifact.
const maxSigs = 16

// Signed is a source that keeps signatures beside its artifacts; both
// stores and registries are.
type Signed interface {
	// AttachSignature attaches a bundle to the artifact tagged ref.
	AttachSignature(ctx context.Context, ref artifact.Ref, bundle []byte) error
	// Signatures returns the bundles attached to the artifact tagged ref.
	Signatures(ctx context.Context, ref artifact.Ref) ([][]byte, error)
}

// signatureManifest renders the referrer manifest of bundle for subject.
func signatureManifest(subject ocispec.Descriptor, bundle []byte) ([]byte, ocispec.Descriptor, error) {
	layer := ocispec.Descriptor{MediaType: sign.BundleMediaType, Digest: digest.FromBytes(bundle), Size: int64(len(bundle))}
	m := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: sign.BundleMediaType,
		Config:       ocispec.DescriptorEmptyJSON,
		Layers:       []ocispec.Descriptor{layer},
		Subject:      &ocispec.Descriptor{MediaType: subject.MediaType, Digest: subject.Digest, Size: subject.Size},
		Annotations:  map[string]string{annBundleContent: "message-signature"},
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, layer, fmt.Errorf("encode signature manifest: %w", err)
	}
	return b, layer, nil
}

// bundleLayer picks the bundle layer of a signature manifest whose
// subject is want.
func bundleLayer(mb []byte, want digest.Digest) (ocispec.Descriptor, bool) {
	var m ocispec.Manifest
	if json.Unmarshal(mb, &m) != nil || m.Subject == nil || m.Subject.Digest != want || m.ArtifactType != sign.BundleMediaType {
		return ocispec.Descriptor{}, false
	}
	for _, l := range m.Layers {
		if l.MediaType == sign.BundleMediaType && l.Size > 0 && l.Size <= 64<<10 {
			return l, true
		}
	}
	return ocispec.Descriptor{}, false
}

// tagged is the index entry of the manifest tagged ref.
func (l *Layout) tagged(idx *ocispec.Index, ref artifact.Ref) (ocispec.Descriptor, error) {
	want := refName(ref)
	for _, d := range idx.Manifests {
		if d.Annotations[ocispec.AnnotationRefName] == want {
			return d, nil
		}
	}
	return ocispec.Descriptor{}, fmt.Errorf("%w: %s in the %s store", ErrNotFound, ref, l.name)
}

// AttachSignature implements Signed: the bundle and its manifest are
// written as blobs, flushed, and only then listed in index.json (under the
// store's lock), as PutMany does. Attaching the same bundle twice is a
// no-op.
func (l *Layout) AttachSignature(_ context.Context, ref artifact.Ref, bundle []byte) error {
	idx, err := l.readIndex()
	if err != nil {
		return err
	}
	subject, err := l.tagged(idx, ref)
	if err != nil {
		return err
	}
	mb, _, err := signatureManifest(subject, bundle)
	if err != nil {
		return err
	}
	if _, err := l.writeBlob(bundle); err != nil {
		return err
	}
	mdesc, err := l.writeBlob(mb)
	if err != nil {
		return err
	}
	mdesc.MediaType = ocispec.MediaTypeImageManifest
	mdesc.ArtifactType = sign.BundleMediaType
	if err := syncFS(l.root); err != nil {
		return err
	}
	unlock, err := lockDir(l.root)
	if err != nil {
		return err
	}
	defer unlock()
	if idx, err = l.readIndex(); err != nil {
		return err
	}
	for _, d := range idx.Manifests {
		if d.Digest == mdesc.Digest {
			return nil
		}
	}
	idx.Manifests = append(idx.Manifests, mdesc)
	sort.SliceStable(idx.Manifests, func(i, j int) bool {
		return idx.Manifests[i].Annotations[ocispec.AnnotationRefName] < idx.Manifests[j].Annotations[ocispec.AnnotationRefName]
	})
	b, err := json.Marshal(idx)
	if err != nil {
		return fmt.Errorf("encode index: %w", err)
	}
	return artifact.WriteFileAtomic(filepath.Join(l.root, ocispec.ImageIndexFile), b, 0o644)
}

// Signatures implements Signed. Every blob read is checked against its
// digest; a referrer that is not a bundle of this artifact is ignored.
func (l *Layout) Signatures(_ context.Context, ref artifact.Ref) ([][]byte, error) {
	idx, err := l.readIndex()
	if err != nil {
		return nil, err
	}
	subject, err := l.tagged(idx, ref)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, d := range idx.Manifests {
		if d.ArtifactType != sign.BundleMediaType || d.Size > maxManifest || len(out) == maxSigs {
			continue
		}
		mb, err := l.readBlob(d)
		if err != nil {
			return nil, err
		}
		layer, ok := bundleLayer(mb, subject.Digest)
		if !ok {
			continue
		}
		b, err := l.readBlob(layer)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// AttachSignature implements Signed: the bundle blob, then the referrer
// manifest pushed with its subject. oras keeps the referrers tag schema
// up to date on a registry without the referrers API (Debian's
// docker-registry 2.8 is one); the old referrers index is left for the
// registry's own garbage collection, since many registries refuse deletes.
func (r *Registry) AttachSignature(ctx context.Context, ref artifact.Ref, bundle []byte) error {
	rp, err := r.repo(ref.Full())
	if err != nil {
		return err
	}
	rp.SkipReferrersGC = true
	subject, err := rp.Resolve(ctx, ref.Version)
	if err != nil {
		return r.classify(err, ref.String())
	}
	mb, layer, err := signatureManifest(subject, bundle)
	if err != nil {
		return err
	}
	for _, b := range []struct {
		desc ocispec.Descriptor
		data []byte
	}{{layer, bundle}, {ocispec.DescriptorEmptyJSON, ocispec.DescriptorEmptyJSON.Data}} {
		if ok, err := rp.Blobs().Exists(ctx, b.desc); err != nil {
			return r.classify(err, "sign "+ref.String())
		} else if ok {
			continue
		}
		if err := rp.Blobs().Push(ctx, b.desc, bytes.NewReader(b.data)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
			return r.classify(err, "sign "+ref.String())
		}
	}
	mdesc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(mb), Size: int64(len(mb)), ArtifactType: sign.BundleMediaType}
	if err := rp.Manifests().Push(ctx, mdesc, bytes.NewReader(mb)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return r.classify(err, "sign "+ref.String())
	}
	return nil
}

// Signatures implements Signed through the referrers API, or the tag
// schema where the registry has no such API. Each manifest and bundle is
// checked against its digest as it is read.
func (r *Registry) Signatures(ctx context.Context, ref artifact.Ref) ([][]byte, error) {
	rp, err := r.repo(ref.Full())
	if err != nil {
		return nil, err
	}
	subject, err := rp.Resolve(ctx, ref.Version)
	if err != nil {
		return nil, r.classify(err, ref.String())
	}
	var refs []ocispec.Descriptor
	err = rp.Referrers(ctx, subject, sign.BundleMediaType, func(ds []ocispec.Descriptor) error {
		refs = append(refs, ds...)
		return nil
	})
	if err != nil && !errors.Is(err, errdef.ErrNotFound) {
		return nil, r.classify(err, "signatures of "+ref.String())
	}
	var out [][]byte
	for _, d := range refs {
		if d.Size > maxManifest || len(out) == maxSigs {
			continue
		}
		mb, err := content.FetchAll(ctx, rp.Manifests(), d)
		if err != nil {
			return nil, r.classify(err, "signature of "+ref.String())
		}
		layer, ok := bundleLayer(mb, subject.Digest)
		if !ok {
			continue
		}
		b, err := content.FetchAll(ctx, rp.Blobs(), layer)
		if err != nil {
			return nil, r.classify(err, "signature of "+ref.String())
		}
		out = append(out, b)
	}
	return out, nil
}

// signature is what install verified of one artifact: the trusted key,
// and the bundle that says so (kept beside the package in the store it is
// installed into).
type signature struct {
	verified sign.Verified
	bundle   []byte
}

// pin is the verification murmur.lock records; nil for an artifact no
// policy asked to be signed.
func (s *signature) pin() *artifact.Verified {
	if s == nil {
		return nil
	}
	return &artifact.Verified{Key: s.verified.Key, Bundle: s.verified.Bundle}
}

// verifySignature checks f against the trust policy before anything is
// written: a scope the policy names must carry a bundle, attached where f
// was fetched from, signed by one of the scope's trusted keys over f's
// exact bytes. Unsigned is E-REG-013; signed only by keys not trusted
// E-REG-014; only keyless (or keyless and untrusted) E-REG-019; a
// signature that does not verify or covers other bytes E-REG-015. nil,
// nil when the policy asks nothing of f's scope.
func (in *Installer) verifySignature(ctx context.Context, f *Fetched) (*signature, error) {
	if !in.Trust.Demands(f.Ref.Scope) {
		return nil, nil
	}
	field, file := in.Trust.Field(f.Ref.Scope)
	var src Signed
	for _, s := range in.Sources {
		if s.Name() == f.From {
			src, _ = s.(Signed)
		}
	}
	var bundles [][]byte
	if src != nil {
		var err error
		if bundles, err = src.Signatures(ctx, f.Ref); err != nil {
			return nil, err
		}
	}
	v, err := in.Trust.Check(f.Ref.Scope, f.Digest, bundles)
	pos := diag.Pos{File: file}
	switch {
	case err == nil:
		for _, b := range bundles {
			if artifact.Digest(b) == v.Bundle {
				return &signature{verified: v, bundle: b}, nil
			}
		}
		return &signature{verified: v}, nil
	case errors.Is(err, sign.ErrUnsigned):
		return nil, diag.New(diag.RegUnsigned, pos, field, fmt.Sprintf("%s from %s (%s) carries no signature, and %s demands one by %s; nothing was installed. Ask its publisher for a signed version (mur publish --sign KEY), or install it from a source that holds its signature", f.Ref, f.From, f.Digest, field, in.Trust.KeyList(f.Ref.Scope)))
	case onlyUntrusted(err):
		return nil, diag.New(diag.RegUntrusted, pos, field, fmt.Sprintf("%s from %s is signed, but by no key %s trusts (%s): %v; nothing was installed. Trust the signer's public key under %s if you mean to", f.Ref, f.From, field, in.Trust.KeyList(f.Ref.Scope), err, field))
	case only(err, sign.ErrKeyless, sign.ErrUntrusted):
		return nil, diag.New(diag.RegKeyless, pos, field, fmt.Sprintf("%s from %s is signed keyless (a Fulcio certificate, not a key): %v; nothing was installed. Ask its publisher for a signature by a key (mur publish --sign KEY, or cosign sign-blob --key) and trust that key under %s", f.Ref, f.From, strings.ReplaceAll(err.Error(), "\n", "; "), field))
	}
	return nil, diag.New(diag.RegSignature, pos, field, fmt.Sprintf("%s from %s (%s): its signature does not verify against these bytes (they were changed after signing, or the signature was): %v; nothing was installed", f.Ref, f.From, f.Digest, strings.ReplaceAll(err.Error(), "\n", "; ")))
}

// onlyUntrusted reports whether every bundle failed for want of a trusted
// key (and none was invalid or malformed).
func onlyUntrusted(err error) bool { return only(err, sign.ErrUntrusted) }

// only reports whether every error joined in err is one of kinds.
func only(err error, kinds ...error) bool {
	errs := []error{err}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		if !slices.ContainsFunc(kinds, func(k error) bool { return errors.Is(e, k) }) {
			return false
		}
	}
	return true
}

// keepSignature attaches a verified bundle in dst, so the store an
// artifact is installed into holds its signature too and a later install
// from it verifies.
func keepSignature(ctx context.Context, dst *Layout, ref artifact.Ref, s *signature) error {
	if s == nil || s.bundle == nil {
		return nil
	}
	return dst.AttachSignature(ctx, ref, s.bundle)
}
