package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/registrytest"
)

// snapshot lists every file under dir with its bytes, to prove a refusal
// wrote nothing.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func sameTree(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("files changed: %d before, %d after", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("%s changed", k)
		}
	}
}

func setup(t *testing.T) (*registrytest.Registry, *Registry, *Project) {
	t.Helper()
	srv, reg := newReg(t)
	return srv, reg, ProjectAt(t.TempDir())
}

func TestInstallFromRegistry(t *testing.T) {
	ctx := context.Background()
	_, reg, proj := setup(t)
	b, m := pkg(t, "ana/tool", "1.0.0")
	d, _ := reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	in := &Installer{Project: proj, Sources: []Source{proj.Store, reg}, Check: InstallChecker}
	got, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Digest != d || got[0].From != "registry:test" || !got[0].Changed {
		t.Fatalf("Install = %+v", got)
	}
	lock, _ := artifact.LoadLock(proj.LockPath())
	pin, ok := lock.Find("ana/tool")
	if !ok || pin.Digest != d || pin.Origin != artifact.OriginOperator {
		t.Fatalf("pin = %+v", pin)
	}
	if _, err := os.Stat(filepath.Join(got[0].Dir, "tool.wasm")); err != nil {
		t.Fatal(err)
	}
	// Again: now served by the project store, unchanged.
	got, err = in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")})
	if err != nil || got[0].Changed || got[0].From != "project" {
		t.Fatalf("reinstall = %+v, %v", got, err)
	}
	// Launch resolution finds it and answers the manifest interface.
	res, err := proj.Resolve(ctx, []Entry{{Name: "ana/tool", Version: "1.0.0", Role: "tool"}})
	if err != nil {
		t.Fatal(err)
	}
	a, ok := res.Artifact("ana/tool")
	if !ok || a.Name != "tool" || a.RequiresFiles[0] != "tool.wasm" {
		t.Fatalf("Artifact = %+v", a)
	}
	r, _ := res.Get("ana/tool")
	if _, ok := r.Files["tools/tool/tool.wasm"]; !ok {
		t.Fatalf("files = %v", r.Files)
	}
}

