package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/registrytest"
)

func pkg(t testing.TB, name, version string, extra ...artifact.Entry) ([]byte, Meta) {
	t.Helper()
	r, err := artifact.ParseFullName(name)
	if err != nil {
		t.Fatal(err)
	}
	ents := append([]artifact.Entry{{Path: "murmur.yaml", Data: fmt.Appendf(nil, "name: %s\nversion: %q\nruntime: tool\nrequires_files: [tool.wasm]\n", r.Name, version)},
		{Path: "tool.wasm", Data: []byte("\x00asm murmur:tool/run@0.1.0 " + version)}}, extra...)
	b, err := artifact.Pack(ents)
	if err != nil {
		t.Fatal(err)
	}
	return b, Meta{Name: name, Version: version, Runtime: "tool", Execution: "wasm", Platform: "any", WIT: []string{"murmur:tool/run@0.1.0"}, Description: "A tool."}
}

func ref(s string) artifact.Ref {
	r, err := artifact.ParseRef(s)
	if err != nil {
		panic(err)
	}
	return r
}

func TestLayoutPutFetch(t *testing.T) {
	ctx := context.Background()
	l := NewLayout("global", t.TempDir())
	b, m := pkg(t, "ana/tool", "1.0.0")
	d, err := l.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	if err != nil || d != artifact.Digest(b) {
		t.Fatalf("Put = %s, %v", d, err)
	}
	// Idempotent, and a second version lists newest first.
	l.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	b2, m2 := pkg(t, "ana/tool", "1.10.0")
	l.Put(ctx, ref("ana/tool@1.10.0"), m2, b2)
	f, err := l.Fetch(ctx, ref("ana/tool@1.0.0"))
	if err != nil || f.Digest != d || string(f.Data) != string(b) || f.Meta.Description != "A tool." {
		t.Fatalf("Fetch = %+v, %v", f, err)
	}
	vs, err := l.Versions(ctx, "ana/tool")
	if err != nil || len(vs) != 2 || vs[0].Version != "1.10.0" {
		t.Fatalf("Versions = %+v, %v", vs, err)
	}
	for _, f := range []string{"oci-layout", "index.json"} {
		if _, err := os.Stat(filepath.Join(l.Root(), f)); err != nil {
			t.Errorf("not an OCI layout: %v", err)
		}
	}
	if _, err := l.Fetch(ctx, ref("ana/tool@9.9.9")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	// Tamper with the package blob on disk.
	p, _ := l.blobPath(d)
	os.WriteFile(p, append(b, 'x'), 0o644)
	if _, err := l.Fetch(ctx, ref("ana/tool@1.0.0")); !errors.Is(err, ErrDigest) {
		t.Fatalf("tampered blob: %v", err)
	}
}

func newReg(t *testing.T) (*registrytest.Registry, *Registry) {
	t.Helper()
	srv := registrytest.New()
	t.Cleanup(srv.Close)
	r, err := NewRegistry("test", config.Registry{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return srv, r
}

func TestRegistryPushPull(t *testing.T) {
	ctx := context.Background()
	srv, r := newReg(t)
	b, m := pkg(t, "ana/tool", "1.0.0")
	d, err := r.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.Fetch(ctx, ref("ana/tool@1.0.0"))
	if err != nil || f.Digest != d || f.Meta.WIT[0] != "murmur:tool/run@0.1.0" {
		t.Fatalf("Fetch = %+v, %v", f, err)
	}
	all, err := r.List(ctx)
	if err != nil || len(all) != 1 || all[0].Name != "ana/tool" {
		t.Fatalf("List = %+v, %v", all, err)
	}
	if _, err := r.Fetch(ctx, ref("ana/tool@2.0.0")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing tag: %v", err)
	}
	if _, err := r.Fetch(ctx, ref("ana/other@1.0.0")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing repo: %v", err)
	}

	srv.LieAboutDigests(true)
	if _, err := r.Fetch(ctx, ref("ana/tool@1.0.0")); !errors.Is(err, ErrDigest) {
		t.Fatalf("lying digest: %v", err)
	}
	srv.LieAboutDigests(false)
	srv.TamperBlob(d)
	if _, err := r.Fetch(ctx, ref("ana/tool@1.0.0")); !errors.Is(err, ErrDigest) {
		t.Fatalf("tampered blob: %v", err)
	}
	srv.Fail(true)
	if _, err := r.Fetch(ctx, ref("ana/tool@1.0.0")); !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("unhealthy: %v", err)
	}
	srv.Close()
	if _, err := r.Fetch(ctx, ref("ana/tool@1.0.0")); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("down: %v", err)
	}
}

func TestRegistryAuth(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []registrytest.Auth{registrytest.Basic, registrytest.Bearer} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			srv := registrytest.New()
			defer srv.Close()
			srv.RequireAuth(mode, "ana", "s3cret")
			good, _ := NewRegistry("test", config.Registry{URL: srv.URL(), Username: "ana", Password: "s3cret"})
			bad, _ := NewRegistry("test", config.Registry{URL: srv.URL(), Username: "ana", Password: "wrong"})
			none, _ := NewRegistry("test", config.Registry{URL: srv.URL()})
			b, m := pkg(t, "ana/tool", "1.0.0")
			if _, err := good.Put(ctx, ref("ana/tool@1.0.0"), m, b); err != nil {
				t.Fatal(err)
			}
			if _, err := good.Fetch(ctx, ref("ana/tool@1.0.0")); err != nil {
				t.Fatal(err)
			}
			for _, r := range []*Registry{bad, none} {
				_, err := r.Fetch(ctx, ref("ana/tool@1.0.0"))
				if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "registries.test") {
					t.Fatalf("bad credentials: %v", err)
				}
			}
		})
	}
}

