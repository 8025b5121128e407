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
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/sign"
)

// trustHome points ~ at a fresh directory and returns ana's and bob's key
// pairs (made there) and a function that writes ~/.murmur/config.yaml
// trusting the given public keys for scope ana (none: no trusted_keys).
func trustHome(t *testing.T) (ana, bob *sign.PrivateKey, anaPub, bobPub string, trust func(pubs ...string)) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := filepath.Join(home, ".murmur", "keys")
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
	ana, anaPub = load("ana")
	bob, bobPub = load("bob")
	trust = func(pubs ...string) {
		t.Helper()
		y := "resolution: [project, global]\n"
		if len(pubs) > 0 {
			y += "trusted_keys:\n  ana:\n"
			for _, p := range pubs {
				y += fmt.Sprintf("    - %s\n", p)
			}
		}
		if err := os.WriteFile(filepath.Join(home, ".murmur", "config.yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ana, bob, anaPub, bobPub, trust
}

func wantCode(t *testing.T, err error, code diag.Code) diag.Diagnostic {
	t.Helper()
	var d diag.Diagnostic
	if !errors.As(err, &d) || d.Code != code {
		t.Fatalf("got %v, want %s", err, code)
	}
	return d
}

// A session's pull (store.Pull) applies trusted_keys as mur install does:
// signed by a trusted key it is pinned with its verification; unsigned,
// untrusted and forged artifacts are refused with their codes, writing
// nothing; a scope with no entry pulls unsigned.
func TestPullAppliesTrustedKeys(t *testing.T) {
	ctx := context.Background()
	ana, bob, anaPub, _, trust := trustHome(t)
	trust(anaPub)
	global := GlobalStore(t.TempDir())
	signedSource(t, global, ana, bob)
	proj := ProjectAt(t.TempDir())

	got, err := Pull(ctx, proj, global, "ana/tool", "", nil)
	if err != nil {
		t.Fatalf("pull of a signed artifact: %v", err)
	}
	lock, _ := artifact.LoadLock(proj.LockPath())
	if pin, _ := lock.Find("ana/tool"); pin.Origin != artifact.OriginRuntime || pin.Verified == nil || pin.Verified.Key != ana.ID || pin.Digest != got.Digest {
		t.Fatalf("pin = %+v (verified %+v), want origin runtime and ana's key", pin, pin.Verified)
	}
	for _, c := range []struct {
		name string
		code diag.Code
	}{{"ana/plain", diag.RegUnsigned}, {"ana/other", diag.RegUntrusted}, {"ana/forged", diag.RegSignature}} {
		before := snapshot(t, proj.Dir)
		_, err := Pull(ctx, proj, global, c.name, "1.0.0", nil)
		if d := wantCode(t, err, c.code); d.Field != "trusted_keys.ana" {
			t.Fatalf("%s: refusal names %q, want trusted_keys.ana", c.name, d.Field)
		}
		sameTree(t, before, snapshot(t, proj.Dir))
	}
	if _, err := Pull(ctx, proj, global, "bob/free", "1.0.0", nil); err != nil {
		t.Fatalf("a scope trusted_keys does not name pulls unsigned: %v", err)
	}
}

// A launch re-verifies what murmur.lock says install verified: the kept
// bundle must still sign the staged digest with a key trusted_keys trusts
// today. Each refusal leaves the entry unstaged; restoring the trust
// stages it again. The stamp that spares a launch re-reading the package
// does not spare it the signature check.
func TestLaunchReverifiesSignature(t *testing.T) {
	ctx := context.Background()
	ana, bob, anaPub, bobPub, trust := trustHome(t)
	trust(anaPub)
	src := GlobalStore(t.TempDir())
	signedSource(t, src, ana, bob)
	proj := ProjectAt(t.TempDir())
	policy, err := TrustFor(proj.Dir)
	if err != nil {
		t.Fatal(err)
	}
	in := &Installer{Project: proj, Sources: []Source{proj.Store, src}, Check: InstallChecker, Trust: policy}
	if _, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0"), ref("bob/free@1.0.0")}); err != nil {
		t.Fatal(err)
	}
	lock, _ := artifact.LoadLock(proj.LockPath())
	pin, _ := lock.Find("ana/tool")
	entries := []Entry{{Name: "ana/tool", Version: "1.0.0", Role: "tool"}, {Name: "bob/free", Version: "1.0.0", Role: "tool"}}
	stage := func() (*Resolution, []error) {
		t.Helper()
		res, errs := proj.ResolveEach(ctx, entries)
		if errs[1] != nil {
			t.Fatalf("an unsigned pin of an unnamed scope: %v", errs[1])
		}
		return res, errs
	}
	ok := func() {
		t.Helper()
		if res, errs := stage(); errs[0] != nil || len(res.List) != 2 {
			t.Fatalf("launch of a verified pin: %v", errs[0])
		}
	}
	refused := func(code diag.Code) diag.Diagnostic {
		t.Helper()
		res, errs := stage()
		if _, staged := res.byName["ana/tool"]; staged {
			t.Fatal("an entry whose signature failed was staged")
		}
		return wantCode(t, errs[0], code)
	}
	ok()
	ok() // from the stamp the first launch wrote

	trust(bobPub)
	if d := refused(diag.RegUntrusted); d.Field != "trusted_keys.ana" {
		t.Fatalf("refusal names %q", d.Field)
	}
	trust()
	refused(diag.RegUntrusted)
	trust(bobPub, anaPub)
	ok()

	bundle, err := proj.Store.blobPath(pin.Verified.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	// A bundle changed on disk: another of ana's signatures (of the forged
	// bytes) in its place.
	other, err := sign.Sign(ana, "sha256:"+fmt.Sprintf("%064x", 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{other, orig[:len(orig)-1]} {
		if err := os.WriteFile(bundle, b, 0o644); err != nil {
			t.Fatal(err)
		}
		refused(diag.RegSignature)
	}
	os.Remove(bundle)
	refused(diag.RegSignature)
	if err := os.WriteFile(bundle, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	ok()

	// A package blob changed on disk is refused before its signature is
	// looked at (its bytes no longer hash to the pin).
	blob, _ := proj.Store.blobPath(pin.Digest)
	data, _ := os.ReadFile(blob)
	os.WriteFile(blob, append(data, 0), 0o644)
	if _, errs := stage(); errs[0] == nil {
		t.Fatal("a tampered package blob staged")
	}
}

// BenchmarkStageSigned is launch resolution of one pinned artifact from its
// stamp, with and without a verified: to re-check (config read, key files
// parsed, bundle read and hashed, one ECDSA P-256 verify): what a signed
// pin adds to a launch.
func BenchmarkStageSigned(b *testing.B) {
	ctx := context.Background()
	home := b.TempDir()
	b.Setenv("HOME", home)
	priv, pub, _, err := sign.Generate(filepath.Join(home, ".murmur", "keys"), "ana")
	if err != nil {
		b.Fatal(err)
	}
	key, _ := sign.LoadPrivate(priv)
	os.WriteFile(filepath.Join(home, ".murmur", "config.yaml"), []byte("trusted_keys:\n  ana: ["+pub+"]\n"), 0o644)
	src := GlobalStore(b.TempDir())
	for _, name := range []string{"ana/tool", "bob/tool"} {
		data, m := pkg(b, name, "1.0.0")
		src.Put(ctx, ref(name+"@1.0.0"), m, data)
		bundle, _ := sign.Sign(key, artifact.Digest(data))
		src.AttachSignature(ctx, ref(name+"@1.0.0"), bundle)
	}
	proj := ProjectAt(b.TempDir())
	policy, err := TrustFor(proj.Dir)
	if err != nil {
		b.Fatal(err)
	}
	in := &Installer{Project: proj, Sources: []Source{src}, Trust: policy}
	if _, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0"), ref("bob/tool@1.0.0")}); err != nil {
		b.Fatal(err)
	}
	// The check alone: config and key read, bundle read and hashed, verify.
	b.Run("reverify", func(b *testing.B) {
		lock, _ := artifact.LoadLock(proj.LockPath())
		pin, _ := lock.Find("ana/tool")
		for b.Loop() {
			if err := proj.reverify(ref("ana/tool@1.0.0"), pin, &launchTrust{dir: proj.Dir}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct{ name, entry string }{{"unsigned", "bob/tool"}, {"signed", "ana/tool"}} {
		b.Run(c.name, func(b *testing.B) {
			entries := []Entry{{Name: c.entry, Version: "1.0.0", Role: "tool"}}
			for b.Loop() {
				if _, err := proj.Resolve(ctx, entries); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// keyless is the shape of a keyless bundle (a certificate where mur reads
// a key hint); mur refuses it by its shape, before any verification.
const keyless = `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"certificate":{"rawBytes":"MIIBkzCCATmgAwIBAgIBAjAKBggqhkjOPQQDAjAWMRQwEgYDVQQDEwt0ZXN0IGZ1bGNpbw=="},"tlogEntries":[]},"messageSignature":{"messageDigest":{"algorithm":"SHA2_256","digest":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="},"signature":"MEUCIQ=="}}`

// An artifact whose only signatures are keyless is refused with E-REG-019
// naming it, writing nothing; beside a valid signature by a trusted key,
// the keyless one is passed over.
func TestKeylessSignatureRefused(t *testing.T) {
	ctx := context.Background()
	ana, bob, policy := keys(t)
	src := GlobalStore(t.TempDir())
	for _, c := range []struct {
		name string
		by   *sign.PrivateKey
	}{{"ana/keyless", nil}, {"ana/mixed", bob}, {"ana/both", ana}} {
		data, m := pkg(t, c.name, "1.0.0")
		r := ref(c.name + "@1.0.0")
		src.Put(ctx, r, m, data)
		if err := src.AttachSignature(ctx, r, []byte(keyless)); err != nil {
			t.Fatal(err)
		}
		if c.by != nil {
			b, _ := sign.Sign(c.by, artifact.Digest(data))
			src.AttachSignature(ctx, r, b)
		}
	}
	proj := ProjectAt(t.TempDir())
	in := &Installer{Project: proj, Sources: []Source{src}, Check: InstallChecker, Trust: policy}
	for _, name := range []string{"ana/keyless@1.0.0", "ana/mixed@1.0.0"} {
		before := snapshot(t, proj.Dir)
		_, err := in.Install(ctx, []artifact.Ref{ref(name)})
		d := wantCode(t, err, diag.RegKeyless)
		if d.Field != "trusted_keys.ana" || !strings.Contains(d.Msg, "keyless bundles are not verified by this mur") {
			t.Fatalf("%s: %s at %s", name, d.Msg, d.Field)
		}
		sameTree(t, before, snapshot(t, proj.Dir))
	}
	if _, err := in.Install(ctx, []artifact.Ref{ref("ana/both@1.0.0")}); err != nil {
		t.Fatalf("a keyless bundle beside a trusted key's signature: %v", err)
	}
}
