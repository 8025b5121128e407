package store

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/sign"
	"github.com/murmur/mur/internal/source/sourcetest"
)

// scopeSrc opens scope ana's source at the fake API, as mur install does
// for each run (a fresh client asks the repository's owner again).
func scopeSrc(t *testing.T, srv *sourcetest.Server, repo string) Source {
	t.Helper()
	srcs, err := ScopeSources(map[string]config.ScopeSource{"ana": {Repo: repo, API: srv.URL}})
	if err != nil || len(srcs) != 1 {
		t.Fatalf("ScopeSources = %v, %v", srcs, err)
	}
	return srcs[0]
}

func wantSourceCode(t *testing.T, err error, code diag.Code) {
	t.Helper()
	if got, ok := CodeOf(err); !ok || got != code {
		t.Fatalf("err = %v (code %s), want %s", err, got, code)
	}
}

// mur install from a scope's GitHub source: every check an install makes
// (package, packed manifest, WIT level, signature), the owner id pinned
// and kept, and each refusal with its code, writing nothing.
func TestInstallFromScopeSource(t *testing.T) {
	ctx := context.Background()
	t.Setenv("GITHUB_TOKEN", "")
	srv := sourcetest.New(t)
	srv.AddRepo("ana-org/tools", 4242)
	anaKey, _, policy := keys(t)
	tool10, _ := pkg(t, "ana/tool", "1.0.0")
	bundle, err := sign.Sign(anaKey, artifact.Digest(tool10))
	if err != nil {
		t.Fatal(err)
	}
	tool11, _ := pkg(t, "ana/tool", "1.1.0")
	misfit, _ := pkg(t, "ana/tool", "2.0.0", artifact.Entry{Path: "more.wasm", Data: []byte("\x00asm murmur:tool/run@0.9.0")})
	srv.Publish("ana-org/tools", "v1.0.0", map[string][]byte{"tool-1.0.0.mur.zip": tool10, "tool-1.0.0.mur.zip.sigstore.json": bundle})
	srv.Publish("ana-org/tools", "v1.1.0", map[string][]byte{"tool-1.1.0.mur.zip": tool11})
	srv.Publish("ana-org/tools", "v2.0.0", map[string][]byte{"tool-2.0.0.mur.zip": misfit})
	wrong, _ := pkg(t, "ana/other", "3.0.0")
	srv.Publish("ana-org/tools", "v3.0.0", map[string][]byte{"tool-3.0.0.mur.zip": wrong})
	proj := ProjectAt(t.TempDir())
	os.WriteFile(proj.Dir+"/murmur.yaml", []byte("name: c\n"), 0o644)
	install := func(trust *sign.Policy, refs ...string) ([]Installed, error) {
		in := &Installer{Project: proj, Sources: []Source{proj.Store, scopeSrc(t, srv, "ana-org/tools")}, Check: InstallChecker, Trust: trust}
		var rs []artifact.Ref
		for _, r := range refs {
			rs = append(rs, ref(r))
		}
		return in.Install(ctx, rs)
	}

	// Signed by ana's trusted key: installed, verified, owner pinned.
	got, err := install(policy, "ana/tool@1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	lock, _ := artifact.LoadLock(proj.LockPath())
	pin, _ := lock.Find("ana/tool")
	if got[0].From != "source:ana" || pin.OwnerID != 4242 || pin.From != "source:ana" || pin.Digest != artifact.Digest(tool10) || pin.Verified == nil {
		t.Fatalf("install = %+v, pin = %+v", got, pin)
	}
	// Again: now served by the project store; the pin keeps its owner.
	if got, err = install(policy, "ana/tool@1.0.0"); err != nil || got[0].From != "project" {
		t.Fatalf("reinstall = %+v, %v", got, err)
	}
	lock, _ = artifact.LoadLock(proj.LockPath())
	if pin, _ = lock.Find("ana/tool"); pin.OwnerID != 4242 {
		t.Fatalf("reinstall from the store dropped the owner id: %+v", pin)
	}
	// The newest that fits: 2.0.0 needs WIT the host does not serve, 3.0.0 is another artifact's package.
	got, err = install(nil, "ana/tool@latest")
	if err != nil || got[0].Ref.Version != "1.1.0" {
		t.Fatalf("latest = %+v, %v", got, err)
	}

	refusals := []struct {
		name string
		prep func()
		ref  string
		code diag.Code
		says string
	}{
		{"unsigned where trusted_keys demands a signature", nil, "ana/tool@1.1.0", diag.RegUnsigned, "carries no signature"},
		{"WIT level", nil, "ana/tool@2.0.0", diag.WITLevel, "1.1.0"},
		{"package of another artifact", nil, "ana/tool@3.0.0", CodeMismatch, "ana/other"},
		{"no release", nil, "ana/tool@9.0.0", CodeNotFound, "1.1.0"},
		{"asset missing", func() { srv.Publish("ana-org/tools", "v4.0.0", map[string][]byte{"readme.md": []byte("x")}) }, "ana/tool@4.0.0", diag.RegAsset, "readme.md"},
		{"digest mismatch", func() {
			r := srv.Publish("ana-org/tools", "v5.0.0", map[string][]byte{"tool-5.0.0.mur.zip": tool11})
			r.Assets[0].Digest = artifact.Digest(tool10)
		}, "ana/tool@5.0.0", CodeDigest, "GitHub reports"},
		{"owner changed", func() {
			b, _ := pkg(t, "ana/tool", "6.0.0")
			srv.Publish("ana-org/tools", "v6.0.0", map[string][]byte{"tool-6.0.0.mur.zip": b})
			srv.SetOwner("ana-org/tools", 777)
		}, "ana/tool@6.0.0", diag.RegOwner, "account 777"},
		{"unknown repository", func() { srv.SetOwner("ana-org/tools", 4242) }, "", diag.RegScopeSource, "ana-org/gone"},
		{"network failure", srv.Close, "ana/tool@7.0.0", CodeUnreachable, srv.URL + "/repos/ana-org/tools"},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			if c.prep != nil {
				c.prep()
			}
			before := snapshot(t, proj.Dir)
			var err error
			if c.ref == "" {
				in := &Installer{Project: proj, Sources: []Source{proj.Store, scopeSrc(t, srv, "ana-org/gone")}, Check: InstallChecker}
				_, err = in.Install(ctx, []artifact.Ref{ref("ana/tool@8.0.0")})
			} else {
				trust := (*sign.Policy)(nil)
				if c.code == diag.RegUnsigned {
					trust = policy
				}
				_, err = install(trust, c.ref)
			}
			wantSourceCode(t, err, c.code)
			if !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err = %v, want it to say %q", err, c.says)
			}
			sameTree(t, before, snapshot(t, proj.Dir))
		})
	}
	var d diag.Diagnostic
	srv2 := sourcetest.New(t)
	srv2.AddRepo("ana-org/tools", 777)
	tool60, _ := pkg(t, "ana/tool", "6.0.0")
	srv2.Publish("ana-org/tools", "v6.0.0", map[string][]byte{"tool-6.0.0.mur.zip": tool60})
	in := &Installer{Project: proj, Sources: []Source{scopeSrc(t, srv2, "ana-org/tools")}, Check: InstallChecker}
	if _, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@6.0.0")}); !errors.As(err, &d) || d.Pos.File != proj.LockPath() || !strings.HasSuffix(d.Field, ".owner_id") {
		t.Fatalf("take-over refusal names %s in %s (%v), want murmur.lock's owner_id", d.Field, d.Pos.File, err)
	}
}

