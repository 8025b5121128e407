// Package source is the scope-source client: the GitHub repository that
// config.yaml's sources.<scope> names releases that scope's artifacts, and
// this package lists the versions it holds, fetches one artifact's package
// out of the release for its version, and reports the numeric GitHub id of
// the account owning the repository (the owner id murmur.lock records).
//
// A release is tagged <version> or v<version>; an artifact <scope>/<name>
// at that version is its asset <name>-<version>-<goos>-<goarch>.mur.zip
// (a payload for one platform) or <name>-<version>.mur.zip, and its
// signature, when it has one, the asset of that name plus ".sigstore.json".
// The client speaks GitHub's REST API through go-github, at api_url
// (https://api.github.com by default; https://HOST/api/v3 for GitHub
// Enterprise Server; a loopback http:// server in tests).
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v75/github"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
)

// Error kinds; each is wrapped with the scope, the artifact and the URL
// that answered.
var (
	// ErrUnknown: the scope has no source, or its repository does not
	// exist (or is not visible with the token given).
	ErrUnknown = errors.New("unknown scope source")
	// ErrNotFound: no release of the source is tagged with the version.
	ErrNotFound = errors.New("version not released by the scope source")
	// ErrAsset: the release for the version holds no asset for the artifact.
	ErrAsset = errors.New("release holds no asset for the artifact")
	// ErrDigest: the downloaded bytes differ from the digest GitHub
	// reports for the asset.
	ErrDigest = errors.New("asset digest mismatch")
	// ErrUnreachable: the API did not answer, answered 5xx, or rate-limited.
	ErrUnreachable = errors.New("scope source unreachable")
	// ErrAuth: the API refused the token (401, or 403 not for a rate limit).
	ErrAuth = errors.New("scope source refused the credentials")
)

// maxPackage caps a downloaded package at the largest total an artifact
// may unpack to; maxBundle caps a signature bundle.
const (
	maxPackage = int64(1 << 30)
	maxBundle  = int64(1 << 20)
	// maxPages bounds the release listing (100 per page).
	maxPages = 10
)

// Client is one scope's source.
type Client struct {
	Scope string
	// Repo is owner/name as configured.
	Repo string
	api  string
	// tokenEnv is the variable the token is read from.
	tokenEnv string
	gh       *github.Client
	hc       *http.Client

	mu   sync.Mutex
	info *Repository
}

// Repository is what the API says of the source's repository.
type Repository struct {
	// FullName is owner/name as GitHub spells it now (after a rename or
	// transfer it differs from the configured one).
	FullName string
	Owner    string
	// OwnerID is the owner account's numeric id: it survives a rename of
	// the login and is never given to another account.
	OwnerID int64
}

// Package is one artifact fetched from a release.
type Package struct {
	Data   []byte
	Digest string // sha256 of Data
	// OwnerID is the owner id of the repository the release belongs to.
	OwnerID int64
	// Asset is the asset's file name; URL the API address it came from.
	Asset string
	URL   string
	// Platform is goos/goarch when the asset's name names one, else "".
	Platform string
	// Bundle is the asset's signature bundle (<asset>.sigstore.json), nil
	// when the release holds none.
	Bundle []byte
}

