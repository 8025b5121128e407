package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	digest "github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
)

// maxManifest bounds a manifest read from a registry.
const maxManifest = 4 << 20

// Registry is a remote OCI registry speaking the distribution API, with
// the basic and bearer challenge flows.
type Registry struct {
	name      string
	host      string
	namespace string
	plainHTTP bool
	client    *auth.Client
}

// NewRegistry is the registry named name in config.
func NewRegistry(name string, c config.Registry) (*Registry, error) {
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("registries.%s.url %q is not a URL", name, c.URL)
	}
	plain := u.Scheme == "http"
	if plain && !c.PlainHTTP && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("registries.%s.url %q is plain http to a host that is not loopback; use https, or set registries.%s.plain_http: true", name, c.URL, name)
	}
	cred := auth.Credential{Username: c.Username, Password: c.Password}
	if c.Token != "" {
		cred = auth.Credential{AccessToken: c.Token}
		if c.Username != "" {
			cred = auth.Credential{Username: c.Username, Password: c.Token}
		}
	}
	cl := &auth.Client{
		Client:     &http.Client{Timeout: 60 * time.Second},
		Cache:      auth.NewCache(),
		Credential: auth.StaticCredential(u.Host, cred),
	}
	if isLoopback(u.Hostname()) {
		// A loopback registry's token service is on loopback too; keep
		// every other default denial (link-local, metadata addresses).
		var keep []netip.Prefix
		for _, p := range auth.DefaultBlockedRealmPrefixes() {
			if !p.Contains(netip.MustParseAddr("127.0.0.1")) && !p.Contains(netip.IPv6Loopback()) {
				keep = append(keep, p)
			}
		}
		cl.BlockedRealmPrefixes = append([]netip.Prefix{}, keep...)
	}
	cl.SetUserAgent("mur")
	return &Registry{name: name, host: u.Host, namespace: strings.Trim(c.Namespace, "/"), plainHTTP: plain, client: cl}, nil
}

func isLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Name implements Source.
func (r *Registry) Name() string { return "registry:" + r.name }

func (r *Registry) repoPath(full string) string {
	if r.namespace == "" {
		return full
	}
	return r.namespace + "/" + full
}

func (r *Registry) repo(full string) (*remote.Repository, error) {
	rp, err := remote.NewRepository(r.host + "/" + r.repoPath(full))
	if err != nil {
		return nil, fmt.Errorf("%s: repository %s: %w", r.Name(), full, err)
	}
	rp.PlainHTTP = r.plainHTTP
	rp.Client = r.client
	return rp, nil
}

// classify turns transport and HTTP failures into the store's kinds.
func (r *Registry) classify(err error, what string) error {
	var ec *errcode.ErrorResponse
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errdef.ErrNotFound):
		return fmt.Errorf("%w: %s in %s", ErrNotFound, what, r.Name())
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		return fmt.Errorf("%w: %s (%s) asks for credentials for %s and none are configured: set registries.%s.username and .password (or .token) with `mur config set -g`", ErrAuth, r.Name(), r.host, what, r.name)
	case errors.As(err, &ec) && (ec.StatusCode == http.StatusUnauthorized || ec.StatusCode == http.StatusForbidden):
		return fmt.Errorf("%w: %s (%s) answered %d for %s: check registries.%s.username/password/token in config.yaml", ErrAuth, r.Name(), r.host, ec.StatusCode, what, r.name)
	case errors.As(err, &ec) && ec.StatusCode >= 500:
		return fmt.Errorf("%w: %s (%s) answered %d for %s; try again later", ErrUnreachable, r.Name(), r.host, ec.StatusCode, what)
	case errors.As(err, &ec) && ec.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w: %s in %s", ErrNotFound, what, r.Name())
	case errors.Is(err, content.ErrMismatchedDigest), errors.Is(err, content.ErrTrailingData), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: %s from %s: the registry served bytes that do not hash to the digest it names (its copy is corrupt or was tampered with); nothing was installed: %w", ErrDigest, what, r.Name(), err)
	}
	var ne net.Error
	var oe *net.OpError
	var ue *url.Error
	if errors.As(err, &oe) || errors.As(err, &ne) || errors.As(err, &ue) {
		return fmt.Errorf("%w: %s (%s): %w", ErrUnreachable, r.Name(), r.host, err)
	}
	return fmt.Errorf("%s: %s: %w", r.Name(), what, err)
}

