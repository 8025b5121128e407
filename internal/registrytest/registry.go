// Package registrytest is an in-process OCI distribution registry for
// tests: manifests by tag and digest, blobs with monolithic uploads, tag
// lists and the catalog, optional basic or bearer-token auth, and faults a
// test can inject (tampered blobs, lying digests, going down).
package registrytest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Auth selects how the registry challenges clients.
type Auth int

const (
	// NoAuth answers everyone.
	NoAuth Auth = iota
	// Basic challenges with WWW-Authenticate: Basic.
	Basic
	// Bearer challenges with a token realm on the same server, which
	// trades basic credentials for a token.
	Bearer
)

// Registry is a running in-process registry.
type Registry struct {
	srv *httptest.Server

	mu        sync.Mutex
	blobs     map[string][]byte
	manifests map[string]map[string]string // repo -> tag -> digest
	mtypes    map[string]string            // manifest digest -> media type
	uploads   map[string]string            // upload id -> repo
	nextID    int
	auth      Auth
	user      string
	pass      string
	tokens    map[string]bool
	lieDigest bool
	failing   bool
	stall     chan struct{} // non-nil: blob GETs wait until it is closed
	stalled   chan struct{} // receives once per request that starts waiting
}

// New starts a registry on loopback. Close it with Close.
func New() *Registry {
	r := &Registry{
		blobs:     map[string][]byte{},
		manifests: map[string]map[string]string{},
		mtypes:    map[string]string{},
		uploads:   map[string]string{},
		tokens:    map[string]bool{},
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the registry's base URL, http://127.0.0.1:<port>.
func (r *Registry) URL() string { return r.srv.URL }

// Host is host:port.
func (r *Registry) Host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

// Close stops the registry; clients then see connection refused.
func (r *Registry) Close() { r.srv.Close() }

// RequireAuth makes the registry challenge with mode and accept only
// user/pass.
func (r *Registry) RequireAuth(mode Auth, user, pass string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.auth, r.user, r.pass = mode, user, pass
}

// AllowToken makes a bearer registry accept tok as if its token service
// had issued it: a personal access token configured ahead of time.
func (r *Registry) AllowToken(tok string) {
	r.mu.Lock()
	r.tokens[tok] = true
	r.mu.Unlock()
}

// Fail makes every request answer 503, as a registry that is up but
// unhealthy does.
func (r *Registry) Fail(on bool) {
	r.mu.Lock()
	r.failing = on
	r.mu.Unlock()
}

// TamperBlob flips a byte of the blob digest, keeping its name: what a
// corrupted or malicious registry serves.
func (r *Registry) TamperBlob(digest string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.blobs[digest]
	if !ok || len(b) == 0 {
		return false
	}
	c := append([]byte(nil), b...)
	c[len(c)/2] ^= 0xff
	r.blobs[digest] = c
	return true
}

// LieAboutDigests makes manifest responses carry a Docker-Content-Digest
// that is not the manifest's.
func (r *Registry) LieAboutDigests(on bool) {
	r.mu.Lock()
	r.lieDigest = on
	r.mu.Unlock()
}

// Stall makes every blob download wait until Release (or the client gives
// up), so a test can kill a client mid-install.
func (r *Registry) Stall() {
	r.mu.Lock()
	if r.stall == nil {
		r.stall = make(chan struct{})
		r.stalled = make(chan struct{}, 64)
	}
	r.mu.Unlock()
}

// WaitStalled waits until a download is held by Stall, or timeout.
func (r *Registry) WaitStalled(timeout time.Duration) bool {
	r.mu.Lock()
	ch := r.stalled
	r.mu.Unlock()
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Release lets stalled and future blob downloads through.
func (r *Registry) Release() {
	r.mu.Lock()
	if r.stall != nil {
		close(r.stall)
		r.stall = nil
	}
	r.mu.Unlock()
}

// TamperAll tampers with every blob that is not a manifest or the empty
// config, returning how many.
func (r *Registry) TamperAll() int {
	var ds []string
	r.mu.Lock()
	for d, b := range r.blobs {
		if _, isManifest := r.mtypes[d]; !isManifest && len(b) > 2 {
			ds = append(ds, d)
		}
	}
	r.mu.Unlock()
	for _, d := range ds {
		r.TamperBlob(d)
	}
	return len(ds)
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func errJSON(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": code, "message": msg}}})
}

func (r *Registry) authorized(w http.ResponseWriter, req *http.Request) bool {
	switch r.auth {
	case Basic:
		u, p, ok := req.BasicAuth()
		if ok && u == r.user && p == r.pass {
			return true
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="registrytest"`)
	case Bearer:
		if t, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok && r.tokens[t] {
			return true
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="registrytest",scope="repository:*:pull,push"`, r.srv.URL))
	default:
		return true
	}
	errJSON(w, http.StatusUnauthorized, "UNAUTHORIZED", "authentication required")
	return false
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	stall, stalled := r.stall, r.stalled
	r.mu.Unlock()
	if stall != nil && req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/sha256:") {
		select {
		case stalled <- struct{}{}:
		default:
		}
		select {
		case <-stall:
		case <-req.Context().Done():
			return
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failing {
		errJSON(w, http.StatusServiceUnavailable, "UNAVAILABLE", "registry is unhealthy")
		return
	}
	p := req.URL.Path
	if p == "/token" {
		u, pw, ok := req.BasicAuth()
		if !ok || u != r.user || pw != r.pass {
			errJSON(w, http.StatusUnauthorized, "UNAUTHORIZED", "bad credentials")
			return
		}
		r.nextID++
		t := "tok" + strconv.Itoa(r.nextID)
		r.tokens[t] = true
		json.NewEncoder(w).Encode(map[string]string{"token": t, "access_token": t})
		return
	}
	if !strings.HasPrefix(p, "/v2/") {
		http.NotFound(w, req)
		return
	}
	if !r.authorized(w, req) {
		return
	}
	rest := strings.TrimPrefix(p, "/v2/")
	switch {
	case rest == "":
		w.WriteHeader(http.StatusOK)
	case rest == "_catalog":
		var repos []string
		for k := range r.manifests {
			repos = append(repos, k)
		}
		sort.Strings(repos)
		json.NewEncoder(w).Encode(map[string]any{"repositories": repos})
	case strings.HasSuffix(rest, "/tags/list"):
		repo := strings.TrimSuffix(rest, "/tags/list")
		tags, ok := r.manifests[repo]
		if !ok {
			errJSON(w, http.StatusNotFound, "NAME_UNKNOWN", "repository unknown")
			return
		}
		var out []string
		for t := range tags {
			if !strings.HasPrefix(t, "sha256:") {
				out = append(out, t)
			}
		}
		sort.Strings(out)
		json.NewEncoder(w).Encode(map[string]any{"name": repo, "tags": out})
	case strings.Contains(rest, "/manifests/"):
		i := strings.LastIndex(rest, "/manifests/")
		r.manifest(w, req, rest[:i], rest[i+len("/manifests/"):])
	case strings.Contains(rest, "/blobs/uploads/"):
		i := strings.LastIndex(rest, "/blobs/uploads/")
		r.upload(w, req, rest[:i], rest[i+len("/blobs/uploads/"):])
	case strings.Contains(rest, "/blobs/"):
		i := strings.LastIndex(rest, "/blobs/")
		r.blob(w, req, rest[i+len("/blobs/"):])
	default:
		http.NotFound(w, req)
	}
}

func (r *Registry) manifest(w http.ResponseWriter, req *http.Request, repo, ref string) {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		d := ref
		if !strings.HasPrefix(ref, "sha256:") {
			d = r.manifests[repo][ref]
		}
		b, ok := r.blobs[d]
		if d == "" || !ok {
			errJSON(w, http.StatusNotFound, "MANIFEST_UNKNOWN", "manifest unknown")
			return
		}
		shown := d
		if r.lieDigest {
			shown = digestOf(append([]byte("lie"), b...))
		}
		w.Header().Set("Content-Type", r.mtypes[d])
		w.Header().Set("Docker-Content-Digest", shown)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if req.Method == http.MethodGet {
			w.Write(b)
		}
	case http.MethodPut:
		b, err := io.ReadAll(io.LimitReader(req.Body, 4<<20))
		if err != nil {
			errJSON(w, http.StatusBadRequest, "MANIFEST_INVALID", err.Error())
			return
		}
		var m struct {
			Config    struct{ Digest string }   `json:"config"`
			Layers    []struct{ Digest string } `json:"layers"`
			Manifests []struct{ Digest string } `json:"manifests"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			errJSON(w, http.StatusBadRequest, "MANIFEST_INVALID", err.Error())
			return
		}
		refs := m.Layers
		if m.Manifests == nil {
			refs = append(refs, struct{ Digest string }{m.Config.Digest})
		}
		// An index (the referrers tag schema's) names manifests, which are
		// kept beside the blobs.
		for _, l := range append(refs, m.Manifests...) {
			if _, ok := r.blobs[l.Digest]; !ok {
				errJSON(w, http.StatusBadRequest, "MANIFEST_BLOB_UNKNOWN", l.Digest)
				return
			}
		}
		d := digestOf(b)
		r.blobs[d] = b
		r.mtypes[d] = req.Header.Get("Content-Type")
		if r.manifests[repo] == nil {
			r.manifests[repo] = map[string]string{}
		}
		r.manifests[repo][ref] = d
		r.manifests[repo][d] = d
		w.Header().Set("Docker-Content-Digest", d)
		w.WriteHeader(http.StatusCreated)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (r *Registry) blob(w http.ResponseWriter, req *http.Request, d string) {
	b, ok := r.blobs[d]
	if !ok {
		errJSON(w, http.StatusNotFound, "BLOB_UNKNOWN", "blob unknown")
		return
	}
	w.Header().Set("Docker-Content-Digest", d)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Header().Set("Content-Type", "application/octet-stream")
	if req.Method == http.MethodGet {
		w.Write(b)
	}
}

func (r *Registry) upload(w http.ResponseWriter, req *http.Request, repo, id string) {
	switch {
	case req.Method == http.MethodPost && id == "":
		r.nextID++
		u := "u" + strconv.Itoa(r.nextID)
		r.uploads[u] = repo
		w.Header().Set("Location", "/v2/"+repo+"/blobs/uploads/"+u)
		w.WriteHeader(http.StatusAccepted)
	case req.Method == http.MethodPut:
		if _, ok := r.uploads[id]; !ok {
			errJSON(w, http.StatusNotFound, "BLOB_UPLOAD_UNKNOWN", id)
			return
		}
		delete(r.uploads, id)
		b, err := io.ReadAll(req.Body)
		if err != nil {
			errJSON(w, http.StatusBadRequest, "BLOB_UPLOAD_INVALID", err.Error())
			return
		}
		want := req.URL.Query().Get("digest")
		if digestOf(b) != want {
			errJSON(w, http.StatusBadRequest, "DIGEST_INVALID", "digest does not match content")
			return
		}
		r.blobs[want] = b
		w.Header().Set("Docker-Content-Digest", want)
		w.WriteHeader(http.StatusCreated)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}