func TestInstallRefusalsWriteNothing(t *testing.T) {
	ctx := context.Background()
	driver := func(models string) ([]byte, Meta) {
		b, _ := artifact.Pack([]artifact.Entry{
			{Path: "murmur.yaml", Data: []byte("name: drv\nversion: \"1.0.0\"\nruntime: driver\nrequires_files: [driver.wasm]\nmodels:\n" + models)},
			{Path: "driver.wasm", Data: []byte("wasm")},
		})
		return b, Meta{Name: "ana/drv", Version: "1.0.0", Runtime: "driver", Platform: "any"}
	}
	tests := []struct {
		name  string
		prep  func(t *testing.T, srv *registrytest.Registry, reg *Registry, proj *Project)
		refs  []string
		kind  error
		code  diag.Code
		names string
	}{
		{
			name: "lock pin mismatch",
			prep: func(t *testing.T, srv *registrytest.Registry, reg *Registry, proj *Project) {
				b, m := pkg(t, "ana/tool", "1.0.0")
				reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
				l := &artifact.Lock{}
				l.Upsert(artifact.Pin{Name: "ana/tool", Version: "1.0.0", Digest: "sha256:" + strings.Repeat("0", 64), Origin: "operator"})
				l.Save(proj.LockPath())
			},
			refs: []string{"ana/tool@1.0.0"}, kind: ErrPin, code: CodePin, names: "murmur.lock pins",
		},
		{
			name: "tampered blob",
			prep: func(t *testing.T, srv *registrytest.Registry, reg *Registry, proj *Project) {
				b, m := pkg(t, "ana/tool", "1.0.0")
				d, _ := reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
				srv.TamperBlob(d)
			},
			refs: []string{"ana/tool@1.0.0"}, kind: ErrDigest, code: CodeDigest, names: "ana/tool@1.0.0",
		},
		{
			name: "second artifact missing",
			prep: func(t *testing.T, srv *registrytest.Registry, reg *Registry, proj *Project) {
				b, m := pkg(t, "ana/tool", "1.0.0")
				reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
			},
			refs: []string{"ana/tool@1.0.0", "ana/gone@1.0.0"}, kind: ErrNotFound, code: CodeNotFound, names: "ana/gone@1.0.0",
		},
		{
			name: "malformed models",
			prep: func(t *testing.T, srv *registrytest.Registry, reg *Registry, proj *Project) {
				b, m := driver("  m1:\n    max_output_tokens: 10\n    context_window: 5\n    max_input_tokens: 9\n")
				reg.Put(ctx, ref("ana/drv@1.0.0"), m, b)
			},
			refs: []string{"ana/drv@1.0.0"}, code: "E-REG-011", names: "ana/drv@1.0.0",
		},
		{
			name: "package names another artifact",
			prep: func(t *testing.T, srv *registrytest.Registry, reg *Registry, proj *Project) {
				b, m := pkg(t, "ana/other", "1.0.0")
				m.Name = "ana/tool"
				reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
			},
			refs: []string{"ana/tool@1.0.0"}, kind: ErrMismatch, code: CodeMismatch, names: "other",
		},
		{
			name: "hostile package",
			prep: func(t *testing.T, srv *registrytest.Registry, reg *Registry, proj *Project) {
				var buf bytes.Buffer
				buf.WriteString("not a zip")
				reg.Put(ctx, ref("ana/tool@1.0.0"), Meta{Name: "ana/tool", Version: "1.0.0", Platform: "any"}, buf.Bytes())
			},
			refs: []string{"ana/tool@1.0.0"}, kind: artifact.ErrPackage, code: CodePackage, names: "ana/tool@1.0.0",
		},
		{
			name: "registry down",
			prep: func(t *testing.T, srv *registrytest.Registry, reg *Registry, proj *Project) {
				srv.Close()
			},
			refs: []string{"ana/tool@1.0.0"}, kind: ErrUnreachable, code: CodeUnreachable, names: "registry:test",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reg, proj := setup(t)
			tt.prep(t, srv, reg, proj)
			before := snapshot(t, proj.Dir)
			in := &Installer{Project: proj, Sources: []Source{proj.Store, reg}, Check: InstallChecker}
			var refs []artifact.Ref
			for _, r := range tt.refs {
				refs = append(refs, ref(r))
			}
			_, err := in.Install(ctx, refs)
			if err == nil {
				t.Fatal("install succeeded")
			}
			if tt.kind != nil && !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			if code, _ := CodeOf(err); code != tt.code {
				t.Fatalf("code = %s, want %s (%v)", code, tt.code, err)
			}
			if !strings.Contains(err.Error(), tt.names) {
				t.Fatalf("err %q does not name %q", err, tt.names)
			}
			sameTree(t, before, snapshot(t, proj.Dir))
		})
	}
}

func TestInstallSkipsUnreachableSource(t *testing.T) {
	ctx := context.Background()
	down, _ := newReg(t)
	dead, _ := NewRegistry("dead", config.Registry{URL: down.URL()})
	down.Close()
	_, reg, proj := setup(t)
	b, m := pkg(t, "ana/tool", "1.0.0")
	reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	in := &Installer{Project: proj, Sources: []Source{dead, reg}}
	if _, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")}); err != nil {
		t.Fatal(err)
	}
}

func TestInstallLatestAndWITLevel(t *testing.T) {
	ctx := context.Background()
	_, reg, proj := setup(t)
	for _, v := range []string{"1.0.0", "1.2.0"} {
		b, m := pkg(t, "ana/tool", v)
		reg.Put(ctx, ref("ana/tool@"+v), m, b)
	}
	b, m := pkg(t, "ana/tool", "2.0.0")
	m.WIT = []string{"murmur:tool/run@0.9.0"}
	reg.Put(ctx, ref("ana/tool@2.0.0"), m, b)
	in := &Installer{Project: proj, Sources: []Source{reg}, Check: InstallChecker}
	got, err := in.Install(ctx, []artifact.Ref{{Scope: "ana", Name: "tool", Version: "latest"}})
	if err != nil || got[0].Ref.Version != "1.2.0" {
		t.Fatalf("latest = %+v, %v", got, err)
	}
	_, err = in.Install(ctx, []artifact.Ref{ref("ana/tool@2.0.0")})
	if !errors.Is(err, ErrWITLevel) || !strings.Contains(err.Error(), "ana/tool@1.2.0") {
		t.Fatalf("misfit = %v", err)
	}
}