// Fetch implements Source: it resolves the tag, reads the manifest
// (verified against the digest the registry reported), then the package
// layer (verified against the manifest's digest and size).
func (r *Registry) Fetch(ctx context.Context, ref artifact.Ref) (*Fetched, error) {
	rp, err := r.repo(ref.Full())
	if err != nil {
		return nil, err
	}
	mb, err := r.fetchManifest(ctx, rp, ref.String(), ref.Version)
	if err != nil {
		return nil, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: manifest of %s: %w", ErrCorrupt, r.Name(), ref, err)
	}
	layer, err := layerOf(m, r.Name()+" "+ref.String())
	if err != nil {
		return nil, err
	}
	if layer.Size < 0 || uint64(layer.Size) > artifact.DefaultLimits.MaxTotal {
		return nil, fmt.Errorf("%w: %s: %s's package is %d bytes", ErrCorrupt, r.Name(), ref, layer.Size)
	}
	data, err := content.FetchAll(ctx, rp.Blobs(), layer)
	if err != nil {
		return nil, r.classify(err, "package of "+ref.String())
	}
	// FetchAll verified already; hash again so the pin never rests on a
	// library's check alone.
	if got := artifact.Digest(data); got != layer.Digest.String() {
		return nil, fmt.Errorf("%w: %s: package of %s hashes to %s, the manifest says %s", ErrDigest, r.Name(), ref, got, layer.Digest)
	}
	return &Fetched{Ref: ref, Digest: layer.Digest.String(), Meta: metaFrom(m.Annotations), Data: data, From: r.Name()}, nil
}

// fetchManifest GETs the manifest tagged tag and checks its bytes against
// the digest and size the registry reported for it.
func (r *Registry) fetchManifest(ctx context.Context, rp *remote.Repository, what, tag string) ([]byte, error) {
	desc, rc, err := rp.FetchReference(ctx, tag)
	if err != nil {
		return nil, r.classify(err, what)
	}
	defer rc.Close()
	if desc.Size > maxManifest {
		return nil, fmt.Errorf("%w: %s: manifest of %s is %d bytes", ErrCorrupt, r.Name(), what, desc.Size)
	}
	mb, err := content.ReadAll(rc, desc)
	if err != nil {
		return nil, r.classify(err, "manifest of "+what)
	}
	return mb, nil
}

// Put implements Source: blobs first, then the manifest under the tag.
func (r *Registry) Put(ctx context.Context, ref artifact.Ref, meta Meta, pkg []byte) (string, error) {
	rp, err := r.repo(ref.Full())
	if err != nil {
		return "", err
	}
	mb, layer, err := buildManifest(meta, pkg)
	if err != nil {
		return "", err
	}
	for _, b := range []struct {
		desc ocispec.Descriptor
		data []byte
	}{{layer, pkg}, {ocispec.DescriptorEmptyJSON, ocispec.DescriptorEmptyJSON.Data}} {
		ok, err := rp.Blobs().Exists(ctx, b.desc)
		if err != nil {
			return "", r.classify(err, "push "+ref.String())
		}
		if ok {
			continue
		}
		if err := rp.Blobs().Push(ctx, b.desc, bytes.NewReader(b.data)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
			return "", r.classify(err, "push "+ref.String())
		}
	}
	mdesc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(mb), Size: int64(len(mb)), ArtifactType: ArtifactType}
	if err := rp.Manifests().PushReference(ctx, mdesc, bytes.NewReader(mb), ref.Version); err != nil {
		return "", r.classify(err, "push "+ref.String())
	}
	return layer.Digest.String(), nil
}

// Versions implements Source, reading each tag's manifest for its
// metadata.
func (r *Registry) Versions(ctx context.Context, name string) ([]Meta, error) {
	rp, err := r.repo(name)
	if err != nil {
		return nil, err
	}
	var tags []string
	err = rp.Tags(ctx, "", func(t []string) error { tags = append(tags, t...); return nil })
	if err != nil {
		if err = r.classify(err, name); errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	var out []Meta
	for _, t := range tags {
		if !artifact.ValidVersion(t) {
			continue
		}
		m, err := r.meta(ctx, rp, name, t)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	sortMetas(out)
	return out, nil
}

func (r *Registry) meta(ctx context.Context, rp *remote.Repository, name, tag string) (Meta, error) {
	mb, err := r.fetchManifest(ctx, rp, name+"@"+tag, tag)
	if err != nil {
		return Meta{}, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return Meta{}, fmt.Errorf("%w: %s: manifest of %s@%s: %w", ErrCorrupt, r.Name(), name, tag, err)
	}
	meta := metaFrom(m.Annotations)
	meta.Name, meta.Version = name, tag
	return meta, nil
}

// List implements Source through the registry's catalog; a registry that
// does not serve _catalog lists nothing and says so.
func (r *Registry) List(ctx context.Context) ([]Meta, error) {
	reg, err := remote.NewRegistry(r.host)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name(), err)
	}
	reg.PlainHTTP = r.plainHTTP
	reg.Client = r.client
	var repos []string
	if err := reg.Repositories(ctx, "", func(rs []string) error { repos = append(repos, rs...); return nil }); err != nil {
		return nil, r.classify(err, "catalog")
	}
	var out []Meta
	for _, rp := range repos {
		full := rp
		if r.namespace != "" {
			var ok bool
			if full, ok = strings.CutPrefix(rp, r.namespace+"/"); !ok {
				continue
			}
		}
		if _, err := artifact.ParseFullName(full); err != nil {
			continue
		}
		ms, err := r.Versions(ctx, full)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	sortMetas(out)
	return out, nil
}