// New opens scope's source. hc nil is a client with a 60 s timeout. A
// plain http:// api_url is refused unless it is a loopback address: the
// token and the packages would cross the network in clear.
func New(scope string, src config.ScopeSource, hc *http.Client) (*Client, error) {
	api := src.APIURL()
	u, err := url.Parse(api)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("%w: sources.%s.api_url %q is not an http(s) URL", config.ErrConfig, scope, api)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return nil, fmt.Errorf("%w: sources.%s.api_url %q is plain http to a host that is not loopback; use https://", config.ErrConfig, scope, api)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	gh := github.NewClient(hc)
	if tok := src.Token(); tok != "" {
		gh = gh.WithAuthToken(tok)
	}
	base, _ := url.Parse(api + "/")
	gh.BaseURL = base
	gh.UserAgent = "mur"
	env := src.TokenEnv
	if env == "" {
		env = config.DefaultTokenEnv
	}
	return &Client{Scope: scope, Repo: src.Repo, api: api, tokenEnv: env, gh: gh, hc: hc}, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (c *Client) ownerRepo() (string, string) {
	o, r, _ := strings.Cut(c.Repo, "/")
	return o, r
}

// Name is how the source is named in murmur.lock's from: and in messages.
func (c *Client) Name() string { return "source:" + c.Scope }

// Info returns the repository's owner and owner id (asked once per
// client). A repository the API does not know is ErrUnknown.
func (c *Client) Info(ctx context.Context) (Repository, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.info != nil {
		return *c.info, nil
	}
	owner, repo := c.ownerRepo()
	r, _, err := c.gh.Repositories.Get(ctx, owner, repo)
	if err != nil {
		if status(err) == http.StatusNotFound {
			return Repository{}, fmt.Errorf("%w: sources.%s names %s, which %s does not know (no such repository, or it is private and %s grants no access to it)", ErrUnknown, c.Scope, c.Repo, c.api, c.tokenHint())
		}
		return Repository{}, c.wrap(err, fmt.Sprintf("%s/repos/%s", c.api, c.Repo))
	}
	info := Repository{FullName: r.GetFullName(), Owner: r.GetOwner().GetLogin(), OwnerID: r.GetOwner().GetID()}
	if info.OwnerID <= 0 {
		return Repository{}, fmt.Errorf("%w: %s/repos/%s answered without an owner id", ErrUnreachable, c.api, c.Repo)
	}
	c.info = &info
	return info, nil
}

// tokenHint names where the source's token comes from.
func (c *Client) tokenHint() string {
	return "the token in $" + c.tokenEnv + " (sources." + c.Scope + ".token_env)"
}

// Versions lists the versions of name (the part after the scope) the
// source releases: each non-draft release whose tag, without a leading v,
// is a version and holds an asset for name at that version.
func (c *Client) Versions(ctx context.Context, name string) ([]string, error) {
	if _, err := c.Info(ctx); err != nil {
		return nil, err
	}
	rels, err := c.releases(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rels {
		v := strings.TrimPrefix(r.GetTagName(), "v")
		if !artifact.ValidVersion(v) || slices.Contains(out, v) {
			continue
		}
		if a, _ := pickAsset(r.Assets, name, v); a != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// Released is one artifact some release holds.
type Released struct {
	Name, Version string
}

// List lists every artifact the source's releases hold, by asset name:
// an asset <name>-<version>[-<goos>-<goarch>].mur.zip in a release tagged
// <version> or v<version>.
func (c *Client) List(ctx context.Context) ([]Released, error) {
	if _, err := c.Info(ctx); err != nil {
		return nil, err
	}
	rels, err := c.releases(ctx)
	if err != nil {
		return nil, err
	}
	var out []Released
	seen := map[Released]bool{}
	for _, r := range rels {
		v := strings.TrimPrefix(r.GetTagName(), "v")
		if !artifact.ValidVersion(v) {
			continue
		}
		for _, a := range r.Assets {
			n, ok := assetArtifact(a.GetName(), v)
			if !ok {
				continue
			}
			if rel := (Released{n, v}); !seen[rel] {
				seen[rel] = true
				out = append(out, rel)
			}
		}
	}
	return out, nil
}

// assetArtifact is the artifact name an asset of a release for version v
// carries, if its file name is one this package reads.
func assetArtifact(file, v string) (string, bool) {
	base, ok := strings.CutSuffix(file, ".mur.zip")
	if !ok {
		return "", false
	}
	if i := strings.LastIndex(base, "-"+v); i > 0 {
		rest := base[i+1+len(v):]
		if rest == "" || strings.Count(rest, "-") == 2 && strings.HasPrefix(rest, "-") {
			n := base[:i]
			if _, err := artifact.ParseFullName("x/" + n); err == nil {
				return n, true
			}
		}
	}
	return "", false
}

func (c *Client) releases(ctx context.Context) ([]*github.RepositoryRelease, error) {
	owner, repo := c.ownerRepo()
	var all []*github.RepositoryRelease
	opt := &github.ListOptions{PerPage: 100}
	for range maxPages {
		rs, resp, err := c.gh.Repositories.ListReleases(ctx, owner, repo, opt)
		if err != nil {
			return nil, c.wrap(err, fmt.Sprintf("%s/repos/%s/releases", c.api, c.Repo))
		}
		for _, r := range rs {
			if !r.GetDraft() {
				all = append(all, r)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return all, nil
}

// release finds the release tagged version, else v<version>; ErrNotFound
// when neither exists.
func (c *Client) release(ctx context.Context, version string) (*github.RepositoryRelease, error) {
	owner, repo := c.ownerRepo()
	for _, tag := range []string{version, "v" + version} {
		r, _, err := c.gh.Repositories.GetReleaseByTag(ctx, owner, repo, tag)
		if err == nil && !r.GetDraft() {
			return r, nil
		}
		if err != nil && status(err) != http.StatusNotFound {
			return nil, c.wrap(err, fmt.Sprintf("%s/repos/%s/releases/tags/%s", c.api, c.Repo, tag))
		}
	}
	return nil, fmt.Errorf("%w: %s has no release tagged %s or v%s", ErrNotFound, c.Repo, version, version)
}

// platformSuffix is this host's platform as an asset name carries it.
func platformSuffix() string { return runtime.GOOS + "-" + runtime.GOARCH }

// pickAsset chooses name's asset at version: this host's platform first,
// then the platform-neutral one. others names the assets for name at
// version built for other platforms, when neither exists.
func pickAsset(assets []*github.ReleaseAsset, name, version string) (a *github.ReleaseAsset, others []string) {
	host := name + "-" + version + "-" + platformSuffix() + ".mur.zip"
	plain := name + "-" + version + ".mur.zip"
	var found *github.ReleaseAsset
	for _, x := range assets {
		switch n := x.GetName(); {
		case n == host:
			return x, nil
		case n == plain:
			found = x
		case strings.HasPrefix(n, name+"-"+version+"-") && strings.HasSuffix(n, ".mur.zip"):
			if got, ok := assetArtifact(n, version); ok && got == name {
				others = append(others, n)
			}
		}
	}
	if found != nil {
		return found, nil
	}
	return nil, others
}

// Fetch downloads name (the part after the scope) at version from the
// release for that version, with its signature bundle when the release
// holds one, and checks the bytes against the digest GitHub reports for
// the asset. It returns ErrNotFound when no release is tagged with the
// version and ErrAsset when the release holds no asset for name.
func (c *Client) Fetch(ctx context.Context, name, version string) (*Package, error) {
	info, err := c.Info(ctx)
	if err != nil {
		return nil, err
	}
	r, err := c.release(ctx, version)
	if err != nil {
		return nil, err
	}
	a, others := pickAsset(r.Assets, name, version)
	if a == nil {
		var held []string
		for _, x := range r.Assets {
			held = append(held, x.GetName())
		}
		what := "it holds " + strings.Join(held, ", ")
		if len(held) == 0 {
			what = "it holds no assets"
		}
		if len(others) > 0 {
			what = "it holds only " + strings.Join(others, ", ") + ", built for other platforms"
		}
		return nil, fmt.Errorf("%w: release %s of %s has no %s-%s-%s.mur.zip or %s-%s.mur.zip (%s); ask the publisher of scope %s to attach it", ErrAsset, r.GetTagName(), c.Repo, name, version, platformSuffix(), name, version, what, c.Scope)
	}
	where := fmt.Sprintf("%s/repos/%s/releases/assets/%d", c.api, c.Repo, a.GetID())
	if int64(a.GetSize()) > maxPackage {
		return nil, fmt.Errorf("%w: %s (%s) is %d bytes, over the %d a package may be", artifact.ErrPackage, a.GetName(), where, a.GetSize(), maxPackage)
	}
	data, err := c.download(ctx, a.GetID(), maxPackage, where)
	if err != nil {
		return nil, err
	}
	got := artifact.Digest(data)
	if want := a.GetDigest(); want != "" && want != got {
		return nil, fmt.Errorf("%w: %s (%s): GitHub reports %s, the bytes downloaded are %s", ErrDigest, a.GetName(), where, want, got)
	}
	p := &Package{Data: data, Digest: got, OwnerID: info.OwnerID, Asset: a.GetName(), URL: where}
	if rest, ok := strings.CutPrefix(strings.TrimSuffix(a.GetName(), ".mur.zip"), name+"-"+version+"-"); ok {
		p.Platform = strings.Replace(rest, "-", "/", 1)
	}
	for _, x := range r.Assets {
		if x.GetName() == a.GetName()+".sigstore.json" {
			bw := fmt.Sprintf("%s/repos/%s/releases/assets/%d", c.api, c.Repo, x.GetID())
			if p.Bundle, err = c.download(ctx, x.GetID(), maxBundle, bw); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// download reads one release asset, following GitHub's redirect to its
// storage host (an http.Client drops the Authorization header when the
// redirect leaves the API's host).
func (c *Client) download(ctx context.Context, id, limit int64, where string) ([]byte, error) {
	owner, repo := c.ownerRepo()
	rc, _, err := c.gh.Repositories.DownloadReleaseAsset(ctx, owner, repo, id, c.hc)
	if err != nil {
		return nil, c.wrap(err, where)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: GET %s: %w", ErrUnreachable, where, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s sent more than %d bytes", artifact.ErrPackage, where, limit)
	}
	return b, nil
}

func status(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}

// wrap names the URL and the kind of a failed API call.
func (c *Client) wrap(err error, where string) error {
	var rl *github.RateLimitError
	var arl *github.AbuseRateLimitError
	switch st := status(err); {
	case errors.As(err, &rl), errors.As(err, &arl):
		return fmt.Errorf("%w: GET %s: rate-limited by GitHub (%v); a token in %s raises the limit", ErrUnreachable, where, err, c.tokenHint())
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return fmt.Errorf("%w: GET %s answered %d; check %s", ErrAuth, where, st, c.tokenHint())
	case st == http.StatusNotFound:
		return fmt.Errorf("%w: GET %s answered 404", ErrNotFound, where)
	case st != 0:
		return fmt.Errorf("%w: GET %s answered %d", ErrUnreachable, where, st)
	}
	// A transport failure: go-github's error already carries the URL, but
	// with the query; name the address plainly.
	return fmt.Errorf("%w: GET %s: %w", ErrUnreachable, where, unwrapURL(err))
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Set is every configured scope source, by scope.
type Set struct {
	srcs map[string]config.ScopeSource
	hc   *http.Client

	mu      sync.Mutex
	clients map[string]*Client
}

// NewSet opens the sources of config.yaml's sources: (clients are made on
// first use). hc nil is a client with a 60 s timeout.
func NewSet(srcs map[string]config.ScopeSource, hc *http.Client) *Set {
	return &Set{srcs: srcs, hc: hc, clients: map[string]*Client{}}
}

// Scopes lists the scopes with a source.
func (s *Set) Scopes() []string {
	out := make([]string, 0, len(s.srcs))
	for k := range s.srcs {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Client is scope's source; ErrUnknown when config.yaml names none.
func (s *Set) Client(scope string) (*Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[scope]; ok {
		return c, nil
	}
	src, ok := s.srcs[scope]
	if !ok {
		return nil, fmt.Errorf("%w: config.yaml names no source for scope %s; add one with `mur config set -g sources.%s.repo OWNER/REPO`", ErrUnknown, scope, scope)
	}
	c, err := New(scope, src, s.hc)
	if err != nil {
		return nil, err
	}
	s.clients[scope] = c
	return c, nil
}

// Fetch fetches <scope>/<name>@<version> from scope's source: the package
// bytes and the owner id of the repository they came from. It is what a
// runtime pull with install.from: [stores, sources] calls for a version
// no store holds; it writes nothing. The caller verifies the package as
// mur install does and compares the owner id with murmur.lock's.
func (s *Set) Fetch(ctx context.Context, scope, name, version string) ([]byte, int64, error) {
	c, err := s.Client(scope)
	if err != nil {
		return nil, 0, err
	}
	p, err := c.Fetch(ctx, name, version)
	if err != nil {
		return nil, 0, err
	}
	return p.Data, p.OwnerID, nil
}
