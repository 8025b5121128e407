package store

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/sign"
)

// signedSource fills src with ana/tool signed by ana's key, ana/plain
// unsigned, ana/other signed by bob's key, and ana/forged whose bytes are
// not the ones ana signed (ana's signature of other bytes attached to
// them, as a tampered payload carrying its original signature looks).
func signedSource(t *testing.T, src Source, anaKey, bobKey *sign.PrivateKey) {
	t.Helper()
	ctx := context.Background()
	put := func(name string, b []byte, m Meta, by *sign.PrivateKey, signed string) {
		t.Helper()
		r := ref(name + "@1.0.0")
		if _, err := src.Put(ctx, r, m, b); err != nil {
			t.Fatal(err)
		}
		if by == nil {
			return
		}
		bundle, err := sign.Sign(by, signed)
		if err != nil {
			t.Fatal(err)
		}
		if err := src.(Signed).AttachSignature(ctx, r, bundle); err != nil {
			t.Fatalf("attach to %s in %s: %v", name, src.Name(), err)
		}
		// Attaching the same bundle again changes nothing.
		if err := src.(Signed).AttachSignature(ctx, r, bundle); err != nil {
			t.Fatal(err)
		}
	}
	b, m := pkg(t, "ana/tool", "1.0.0")
	put("ana/tool", b, m, anaKey, artifact.Digest(b))
	b, m = pkg(t, "ana/plain", "1.0.0")
	put("ana/plain", b, m, nil, "")
	b, m = pkg(t, "ana/other", "1.0.0")
	put("ana/other", b, m, bobKey, artifact.Digest(b))
	orig, _ := pkg(t, "ana/forged", "1.0.0")
	b, m = pkg(t, "ana/forged", "1.0.0", artifact.Entry{Path: "extra.txt", Data: []byte("added after signing")})
	put("ana/forged", b, m, anaKey, artifact.Digest(orig))
	b, m = pkg(t, "bob/free", "1.0.0")
	put("bob/free", b, m, nil, "")
}

func keys(t *testing.T) (ana, bob *sign.PrivateKey, policy *sign.Policy) {
	t.Helper()
	dir := t.TempDir()
	load := func(name string) (*sign.PrivateKey, string) {
		priv, pub, _, err := sign.Generate(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		k, err := sign.LoadPrivate(priv)
		if err != nil {
			t.Fatal(err)
		}
		return k, pub
	}
	ana, anaPub := load("ana")
	bob, _ = load("bob")
	policy, err := sign.NewPolicy(map[string][]string{"ana": {anaPub}}, map[string]string{"ana": "/home/op/.murmur/config.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	return ana, bob, policy
}

// testSignedInstall installs from src under a policy trusting ana's key
// for scope ana: the signed artifact installs and its verification is
// pinned and its signature kept in the project store; unsigned, untrusted
// and forged ones are refused with their codes and write nothing.
func testSignedInstall(t *testing.T, src Source) {
	ctx := context.Background()
	ana, bob, policy := keys(t)
	signedSource(t, src, ana, bob)
	proj := ProjectAt(t.TempDir())
	in := &Installer{Project: proj, Sources: []Source{proj.Store, src}, Check: InstallChecker, Trust: policy}

	got, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0"), ref("bob/free@1.0.0")})
	if err != nil {
		t.Fatalf("signed install: %v", err)
	}
	lock, _ := artifact.LoadLock(proj.LockPath())
	pin, _ := lock.Find("ana/tool")
	if pin.Verified == nil || pin.Verified.Key != ana.ID || pin.Digest != got[0].Digest {
		t.Fatalf("pin of the signed artifact = %+v (verified %+v), want key %s", pin, pin.Verified, ana.ID)
	}
	if free, _ := lock.Find("bob/free"); free.Verified != nil {
		t.Fatalf("a scope with no trusted keys records a verification: %+v", free.Verified)
	}
	kept, err := proj.Store.Signatures(ctx, ref("ana/tool@1.0.0"))
	if err != nil || len(kept) != 1 || artifact.Digest(kept[0]) != pin.Verified.Bundle {
		t.Fatalf("project store signatures = %d, %v; want the verified bundle", len(kept), err)
	}
	// From the project store alone, the kept signature verifies again.
	again := &Installer{Project: proj, Sources: []Source{proj.Store}, Check: InstallChecker, Trust: policy}
	if _, err := again.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")}); err != nil {
		t.Fatalf("reinstall from the project store: %v", err)
	}

	for _, c := range []struct {
		name string
		code diag.Code
	}{
		{"ana/plain@1.0.0", diag.RegUnsigned},
		{"ana/other@1.0.0", diag.RegUntrusted},
		{"ana/forged@1.0.0", diag.RegSignature},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, proj.Dir)
			_, err := in.Install(ctx, []artifact.Ref{ref(c.name)})
			var d diag.Diagnostic
			if !errors.As(err, &d) || d.Code != c.code {
				t.Fatalf("install %s: %v, want %s", c.name, err, c.code)
			}
			if d.Field != "trusted_keys.ana" || d.Pos.File != "/home/op/.murmur/config.yaml" {
				t.Fatalf("refusal names %s in %s, want trusted_keys.ana in the config file", d.Field, d.Pos.File)
			}
			sameTree(t, before, snapshot(t, proj.Dir))
		})
	}
}

func TestSignedInstallFromStore(t *testing.T) {
	testSignedInstall(t, GlobalStore(t.TempDir()))
}

func TestSignedInstallFromRegistry(t *testing.T) {
	_, reg := newReg(t)
	testSignedInstall(t, reg)
}

func TestSignedInstallFromDockerRegistry(t *testing.T) {
	srv := startRealRegistry(t, "", "")
	reg, err := NewRegistry("real", config.Registry{URL: srv.url})
	if err != nil {
		t.Fatal(err)
	}
	testSignedInstall(t, reg)
}

// TestSignaturesIgnoreOtherSubjects: a bundle attached to one artifact is
// never offered for another.
func TestSignaturesIgnoreOtherSubjects(t *testing.T) {
	ctx := context.Background()
	ana, bob, _ := keys(t)
	l := GlobalStore(t.TempDir())
	signedSource(t, l, ana, bob)
	sigs, err := l.Signatures(ctx, ref("ana/plain@1.0.0"))
	if err != nil || len(sigs) != 0 {
		t.Fatalf("unsigned artifact offers %d signatures, %v", len(sigs), err)
	}
	if _, err := os.Stat(l.Root()); err != nil {
		t.Fatal(err)
	}
}