// A runtime pull from a scope source (install.from: [stores, sources]):
// a version no store holds is fetched, verified, unpacked and pinned with
// origin runtime and the owner id, and no store gains it; without the
// sources the same pull finds nothing.
func TestPullFromScopeSource(t *testing.T) {
	ctx := context.Background()
	t.Setenv("GITHUB_TOKEN", "")
	srv := sourcetest.New(t)
	srv.AddRepo("ana-org/tools", 4242)
	b, _ := pkg(t, "ana/tool", "1.0.0")
	srv.Publish("ana-org/tools", "v1.0.0", map[string][]byte{"tool-1.0.0.mur.zip": b})
	proj := ProjectAt(t.TempDir())
	global := NewLayout("global", t.TempDir())

	if _, err := Pull(ctx, proj, global, "ana/tool", "1.0.0", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("pull from the stores alone = %v, want not found", err)
	}
	got, err := PullFrom(ctx, proj, global, []Source{scopeSrc(t, srv, "ana-org/tools")}, "ana/tool", "", nil)
	if err != nil || got.Ref.Version != "1.0.0" || got.From != "source:ana" {
		t.Fatalf("PullFrom = %+v, %v", got, err)
	}
	lock, _ := artifact.LoadLock(proj.LockPath())
	if pin, _ := lock.Find("ana/tool"); pin.Origin != artifact.OriginRuntime || pin.OwnerID != 4242 || pin.Digest != artifact.Digest(b) {
		t.Fatalf("pin = %+v", pin)
	}
	for _, s := range []Source{proj.Store, global} {
		if ms, _ := s.List(ctx); len(ms) != 0 {
			t.Fatalf("%s gained %v; a pull from a source writes to no store", s.Name(), ms)
		}
	}
	r, err := UnpackedResolved(got, "tool")
	if err != nil || r.Files["tools/tool/tool.wasm"] == "" || len(r.Manifest) == 0 {
		t.Fatalf("resolved = %+v, %v", r, err)
	}
}