func TestRegistryRefusesPlainHTTPElsewhere(t *testing.T) {
	if _, err := NewRegistry("x", config.Registry{URL: "http://registry.example.com"}); err == nil {
		t.Fatal("plain http to a remote host accepted")
	}
	if _, err := NewRegistry("x", config.Registry{URL: "http://registry.example.com", PlainHTTP: true}); err != nil {
		t.Fatal(err)
	}
}

func TestCompareVersions(t *testing.T) {
	order := []string{"zz", "0.9.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "1.0.0", "1.2.0", "1.10.0"}
	for i := range order {
		for j := range order {
			got := compareVersions(order[i], order[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if (got < 0) != (want < 0) || (got > 0) != (want > 0) {
				t.Errorf("compare(%s, %s) = %d, want sign %d", order[i], order[j], got, want)
			}
		}
	}
}

func TestNewestFits(t *testing.T) {
	cands := []Meta{
		{Name: "a/t", Version: "3.0.0", WIT: []string{"murmur:tool/run@0.2.0"}, Platform: "any"},
		{Name: "a/t", Version: "2.5.0", Platform: "plan9/mips"},
		{Name: "a/t", Version: "2.0.0", WIT: []string{"murmur:tool/run@0.1.0"}, Platform: "any"},
		{Name: "a/t", Version: "1.0.0", Platform: HostPlatform()},
	}
	m, ok := Newest(cands)
	if !ok || m.Version != "2.0.0" {
		t.Fatalf("Newest = %+v", m)
	}
	err := CheckFit(cands[0], cands)
	if !errors.Is(err, ErrWITLevel) || !strings.Contains(err.Error(), "a/t@2.0.0") || !strings.Contains(err.Error(), "murmur:tool@0.1.0") {
		t.Fatalf("CheckFit = %v", err)
	}
	if code, _ := CodeOf(err); code != "E-WIT-LEVEL-001" {
		t.Fatalf("code = %s", code)
	}
}

func TestRegistryNamespace(t *testing.T) {
	ctx := context.Background()
	srv := registrytest.New()
	defer srv.Close()
	r, _ := NewRegistry("ns", config.Registry{URL: srv.URL(), Namespace: "/my-org/"})
	other, _ := NewRegistry("all", config.Registry{URL: srv.URL()})
	b, m := pkg(t, "ana/tool", "1.0.0")
	if _, err := r.Put(ctx, ref("ana/tool@1.0.0"), m, b); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Fetch(ctx, ref("ana/tool@1.0.0")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("stored outside the namespace: %v", err)
	}
	all, err := r.List(ctx)
	if err != nil || len(all) != 1 || all[0].Name != "ana/tool" {
		t.Fatalf("List = %+v, %v", all, err)
	}
	// Without the namespace, my-org/ana/tool is not a <scope>/<name>.
	if all, _ := other.List(ctx); len(all) != 0 {
		t.Fatalf("unnamespaced List = %+v", all)
	}
}

func TestIndexRecordAndSearch(t *testing.T) {
	ctx := context.Background()
	l := NewLayout("global", t.TempDir())
	for _, v := range []string{"1.0.0", "1.2.0"} {
		b, m := pkg(t, "ana/tool", v)
		m.Description = "Searches the web " + v + ". More text."
		l.Put(ctx, ref("ana/tool@"+v), m, b)
	}
	idx, errs := Index(ctx, []Source{l})
	if len(errs) != 0 || len(idx) != 1 || idx[0].Version != "1.2.0" || idx[0].Description != "Searches the web 1.2.0." {
		t.Fatalf("Index = %+v %v", idx, errs)
	}
	md := t.TempDir()
	if got, err := LoadIndex(md); err != nil || got != nil {
		t.Fatalf("no index recorded: %v %v", got, err)
	}
	if err := RecordIndex(md, idx); err != nil {
		t.Fatal(err)
	}
	got, err := LoadIndex(md)
	if err != nil || len(got) != 1 || got[0] != idx[0] {
		t.Fatalf("LoadIndex = %+v, %v", got, err)
	}
	if len(Search(got, "WEB ana")) != 1 || len(Search(got, "web nothing")) != 0 {
		t.Fatal("search")
	}
}

func TestRegistryToken(t *testing.T) {
	ctx := context.Background()
	srv := registrytest.New()
	defer srv.Close()
	srv.RequireAuth(registrytest.Bearer, "ana", "s3cret")
	srv.AllowToken("pat-123")
	r, _ := NewRegistry("t", config.Registry{URL: srv.URL(), Token: "pat-123"})
	b, m := pkg(t, "ana/tool", "1.0.0")
	if _, err := r.Put(ctx, ref("ana/tool@1.0.0"), m, b); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Fetch(ctx, ref("ana/tool@1.0.0")); err != nil {
		t.Fatal(err)
	}
	bad, _ := NewRegistry("t", config.Registry{URL: srv.URL(), Token: "pat-999"})
	if _, err := bad.Fetch(ctx, ref("ana/tool@1.0.0")); !errors.Is(err, ErrAuth) {
		t.Fatalf("bad token: %v", err)
	}
}
