package source

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v75/github"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/source/sourcetest"
)

func set(srv *sourcetest.Server, scope, repo string) *Set {
	return NewSet(map[string]config.ScopeSource{scope: {Repo: repo, API: srv.URL, TokenEnv: "MUR_TEST_GH_TOKEN"}}, nil)
}

func TestFetchFromRelease(t *testing.T) {
	srv := sourcetest.New(t)
	srv.AddRepo("ana-org/tools", 4242)
	host := runtime.GOOS + "-" + runtime.GOARCH
	srv.Publish("ana-org/tools", "v0.1.0", map[string][]byte{
		"echo-0.1.0.mur.zip":                            []byte("plain"),
		"echo-0.1.0-" + host + ".mur.zip":               []byte("native for this host"),
		"echo-0.1.0-plan9-arm.mur.zip":                  []byte("native elsewhere"),
		"echo-0.1.0-" + host + ".mur.zip.sigstore.json": []byte(`{"bundle":1}`),
		"other-0.1.0.mur.zip":                           []byte("other"),
	})
	srv.Publish("ana-org/tools", "0.2.0", map[string][]byte{"echo-0.2.0.mur.zip": []byte("two")})
	srv.Publish("ana-org/tools", "notes", map[string][]byte{"readme.txt": []byte("x")})
	s := set(srv, "ana", "ana-org/tools")
	ctx := context.Background()

	data, owner, err := s.Fetch(ctx, "ana", "echo", "0.1.0")
	if err != nil || string(data) != "native for this host" || owner != 4242 {
		t.Fatalf("Fetch = %q %d %v; want this host's asset and owner 4242", data, owner, err)
	}
	c, _ := s.Client("ana")
	p, err := c.Fetch(ctx, "echo", "0.1.0")
	if err != nil || p.Platform != runtime.GOOS+"/"+runtime.GOARCH || string(p.Bundle) != `{"bundle":1}` || !strings.HasPrefix(p.URL, srv.URL+"/repos/ana-org/tools/releases/assets/") {
		t.Fatalf("package = %+v %v", p, err)
	}
	if p, err := c.Fetch(ctx, "echo", "0.2.0"); err != nil || string(p.Data) != "two" || p.Platform != "" || p.Bundle != nil {
		t.Fatalf("tag without v: %+v %v", p, err)
	}
	vs, err := c.Versions(ctx, "echo")
	if err != nil || !slices.Equal(vs, []string{"0.2.0", "0.1.0"}) {
		t.Fatalf("versions = %v %v", vs, err)
	}
	list, err := c.List(ctx)
	want := []Released{{"echo", "0.2.0"}, {"echo", "0.1.0"}, {"other", "0.1.0"}}
	slices.SortFunc(list, func(a, b Released) int { return strings.Compare(a.Name+a.Version, b.Name+b.Version) })
	slices.SortFunc(want, func(a, b Released) int { return strings.Compare(a.Name+a.Version, b.Name+b.Version) })
	if err != nil || !slices.Equal(list, want) {
		t.Fatalf("list = %v %v, want %v", list, err, want)
	}
	// The repository is asked for its owner once per client.
	n := 0
	for _, h := range srv.Hits() {
		if h == "/repos/ana-org/tools" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("repository asked %d times, want once: %v", n, srv.Hits())
	}
}

func TestVersionsPaginates(t *testing.T) {
	srv := sourcetest.New(t)
	srv.PerPage = 2
	srv.AddRepo("ana/tools", 7)
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0", "2.0.0", "2.1.0"} {
		srv.Publish("ana/tools", "v"+v, map[string][]byte{"t-" + v + ".mur.zip": []byte(v)})
	}
	c, _ := set(srv, "ana", "ana/tools").Client("ana")
	vs, err := c.Versions(context.Background(), "t")
	if err != nil || len(vs) != 5 || vs[0] != "2.1.0" || vs[4] != "1.0.0" {
		t.Fatalf("versions = %v %v", vs, err)
	}
}

