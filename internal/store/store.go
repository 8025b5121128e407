// Package store keeps artifacts: the project and global stores (OCI image
// layouts on disk) and remote OCI registries, behind one Source interface,
// plus install (resolve, verify, unpack, pin) and publish.
//
// An artifact is an OCI artifact: repository <scope>/<name>, tag =
// version, one layer holding the .mur.zip. The pinned digest is the
// layer's: the sha256 of the .mur.zip bytes, the same digest mur build
// prints.
package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/murmur/mur/internal/artifact"
)

// Media types of a murmur artifact.
const (
	ArtifactType   = "application/vnd.murmur.artifact.v1"
	LayerMediaType = "application/vnd.murmur.artifact.layer.v1+zip"
)

// Manifest annotations mur writes at publish and reads to select versions
// without downloading the package.
const (
	AnnName        = "dev.murmur.name"
	AnnVersion     = "dev.murmur.version"
	AnnRuntime     = "dev.murmur.runtime"
	AnnExecution   = "dev.murmur.execution"
	AnnPlatform    = "dev.murmur.platform"
	AnnWIT         = "dev.murmur.wit"
	AnnDescription = "org.opencontainers.image.description"
)

// Error kinds. Each is wrapped with the artifact and the source it came
// from; the CLI maps them to codes.
var (
	ErrNotFound    = errors.New("artifact not found")
	ErrUnreachable = errors.New("registry unreachable")
	ErrAuth        = errors.New("registry refused the credentials")
	ErrDigest      = errors.New("digest mismatch")
	ErrCorrupt     = errors.New("store corrupt")
)

// Meta describes a stored artifact; it travels as manifest annotations.
type Meta struct {
	Name        string // <scope>/<name>
	Version     string
	Runtime     string
	Execution   string // wasm | native | static
	Description string
	// Platform is "any" for wasm and static packages, GOOS/GOARCH for
	// native ones.
	Platform string
	// WIT lists the murmur:* interfaces the payload exports, each with its
	// package version, such as murmur:tool/run@0.1.0.
	WIT []string
}

func (m Meta) annotations() map[string]string {
	a := map[string]string{
		AnnName:      m.Name,
		AnnVersion:   m.Version,
		AnnRuntime:   m.Runtime,
		AnnExecution: m.Execution,
		AnnPlatform:  m.Platform,
		// A fixed created time keeps the manifest of the same package
		// byte-identical, so re-publishing it is a no-op.
		ocispec.AnnotationCreated: "1980-01-01T00:00:00Z",
	}
	if m.Description != "" {
		a[AnnDescription] = m.Description
	}
	if len(m.WIT) > 0 {
		a[AnnWIT] = strings.Join(m.WIT, ",")
	}
	return a
}

func metaFrom(a map[string]string) Meta {
	m := Meta{
		Name: a[AnnName], Version: a[AnnVersion], Runtime: a[AnnRuntime],
		Execution: a[AnnExecution], Platform: a[AnnPlatform], Description: a[AnnDescription],
	}
	if w := a[AnnWIT]; w != "" {
		m.WIT = strings.Split(w, ",")
	}
	return m
}

// HostPlatform is this host's platform as Meta.Platform writes it.
func HostPlatform() string { return runtime.GOOS + "/" + runtime.GOARCH }

// RunsHere reports whether a package for platform runs on this host.
func RunsHere(platform string) bool {
	return platform == "" || platform == "any" || platform == HostPlatform()
}

// Fetched is one artifact as a source served it, already verified: the
// manifest's digest against what the source reported and the package's
// bytes against the manifest's layer digest.
type Fetched struct {
	Ref    artifact.Ref
	Digest string // sha256 of Data: the pin
	Meta   Meta
	Data   []byte
	From   string
	// OwnerID is the GitHub account id owning the scope source it came
	// from; 0 from a store or registry.
	OwnerID int64
}

// Source is somewhere artifacts are kept.
type Source interface {
	// Name is project, global or registry:<name>.
	Name() string
	// Versions lists the versions held of a full name, with each one's
	// metadata; an unknown name has none.
	Versions(ctx context.Context, name string) ([]Meta, error)
	// Fetch returns name@version verified, or ErrNotFound.
	Fetch(ctx context.Context, ref artifact.Ref) (*Fetched, error)
	// Put stores a package under ref; it returns the package's digest.
	Put(ctx context.Context, ref artifact.Ref, meta Meta, pkg []byte) (string, error)
	// List lists every artifact the source holds, newest versions
	// first within a name.
	List(ctx context.Context) ([]Meta, error)
}

// layerOf picks the package layer out of a manifest.
func layerOf(m ocispec.Manifest, where string) (ocispec.Descriptor, error) {
	for _, l := range m.Layers {
		if l.MediaType == LayerMediaType {
			return l, nil
		}
	}
	return ocispec.Descriptor{}, fmt.Errorf("%w: %s: manifest has no %s layer: not a murmur artifact", ErrCorrupt, where, LayerMediaType)
}
