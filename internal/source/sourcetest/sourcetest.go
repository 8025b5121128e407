// Package sourcetest is a fake GitHub REST API on loopback for tests of
// scope sources: the endpoints the source client calls, answering with
// the JSON shapes GitHub's REST reference documents (API version
// 2022-11-28) — get a repository, list releases (paginated with a Link
// header), get a release by tag name, and get a release asset, which with
// Accept: application/octet-stream redirects to the asset's bytes on
// another path as GitHub redirects to its storage host.
package sourcetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/murmur/mur/internal/artifact"
)

// Server is the fake API. Its URL is what sources.<scope>.api_url names.
type Server struct {
	*httptest.Server
	// Token, when set, is the bearer token every request must carry.
	Token string
	// PerPage caps the releases of one listing page (GitHub's per_page,
	// at most 100).
	PerPage int

	mu     sync.Mutex
	repos  map[string]*Repo
	assets map[int64]*Asset
	nextID int64
	hits   []string
}

// Repo is one repository.
type Repo struct {
	FullName string
	Owner    string
	OwnerID  int64
	Releases []*Release
}

// Release is one release.
type Release struct {
	ID     int64
	Tag    string
	Draft  bool
	Assets []*Asset
}

// Asset is one release asset.
type Asset struct {
	ID   int64
	Name string
	Data []byte
	// Digest is what the API reports; New computes the sha256, and a test
	// may overwrite it (a lying source) or clear it (an older release
	// GitHub never computed one for).
	Digest string
}

// New starts the server; it stops when the test ends.
func New(t testing.TB) *Server {
	s := Start()
	t.Cleanup(s.Close)
	return s
}

// Start starts the server; the caller closes it.
func Start() *Server {
	s := &Server{repos: map[string]*Repo{}, assets: map[int64]*Asset{}, nextID: 1000, PerPage: 100}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// AddRepo adds owner/name owned by the account ownerID.
func (s *Server) AddRepo(fullName string, ownerID int64) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, _, _ := strings.Cut(fullName, "/")
	r := &Repo{FullName: fullName, Owner: owner, OwnerID: ownerID}
	s.repos[strings.ToLower(fullName)] = r
	return r
}

// SetOwner gives fullName's owner login to another account (the take-over
// of a deleted, re-registered login).
func (s *Server) SetOwner(fullName string, ownerID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[strings.ToLower(fullName)].OwnerID = ownerID
}

// Publish adds a release tagged tag holding files (asset name -> bytes).
func (s *Server) Publish(fullName, tag string, files map[string][]byte) *Release {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(fullName)]
	s.nextID++
	rel := &Release{ID: s.nextID, Tag: tag}
	for name, b := range files {
		s.nextID++
		a := &Asset{ID: s.nextID, Name: name, Data: b, Digest: artifact.Digest(b)}
		rel.Assets = append(rel.Assets, a)
		s.assets[a.ID] = a
	}
	r.Releases = append(r.Releases, rel)
	return rel
}