// A run killed after the store write and before the lock write leaves a
// stored but unpinned package: launch refuses it as not installed, and the
// next install completes.
func TestInterruptedInstallIsConsistent(t *testing.T) {
	ctx := context.Background()
	_, reg, proj := setup(t)
	b, m := pkg(t, "ana/tool", "1.0.0")
	reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	proj.Store.Put(ctx, ref("ana/tool@1.0.0"), m, b) // what the killed run wrote
	os.MkdirAll(filepath.Join(proj.Dir, ".murmur", "unpacked", ".unpack-123"), 0o755)
	entries := []Entry{{Name: "ana/tool", Version: "1.0.0", Role: "tool"}}
	if _, err := proj.Resolve(ctx, entries); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("unpinned resolve = %v", err)
	}
	in := &Installer{Project: proj, Sources: []Source{proj.Store, reg}}
	if _, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")}); err != nil {
		t.Fatal(err)
	}
	if _, err := proj.Resolve(ctx, entries); err != nil {
		t.Fatal(err)
	}
}

func TestResolveRefusesTamperedStore(t *testing.T) {
	ctx := context.Background()
	_, reg, proj := setup(t)
	b, m := pkg(t, "ana/tool", "1.0.0")
	d, _ := reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	in := &Installer{Project: proj, Sources: []Source{reg}}
	in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")})
	entries := []Entry{{Name: "ana/tool", Version: "1.0.0", Role: "tool"}}
	p, _ := proj.Store.blobPath(d)
	os.WriteFile(p, append(b, 'x'), 0o644)
	if _, err := proj.Resolve(ctx, entries); !errors.Is(err, ErrDigest) {
		t.Fatalf("tampered = %v", err)
	}
	// Another version published into the project store under the same
	// tag is not the pinned bytes.
	b2, _ := pkg(t, "ana/tool", "1.0.0", artifact.Entry{Path: "extra", Data: []byte("x")})
	proj.Store.Put(ctx, ref("ana/tool@1.0.0"), m, b2)
	if _, err := proj.Resolve(ctx, entries); !errors.Is(err, ErrPin) {
		t.Fatalf("repinned = %v", err)
	}
	if _, err := proj.Resolve(ctx, []Entry{{Name: "ana/else", Version: "1.0.0"}}); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("absent = %v", err)
	}
}

