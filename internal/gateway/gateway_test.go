package gateway

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeCreds is an in-memory ~/.murmur/config.yaml credentials section whose
// values can change while a gateway runs, as `mur config set -g` would.
type fakeCreds struct {
	mu sync.Mutex
	m  map[string]string
}

func (f *fakeCreds) Credential(name string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.m[name]
	return v, ok, nil
}

func (f *fakeCreds) set(name, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v == "" {
		delete(f.m, name)
		return
	}
	f.m[name] = v
}

type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *seen) last() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

// upstream records each request and answers with status(req).
func upstream(t *testing.T, status func(*http.Request) int) (*httptest.Server, *seen) {
	t.Helper()
	s := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		s.mu.Lock()
		s.reqs = append(s.reqs, r)
		s.mu.Unlock()
		code := status(r)
		if code >= 300 && code < 400 {
			w.Header().Set("Location", "https://elsewhere.example/steal")
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte("body:" + string(body)))
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func bearer() Auth { return Auth{Header: "Authorization", Value: "Bearer {key}"} }

func noenv(string) string { return "" }

func gatewayReq(t *testing.T, path string, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+Address+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestReaddressKeepsPathQueryAndAttachesOneHeader(t *testing.T) {
	srv, s := upstream(t, func(*http.Request) int { return 200 })
	creds := &fakeCreds{m: map[string]string{"API_KEY": "k-config"}}
	g, res, err := New(Spec{Artifact: "murmur/driver-openai", Endpoint: mustURL(t, srv.URL+"/v1"), Auth: bearer(), KeyRef: "API_KEY"}, creds, noenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != SourceConfig || res.EnvWarning {
		t.Fatalf("resolution = %+v, want config without warning", res)
	}
	req := gatewayReq(t, "/v1/chat/completions?stream=true", `{"x":1}`)
	req.Header.Add("authorization", "Bearer guest-forged")
	req.Header.Add("AUTHORIZATION", "Bearer guest-forged-2")
	resp, err := g.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != `body:{"x":1}` {
		t.Fatalf("body = %q", b)
	}
	got := s.last()
	if got.URL.Path != "/v1/chat/completions" || got.URL.RawQuery != "stream=true" {
		t.Fatalf("upstream saw %s?%s", got.URL.Path, got.URL.RawQuery)
	}
	if v := got.Header.Values("Authorization"); len(v) != 1 || v[0] != "Bearer k-config" {
		t.Fatalf("Authorization headers = %q, want exactly [Bearer k-config]", v)
	}
}

func TestKeylessRemovesHeaderAndAttachesNone(t *testing.T) {
	srv, s := upstream(t, func(*http.Request) int { return 200 })
	g, res, err := New(Spec{Artifact: "murmur/driver-openai", Endpoint: mustURL(t, srv.URL), Auth: Auth{Header: "x-api-key", Value: "{key}"}, Keyless: true}, nil, noenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != SourceKeyless {
		t.Fatalf("source = %s", res.Source)
	}
	req := gatewayReq(t, "/", "")
	req.Header.Set("X-Api-Key", "guest-set")
	if _, err := g.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if v := s.last().Header.Values("X-Api-Key"); len(v) != 0 {
		t.Fatalf("keyless upstream saw x-api-key %q", v)
	}
	if g.Record()["credential_source"] != "keyless" {
		t.Fatalf("record = %v", g.Record())
	}
}

func TestRotatedKeyUsedOnNextRequest(t *testing.T) {
	srv, s := upstream(t, func(*http.Request) int { return 200 })
	creds := &fakeCreds{m: map[string]string{"K": "one"}}
	g, _, err := New(Spec{Artifact: "a/b", Endpoint: mustURL(t, srv.URL), Auth: bearer(), KeyRef: "K"}, creds, noenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one", "two"} {
		creds.set("K", want)
		if _, err := g.RoundTrip(gatewayReq(t, "/", "")); err != nil {
			t.Fatal(err)
		}
		if got := s.last().Header.Get("Authorization"); got != "Bearer "+want {
			t.Fatalf("Authorization = %q, want Bearer %s", got, want)
		}
	}
}

func TestSingleRetryAfter401WithRotatedKey(t *testing.T) {
	creds := &fakeCreds{m: map[string]string{"K": "old"}}
	var calls atomic.Int32
	srv, s := upstream(t, func(r *http.Request) int {
		n := calls.Add(1)
		if n == 1 {
			// The operator rotates the key while the first request is in flight.
			creds.set("K", "new")
			return 401
		}
		if r.Header.Get("Authorization") == "Bearer new" {
			return 200
		}
		return 401
	})
	g, _, err := New(Spec{Artifact: "a/b", Endpoint: mustURL(t, srv.URL), Auth: bearer(), KeyRef: "K"}, creds, noenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rejected []string
	g.OnReject(func(a string) { rejected = append(rejected, a) })
	resp, err := g.RoundTrip(gatewayReq(t, "/v1/messages", `{"m":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || calls.Load() != 2 {
		t.Fatalf("status %d after %d calls, want 200 after 2", resp.StatusCode, calls.Load())
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != `body:{"m":1}` {
		t.Fatalf("retried body = %q, want the original body replayed", b)
	}
	if len(rejected) != 0 {
		t.Fatalf("rejected = %v", rejected)
	}
	if got := s.last().Header.Get("Authorization"); got != "Bearer new" {
		t.Fatalf("retry used %q", got)
	}
}

func TestUnchanged401IsNotRetriedAndIsReported(t *testing.T) {
	var calls atomic.Int32
	srv, _ := upstream(t, func(*http.Request) int { calls.Add(1); return 401 })
	creds := &fakeCreds{m: map[string]string{"K": "bad"}}
	g, _, err := New(Spec{Artifact: "murmur/driver-anthropic", Endpoint: mustURL(t, srv.URL), Auth: bearer(), KeyRef: "K"}, creds, noenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rejected []string
	g.OnReject(func(a string) { rejected = append(rejected, a) })
	resp, err := g.RoundTrip(gatewayReq(t, "/", "x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 401 || calls.Load() != 1 {
		t.Fatalf("status %d after %d calls, want 401 after exactly 1", resp.StatusCode, calls.Load())
	}
	if len(rejected) != 1 || rejected[0] != "murmur/driver-anthropic" {
		t.Fatalf("rejected = %v", rejected)
	}
}

func TestRedirectIsReturnedNotFollowed(t *testing.T) {
	var calls atomic.Int32
	srv, _ := upstream(t, func(*http.Request) int { calls.Add(1); return 302 })
	creds := &fakeCreds{m: map[string]string{"K": "secret"}}
	g, _, err := New(Spec{Artifact: "a/b", Endpoint: mustURL(t, srv.URL), Auth: bearer(), KeyRef: "K"}, creds, noenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.RoundTrip(gatewayReq(t, "/", ""))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 302 || resp.Header.Get("Location") == "" || calls.Load() != 1 {
		t.Fatalf("status %d, location %q, %d calls: want the 302 itself", resp.StatusCode, resp.Header.Get("Location"), calls.Load())
	}
}

func TestResolutionOrder(t *testing.T) {
	env := func(k string) string {
		if k == "K" {
			return "from-env"
		}
		return ""
	}
	u := mustURL(t, "http://127.0.0.1:1")
	cases := []struct {
		name    string
		spec    Spec
		creds   *fakeCreds
		getenv  func(string) string
		source  Source
		warn    bool
		wantErr error
	}{
		{"config wins over env", Spec{KeyRef: "K"}, &fakeCreds{m: map[string]string{"K": "c"}}, env, SourceConfig, false, nil},
		{"empty config falls to env", Spec{KeyRef: "K"}, &fakeCreds{m: map[string]string{"K": ""}}, env, SourceEnv, true, nil},
		{"env only", Spec{KeyRef: "K"}, &fakeCreds{m: map[string]string{}}, env, SourceEnv, true, nil},
		{"neither", Spec{KeyRef: "K"}, &fakeCreds{m: map[string]string{}}, noenv, "", false, ErrUnresolved},
		{"literal", Spec{Literal: "sk-lit"}, nil, noenv, SourceLiteral, true, nil},
		{"keyless", Spec{Keyless: true}, nil, noenv, SourceKeyless, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.spec.Artifact, c.spec.Endpoint, c.spec.Auth = "a/b", u, bearer()
			var creds Credentials
			if c.creds != nil {
				creds = c.creds
			}
			_, res, err := New(c.spec, creds, c.getenv, nil)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				if !strings.Contains(err.Error(), "credentials.K") || !strings.Contains(err.Error(), "environment") {
					t.Fatalf("error does not name both places: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Source != c.source || res.EnvWarning != c.warn {
				t.Fatalf("resolution = %+v, want %s warn=%v", res, c.source, c.warn)
			}
		})
	}
}

func TestRemovedConfigKeyFallsBackToLaunchEnvOrFails(t *testing.T) {
	srv, s := upstream(t, func(*http.Request) int { return 200 })
	creds := &fakeCreds{m: map[string]string{"K": "cfg"}}
	g, _, err := New(Spec{Artifact: "a/b", Endpoint: mustURL(t, srv.URL), Auth: bearer(), KeyRef: "K"}, creds, noenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	creds.set("K", "")
	_, err = g.RoundTrip(gatewayReq(t, "/", ""))
	if !errors.Is(err, ErrNoKey) {
		t.Fatalf("err = %v, want ErrNoKey", err)
	}
	if len(s.reqs) != 0 {
		t.Fatalf("upstream was reached without a key")
	}
}

func TestEnvAndRecordNeverCarryTheKey(t *testing.T) {
	creds := &fakeCreds{m: map[string]string{"K": "super-secret"}}
	g, _, err := New(Spec{Artifact: "a/b", Endpoint: mustURL(t, "https://api.example.com/v1/"), Auth: bearer(), KeyRef: "K", Metered: true}, creds, noenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := g.Env(true)
	if env[EndpointEnv] != "http://127.0.0.1:9/v1" || env[InferenceEnv] != env[EndpointEnv] {
		t.Fatalf("env = %v", env)
	}
	if _, ok := g.Env(false)[InferenceEnv]; ok {
		t.Fatalf("non-inference artifact got %s", InferenceEnv)
	}
	for k, v := range g.Record() {
		if s, ok := v.(string); ok && strings.Contains(s, "super-secret") {
			t.Fatalf("record field %s carries the key", k)
		}
	}
}

func TestRefusesRequestsNotAddressedToGateway(t *testing.T) {
	g, _, err := New(Spec{Artifact: "a/b", Endpoint: mustURL(t, "http://127.0.0.1:1"), Auth: bearer(), Keyless: true}, nil, noenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "http://127.0.0.1:10/", nil)
	if _, err := g.RoundTrip(req); err == nil {
		t.Fatal("request to another address was carried")
	}
}

func TestPrivateCAUpstreamFailsAndReceivesNothing(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	creds := &fakeCreds{m: map[string]string{"K": "k"}}
	g, _, err := New(Spec{Artifact: "a/b", Endpoint: mustURL(t, srv.URL), Auth: bearer(), KeyRef: "K"}, creds, noenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.RoundTrip(gatewayReq(t, "/", "")); err == nil {
		t.Fatal("private-CA upstream accepted")
	}
	if calls.Load() != 0 {
		t.Fatal("private-CA upstream received a request")
	}
}