// Hits lists the paths requested so far.
func (s *Server) Hits() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.hits...)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits = append(s.hits, req.URL.Path)
	if req.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"message": "Method Not Allowed"})
		return
	}
	// The storage host's address carries no token, as GitHub's signed
	// redirect does not.
	if id, ok := strings.CutPrefix(req.URL.Path, "/storage/"); ok {
		n, _ := strconv.ParseInt(id, 10, 64)
		a, ok := s.assets[n]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(a.Data)
		return
	}
	if s.Token != "" && req.Header.Get("Authorization") != "Bearer "+s.Token {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
		return
	}
	// /repos/{owner}/{repo}[/releases[/tags/{tag}|/assets/{id}]]
	parts := strings.Split(strings.TrimPrefix(req.URL.Path, "/"), "/")
	if len(parts) < 3 || parts[0] != "repos" {
		notFound(w)
		return
	}
	repo, ok := s.repos[strings.ToLower(parts[1]+"/"+parts[2])]
	if !ok {
		notFound(w)
		return
	}
	switch rest := parts[3:]; {
	case len(rest) == 0:
		writeJSON(w, http.StatusOK, s.repoJSON(repo))
	case len(rest) == 1 && rest[0] == "releases":
		s.list(w, req, repo)
	case len(rest) == 3 && rest[0] == "releases" && rest[1] == "tags":
		for _, r := range repo.Releases {
			if r.Tag == rest[2] && !r.Draft {
				writeJSON(w, http.StatusOK, s.releaseJSON(repo, r))
				return
			}
		}
		notFound(w)
	case len(rest) == 3 && rest[0] == "releases" && rest[1] == "assets":
		id, _ := strconv.ParseInt(rest[2], 10, 64)
		for _, r := range repo.Releases {
			for _, a := range r.Assets {
				if a.ID != id {
					continue
				}
				if req.Header.Get("Accept") == "application/octet-stream" {
					http.Redirect(w, req, fmt.Sprintf("%s/storage/%d", s.URL, a.ID), http.StatusFound)
					return
				}
				writeJSON(w, http.StatusOK, s.assetJSON(repo, a))
				return
			}
		}
		notFound(w)
	default:
		notFound(w)
	}
}

func (s *Server) list(w http.ResponseWriter, req *http.Request, repo *Repo) {
	per, _ := strconv.Atoi(req.URL.Query().Get("per_page"))
	if per <= 0 || per > 100 {
		per = 30
	}
	per = min(per, s.PerPage)
	page, _ := strconv.Atoi(req.URL.Query().Get("page"))
	if page <= 0 {
		page = 1
	}
	// Newest first, as GitHub lists them.
	var all []map[string]any
	for i := len(repo.Releases) - 1; i >= 0; i-- {
		all = append(all, s.releaseJSON(repo, repo.Releases[i]))
	}
	from := min((page-1)*per, len(all))
	to := min(from+per, len(all))
	if to < len(all) {
		next := fmt.Sprintf("%s/repos/%s/releases?page=%d&per_page=%d", s.URL, repo.FullName, page+1, per)
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, next))
	}
	out := all[from:to]
	if out == nil {
		out = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) ownerJSON(repo *Repo) map[string]any {
	return map[string]any{"login": repo.Owner, "id": repo.OwnerID, "type": "Organization", "url": s.URL + "/users/" + repo.Owner}
}

func (s *Server) repoJSON(repo *Repo) map[string]any {
	_, name, _ := strings.Cut(repo.FullName, "/")
	return map[string]any{
		"id": repo.OwnerID*10 + 1, "name": name, "full_name": repo.FullName, "private": false,
		"owner": s.ownerJSON(repo), "url": s.URL + "/repos/" + repo.FullName,
	}
}

func (s *Server) releaseJSON(repo *Repo, r *Release) map[string]any {
	assets := []map[string]any{}
	for _, a := range r.Assets {
		assets = append(assets, s.assetJSON(repo, a))
	}
	return map[string]any{
		"id": r.ID, "tag_name": r.Tag, "name": r.Tag, "draft": r.Draft, "prerelease": false,
		"url":    fmt.Sprintf("%s/repos/%s/releases/%d", s.URL, repo.FullName, r.ID),
		"author": s.ownerJSON(repo), "assets": assets,
	}
}

func (s *Server) assetJSON(repo *Repo, a *Asset) map[string]any {
	m := map[string]any{
		"id": a.ID, "name": a.Name, "label": "", "state": "uploaded", "content_type": "application/zip",
		"size": len(a.Data), "download_count": 0,
		"url":                  fmt.Sprintf("%s/repos/%s/releases/assets/%d", s.URL, repo.FullName, a.ID),
		"browser_download_url": fmt.Sprintf("%s/%s/releases/download/%d/%s", s.URL, repo.FullName, a.ID, a.Name),
	}
	if a.Digest != "" {
		m["digest"] = a.Digest
	}
	return m
}