func TestResolveLocalSources(t *testing.T) {
	ctx := context.Background()
	proj := ProjectAt(t.TempDir())
	os.MkdirAll(filepath.Join(proj.Dir, "skills", "style", "references"), 0o755)
	os.WriteFile(filepath.Join(proj.Dir, "skills", "style", "SKILL.md"), []byte("# style"), 0o644)
	os.WriteFile(filepath.Join(proj.Dir, "skills", "style", "references", "forms.md"), []byte("f"), 0o644)
	os.WriteFile(filepath.Join(proj.Dir, "skills", "one.md"), []byte("# one"), 0o644)
	os.MkdirAll(filepath.Join(proj.Dir, "skills", "empty"), 0o755)
	res, err := proj.Resolve(ctx, []Entry{
		{Name: "style", Role: "skill", Source: "./skills/style/", LocalSource: true},
		{Name: "one", Role: "skill", Source: "skills/one.md", LocalSource: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := res.Get("style")
	if s.Version != "local" || !strings.HasSuffix(s.Files["tools/style/skill.md"], "SKILL.md") || s.Files["tools/style/references/forms.md"] == "" {
		t.Fatalf("style = %+v", s)
	}
	o, _ := res.Get("one")
	if o.Files["tools/one/skill.md"] == "" {
		t.Fatalf("one = %+v", o)
	}
	if a, ok := res.Artifact("one"); !ok || a.Runtime != "skill" {
		t.Fatalf("Artifact(one) = %+v", a)
	}
	if _, err := os.Stat(proj.LockPath()); err == nil {
		t.Fatal("local sources were locked")
	}
	for _, tt := range []struct {
		e    Entry
		code diag.Code
		msg  string
	}{
		{Entry{Name: "t", Role: "tool", Source: "skills/one.md"}, "E-MAN-003", "artifact 't' declares 'source:' but does not declare 'local_source: true' (runtime: tool)"},
		{Entry{Name: "g", Role: "skill", Source: "skills/gone", LocalSource: true}, "E-IO-001", "skill source path not found: "},
		{Entry{Name: "e", Role: "skill", Source: "skills/empty", LocalSource: true}, "E-IO-001", "contains no skill.md"},
	} {
		_, err := proj.Resolve(ctx, []Entry{tt.e})
		var d diag.Diagnostic
		if !errors.As(err, &d) || d.Code != tt.code || !strings.Contains(d.Msg, tt.msg) {
			t.Errorf("%s: err = %v, want %s %q", tt.e.Name, err, tt.code, tt.msg)
		}
	}
}

func TestMaterialize(t *testing.T) {
	ctx := context.Background()
	_, reg, proj := setup(t)
	b, m := pkg(t, "ana/tool", "1.0.0")
	reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	in := &Installer{Project: proj, Sources: []Source{reg}}
	if _, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")}); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(proj.Dir, "skills"), 0o755)
	os.WriteFile(filepath.Join(proj.Dir, "skills", "s.md"), []byte("# s"), 0o755)
	res, err := proj.Resolve(ctx, []Entry{{Name: "ana/tool", Version: "1.0.0", Role: "tool"}, {Name: "s", Role: "skill", Source: "skills/s.md", LocalSource: true}})
	if err != nil {
		t.Fatal(err)
	}
	rt := t.TempDir()
	if err := res.Materialize(rt); err != nil {
		t.Fatal(err)
	}
	for p, mode := range map[string]os.FileMode{"tools/tool/tool.wasm": 0o444, "tools/s/skill.md": 0o444} {
		fi, err := os.Stat(filepath.Join(rt, p))
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v %v", p, fi, err)
		}
	}
	if _, err := os.Stat(filepath.Join(rt, "tools/tool/murmur.yaml")); err == nil {
		t.Error("the artifact's murmur.yaml was staged")
	}
}

// A staged tree changed after install is replaced from the verified
// package at the next resolution.
func TestResolveHealsChangedTree(t *testing.T) {
	ctx := context.Background()
	_, reg, proj := setup(t)
	b, m := pkg(t, "ana/tool", "1.0.0")
	d, _ := reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	in := &Installer{Project: proj, Sources: []Source{reg}}
	in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")})
	dir := proj.UnpackedDir(d)
	wasm := filepath.Join(dir, "tool.wasm")
	orig, _ := os.ReadFile(wasm)
	for name, change := range map[string]func(){
		"edited":  func() { os.WriteFile(wasm, []byte("evil"), 0o644) },
		"added":   func() { os.WriteFile(filepath.Join(dir, "extra"), []byte("x"), 0o644) },
		"removed": func() { os.Remove(wasm) },
	} {
		change()
		if _, err := proj.Resolve(ctx, []Entry{{Name: "ana/tool", Version: "1.0.0"}}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, _ := os.ReadFile(wasm)
		if !bytes.Equal(got, orig) {
			t.Fatalf("%s: tree not restored", name)
		}
		if _, err := os.Stat(filepath.Join(dir, "extra")); err == nil {
			t.Fatalf("%s: extra file survived", name)
		}
	}
	left, _ := filepath.Glob(dir + ".stale-*")
	if len(left) != 0 {
		t.Fatalf("stale trees left: %v", left)
	}
}

// With other bytes under the pinned version in the project store, install
// takes the pinned bytes from a later source and restores the store.
func TestInstallPrefersPinnedBytes(t *testing.T) {
	ctx := context.Background()
	_, reg, proj := setup(t)
	b, m := pkg(t, "ana/tool", "1.0.0")
	d, _ := reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	in := &Installer{Project: proj, Sources: []Source{proj.Store, reg}}
	in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")})
	other, _ := pkg(t, "ana/tool", "1.0.0", artifact.Entry{Path: "extra", Data: []byte("x")})
	proj.Store.Put(ctx, ref("ana/tool@1.0.0"), m, other)
	entries := []Entry{{Name: "ana/tool", Version: "1.0.0"}}
	if _, err := proj.Resolve(ctx, entries); !errors.Is(err, ErrPin) {
		t.Fatalf("before restore: %v", err)
	}
	got, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")})
	if err != nil || got[0].Digest != d || got[0].From != "registry:test" {
		t.Fatalf("restore = %+v, %v", got, err)
	}
	if _, err := proj.Resolve(ctx, entries); err != nil {
		t.Fatal(err)
	}
}
