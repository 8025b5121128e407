package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
)

// The real-registry suite runs against Debian's docker-registry (the CNCF
// distribution registry) on loopback. It is opt-in: MUR_TEST_REGISTRY=1,
// run by `make test-registry`, because it needs the package installed
// (scripts/setup.d/30-registry.sh) and starts processes.

type realRegistry struct {
	url     string
	storage string
	cmd     *exec.Cmd
}

func requireRealRegistry(t testing.TB) {
	t.Helper()
	if os.Getenv("MUR_TEST_REGISTRY") == "" {
		t.Skip("set MUR_TEST_REGISTRY=1 (make test-registry) to run against docker-registry")
	}
	for _, bin := range []string{"docker-registry", "htpasswd"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("MUR_TEST_REGISTRY is set but %s is not installed: run scripts/setup.d/30-registry.sh", bin)
		}
	}
}

// startRealRegistry starts docker-registry on a free loopback port with a
// temporary storage directory; with user set, htpasswd auth.
func startRealRegistry(t testing.TB, user, pass string) *realRegistry {
	t.Helper()
	requireRealRegistry(t)
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := fmt.Sprintf("version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), addr)
	if user != "" {
		hp := filepath.Join(dir, "htpasswd")
		out, err := exec.Command("htpasswd", "-Bbn", user, pass).Output()
		if err != nil {
			t.Fatalf("htpasswd: %v", err)
		}
		os.WriteFile(hp, out, 0o600)
		cfg += fmt.Sprintf("auth:\n  htpasswd:\n    realm: murmur-test\n    path: %s\n", hp)
	}
	cp := filepath.Join(dir, "config.yml")
	os.WriteFile(cp, []byte(cfg), 0o644)
	cmd := exec.Command("docker-registry", "serve", cp)
	// Its log (every 404 a HEAD probe earns) is shown only on failure.
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("docker-registry log:\n%s", log.String())
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &realRegistry{url: "http://" + addr, storage: filepath.Join(dir, "data"), cmd: cmd}
	t.Cleanup(r.stop)
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(r.url + "/v2/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("docker-registry did not answer on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r
}

func (r *realRegistry) stop() {
	if r.cmd.Process != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
	}
}

// tamper flips a byte of the stored blob d in the registry's storage.
func (r *realRegistry) tamper(t *testing.T, d string) {
	hex := strings.TrimPrefix(d, "sha256:")
	p := filepath.Join(r.storage, "docker", "registry", "v2", "blobs", "sha256", hex[:2], hex, "data")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	os.WriteFile(p, b, 0o644)
}

func TestRealRegistry(t *testing.T) {
	ctx := context.Background()
	srv := startRealRegistry(t, "ana", "s3cret")
	reg, err := NewRegistry("real", config.Registry{URL: srv.url, Username: "ana", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	b, m := pkg(t, "ana/tool", "1.0.0")
	d, err := reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	b2, m2 := pkg(t, "ana/tool", "1.1.0")
	if _, err := reg.Put(ctx, ref("ana/tool@1.1.0"), m2, b2); err != nil {
		t.Fatal(err)
	}

	t.Run("pull and install", func(t *testing.T) {
		proj := ProjectAt(t.TempDir())
		in := &Installer{Project: proj, Sources: []Source{proj.Store, reg}, Check: InstallChecker}
		got, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")})
		if err != nil || got[0].Digest != d {
			t.Fatalf("install = %+v, %v", got, err)
		}
		if _, err := proj.Resolve(ctx, []Entry{{Name: "ana/tool", Version: "1.0.0"}}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("versions and catalog", func(t *testing.T) {
		vs, err := reg.Versions(ctx, "ana/tool")
		if err != nil || len(vs) != 2 || vs[0].Version != "1.1.0" {
			t.Fatalf("versions = %+v, %v", vs, err)
		}
		idx, errs := Index(ctx, []Source{reg})
		if len(errs) != 0 || len(idx) != 1 || idx[0].Version != "1.1.0" || idx[0].Description != "A tool." {
			t.Fatalf("index = %+v, %v", idx, errs)
		}
	})
	t.Run("lock pin mismatch", func(t *testing.T) {
		proj := ProjectAt(t.TempDir())
		l := &artifact.Lock{}
		l.Upsert(artifact.Pin{Name: "ana/tool", Version: "1.0.0", Digest: artifact.Digest(b2), Origin: "operator"})
		l.Save(proj.LockPath())
		before := snapshot(t, proj.Dir)
		in := &Installer{Project: proj, Sources: []Source{reg}}
		if _, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")}); !errors.Is(err, ErrPin) {
			t.Fatalf("err = %v", err)
		}
		sameTree(t, before, snapshot(t, proj.Dir))
	})
	t.Run("auth failure", func(t *testing.T) {
		for _, c := range []config.Registry{{URL: srv.url}, {URL: srv.url, Username: "ana", Password: "nope"}} {
			bad, _ := NewRegistry("real", c)
			proj := ProjectAt(t.TempDir())
			in := &Installer{Project: proj, Sources: []Source{bad}}
			_, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")})
			if !errors.Is(err, ErrAuth) {
				t.Fatalf("err = %v, want ErrAuth", err)
			}
			if ents, _ := os.ReadDir(proj.Dir); len(ents) != 0 {
				t.Fatal("a refused install wrote files")
			}
		}
	})
	t.Run("tampered blob", func(t *testing.T) {
		srv.tamper(t, d)
		proj := ProjectAt(t.TempDir())
		in := &Installer{Project: proj, Sources: []Source{reg}}
		_, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")})
		if !errors.Is(err, ErrDigest) {
			t.Fatalf("err = %v, want ErrDigest", err)
		}
		if ents, _ := os.ReadDir(proj.Dir); len(ents) != 0 {
			t.Fatal("a refused install wrote files")
		}
	})
	t.Run("registry down", func(t *testing.T) {
		srv.stop()
		proj := ProjectAt(t.TempDir())
		in := &Installer{Project: proj, Sources: []Source{reg}}
		_, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.1.0")})
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("err = %v, want ErrUnreachable", err)
		}
		if ents, _ := os.ReadDir(proj.Dir); len(ents) != 0 {
			t.Fatal("a refused install wrote files")
		}
	})
}

// TestRealRegistryInstallForms: mur install's forms against docker-registry
// — a bare name takes the newest that fits, -g (InstallTo) fills a store
// with no project and refuses other bytes under a held version, and a
// native payload for another platform needs AnyPlatform
// (--all-platforms).
func TestRealRegistryInstallForms(t *testing.T) {
	ctx := context.Background()
	srv := startRealRegistry(t, "", "")
	reg, err := NewRegistry("real", config.Registry{URL: srv.url})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1.0.0", "1.1.0", "1.10.0-rc.1", "0.9.0"} {
		b, m := pkg(t, "ana/tool", v)
		if _, err := reg.Put(ctx, ref("ana/tool@"+v), m, b); err != nil {
			t.Fatal(err)
		}
	}
	nb, nm := pkg(t, "ana/nat", "1.0.0")
	nm.Execution, nm.Platform = "native", "plan9/mips"
	if _, err := reg.Put(ctx, ref("ana/nat@1.0.0"), nm, nb); err != nil {
		t.Fatal(err)
	}

	t.Run("bare name", func(t *testing.T) {
		proj := ProjectAt(t.TempDir())
		in := &Installer{Project: proj, Sources: []Source{proj.Store, reg}, Check: InstallChecker}
		got, err := in.Install(ctx, []artifact.Ref{{Scope: "ana", Name: "tool"}})
		if err != nil || got[0].Ref.Version != "1.10.0-rc.1" || got[0].Runtime != "tool" {
			t.Fatalf("install ana/tool = %+v, %v", got, err)
		}
	})
	t.Run("global", func(t *testing.T) {
		dst := GlobalStore(t.TempDir())
		in := &Installer{Sources: []Source{reg}, Check: InstallChecker}
		got, err := in.InstallTo(ctx, dst, []artifact.Ref{ref("ana/tool@1.0.0")})
		if err != nil || !got[0].Changed {
			t.Fatalf("install -g = %+v, %v", got, err)
		}
		if f, err := dst.Fetch(ctx, ref("ana/tool@1.0.0")); err != nil || f.Digest != got[0].Digest {
			t.Fatalf("global store holds %v, %v", f, err)
		}
		got, err = in.InstallTo(ctx, dst, []artifact.Ref{ref("ana/tool@1.0.0")})
		if err != nil || got[0].Changed {
			t.Fatalf("again = %+v, %v", got, err)
		}
		other := GlobalStore(t.TempDir())
		ob, om := pkg(t, "ana/tool", "1.1.0", artifact.Entry{Path: "extra.txt", Data: []byte("other bytes")})
		if _, err := other.Put(ctx, ref("ana/tool@1.1.0"), om, ob); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, other.Root())
		if _, err := in.InstallTo(ctx, other, []artifact.Ref{ref("ana/tool@1.1.0")}); !errors.Is(err, ErrPublished) {
			t.Fatalf("other bytes under a held version: %v", err)
		}
		sameTree(t, before, snapshot(t, other.Root()))
	})
	t.Run("all platforms", func(t *testing.T) {
		proj := ProjectAt(t.TempDir())
		in := &Installer{Project: proj, Sources: []Source{reg}, Check: InstallChecker}
		for _, r := range []artifact.Ref{ref("ana/nat@1.0.0"), {Scope: "ana", Name: "nat"}} {
			if _, err := in.Install(ctx, []artifact.Ref{r}); !errors.Is(err, ErrWITLevel) || !strings.Contains(err.Error(), "plan9/mips") {
				t.Fatalf("%s for another platform: %v", r, err)
			}
		}
		if ents, _ := os.ReadDir(proj.Dir); len(ents) != 0 {
			t.Fatal("a refused install wrote files")
		}
		in.AnyPlatform = true
		got, err := in.Install(ctx, []artifact.Ref{{Scope: "ana", Name: "nat"}})
		if err != nil || got[0].Ref.Version != "1.0.0" {
			t.Fatalf("--all-platforms = %+v, %v", got, err)
		}
	})
}