func TestFetchRefusals(t *testing.T) {
	srv := sourcetest.New(t)
	srv.AddRepo("ana/tools", 7)
	rel := srv.Publish("ana/tools", "1.0.0", map[string][]byte{"echo-1.0.0.mur.zip": []byte("real"), "echo-1.0.0-plan9-arm.mur.zip": []byte("x")})
	srv.Publish("ana/tools", "1.1.0", map[string][]byte{"echo-1.1.0-plan9-arm.mur.zip": []byte("x")})
	ctx := context.Background()
	s := set(srv, "ana", "ana/tools")

	if _, _, err := s.Fetch(ctx, "bo", "echo", "1.0.0"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "sources.bo.repo") {
		t.Errorf("no source for the scope: %v", err)
	}
	if _, _, err := set(srv, "ana", "ana/gone").Fetch(ctx, "ana", "echo", "1.0.0"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "ana/gone") {
		t.Errorf("no such repository: %v", err)
	}
	if _, _, err := s.Fetch(ctx, "ana", "echo", "9.9.9"); !errors.Is(err, ErrNotFound) {
		t.Errorf("no release: %v", err)
	}
	if _, _, err := s.Fetch(ctx, "ana", "nope", "1.0.0"); !errors.Is(err, ErrAsset) || !strings.Contains(err.Error(), "echo-1.0.0.mur.zip") {
		t.Errorf("no asset (should list what the release holds): %v", err)
	}
	if _, _, err := s.Fetch(ctx, "ana", "echo", "1.1.0"); !errors.Is(err, ErrAsset) || !strings.Contains(err.Error(), "other platforms") {
		t.Errorf("only other platforms: %v", err)
	}
	for _, a := range rel.Assets {
		if a.Name == "echo-1.0.0.mur.zip" {
			a.Digest = "sha256:" + strings.Repeat("0", 64)
		}
	}
	if _, _, err := s.Fetch(ctx, "ana", "echo", "1.0.0"); !errors.Is(err, ErrDigest) || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("lying digest: %v", err)
	}

	srv.Token = "s3cret"
	if _, _, err := set(srv, "ana", "ana/tools").Fetch(ctx, "ana", "echo", "1.1.0"); !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "MUR_TEST_GH_TOKEN") {
		t.Errorf("no token: %v", err)
	}
	t.Setenv("MUR_TEST_GH_TOKEN", "s3cret")
	for _, a := range rel.Assets {
		a.Digest = ""
	}
	if b, _, err := set(srv, "ana", "ana/tools").Fetch(ctx, "ana", "echo", "1.0.0"); err != nil || string(b) != "real" {
		t.Errorf("with the token, no digest reported: %q %v", b, err)
	}

	srv.Close()
	if _, _, err := set(srv, "ana", "ana/tools").Fetch(ctx, "ana", "echo", "1.0.0"); !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), srv.URL+"/repos/ana/tools") {
		t.Errorf("server down: %v (want the URL named)", err)
	}
	if _, err := New("ana", config.ScopeSource{Repo: "a/b", API: "http://example.com"}, nil); !errors.Is(err, config.ErrConfig) {
		t.Errorf("plain http off loopback: %v", err)
	}
}

func TestAssetArtifact(t *testing.T) {
	for file, want := range map[string]string{
		"echo-1.0.0.mur.zip":                "echo",
		"my-tool-1.0.0.mur.zip":             "my-tool",
		"my-tool-1.0.0-linux-amd64.mur.zip": "my-tool",
		"echo-1.0.0.mur.zip.sigstore.json":  "",
		"echo-1.0.0-linux.mur.zip":          "",
		"1.0.0.mur.zip":                     "",
		"Echo-1.0.0.mur.zip":                "",
	} {
		got, ok := assetArtifact(file, "1.0.0")
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", file, got, ok, want)
		}
	}
}

// FuzzAssetName: asset and tag names come from whoever publishes to the
// repository. Reading them never panics, and an asset read as an
// artifact's names one that is valid, at that version.
func FuzzAssetName(f *testing.F) {
	f.Add("echo-1.0.0.mur.zip", "1.0.0")
	f.Add("my-tool-1.0.0-linux-amd64.mur.zip", "1.0.0")
	f.Add("-1.0.0-a-b.mur.zip", "1.0.0")
	f.Add("a-1-1-1.mur.zip", "1")
	f.Fuzz(func(t *testing.T, file, v string) {
		n, ok := assetArtifact(file, v)
		if !ok {
			return
		}
		if _, err := artifact.ParseFullName("x/" + n); err != nil {
			t.Fatalf("%q at %q read as %q: %v", file, v, n, err)
		}
		if !strings.HasPrefix(file, n+"-"+v) || !strings.HasSuffix(file, ".mur.zip") {
			t.Fatalf("%q at %q read as %q", file, v, n)
		}
		a, _ := pickAsset([]*github.ReleaseAsset{{Name: &file}}, n, v)
		if file == n+"-"+v+".mur.zip" && a == nil {
			t.Fatalf("%q is %s's platform-neutral asset at %s, but not picked", file, n, v)
		}
	})
}
