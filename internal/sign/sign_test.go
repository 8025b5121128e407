package sign

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func pair(t testing.TB, dir, name string) (*PrivateKey, *PublicKey) {
	t.Helper()
	privPath, pubPath, id, err := Generate(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := LoadPrivate(privPath)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := LoadPublic(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	if priv.ID != id || pub.ID != id {
		t.Fatalf("ids differ: generate %s, private %s, public %s", id, priv.ID, pub.ID)
	}
	if fi, _ := os.Stat(privPath); fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode %v, want 0600", fi.Mode().Perm())
	}
	return priv, pub
}

func TestSignVerify(t *testing.T) {
	dir := t.TempDir()
	priv, pub := pair(t, dir, "ana")
	_, other := pair(t, dir, "bob")
	pkg := []byte("the .mur.zip bytes")
	d := digestOf(pkg)
	b, err := Sign(priv, d)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Verify(b, d, []*PublicKey{other, pub})
	if err != nil {
		t.Fatalf("signed bundle refused: %v", err)
	}
	if v.Key != pub.ID || v.Bundle != digestOf(b) {
		t.Fatalf("verified %+v, want key %s bundle %s", v, pub.ID, digestOf(b))
	}

	if _, err := Verify(b, digestOf([]byte("other bytes")), []*PublicKey{pub}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bundle over other bytes: %v, want ErrInvalid", err)
	}
	if _, err := Verify(b, d, []*PublicKey{other}); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("untrusted key: %v, want ErrUntrusted", err)
	}
	// A signature altered in the bundle, the digest left alone.
	var raw map[string]any
	json.Unmarshal(b, &raw)
	ms := raw["messageSignature"].(map[string]any)
	sig := []byte(ms["signature"].(string))
	sig[10] ^= 1
	if sig[10] == '=' || sig[10] == '+' {
		sig[10] = 'A'
	}
	ms["signature"] = string(sig)
	bad, _ := json.Marshal(raw)
	if _, err := Verify(bad, d, []*PublicKey{pub}); !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrMalformed) {
		t.Fatalf("altered signature: %v, want refused", err)
	}
	// A forger who swaps the digest in a bundle signed by the trusted key.
	ms["signature"] = raw["messageSignature"].(map[string]any)["signature"]
	json.Unmarshal(b, &raw)
	raw["messageSignature"].(map[string]any)["messageDigest"].(map[string]any)["digest"] = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	swapped, _ := json.Marshal(raw)
	if _, err := Verify(swapped, "sha256:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", []*PublicKey{pub}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("digest swapped under a trusted signature: %v, want ErrInvalid", err)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"not json":      `{`,
		"unknown key":   `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","x":1}`,
		"media type":    `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.1+json","verificationMaterial":{"publicKey":{"hint":"k"}},"messageSignature":{"messageDigest":{"algorithm":"SHA2_256","digest":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="},"signature":"AA=="}}`,
		"no hint":       `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{},"messageSignature":{"messageDigest":{"algorithm":"SHA2_256","digest":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="},"signature":"AA=="}}`,
		"dsse":          `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":"k"}}}`,
		"sha512":        `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":"k"}},"messageSignature":{"messageDigest":{"algorithm":"SHA2_512","digest":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="},"signature":"AA=="}}`,
		"empty sig":     `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":"k"}},"messageSignature":{"messageDigest":{"algorithm":"SHA2_256","digest":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}}}`,
		"trailing data": `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":"k"}},"messageSignature":{"messageDigest":{"algorithm":"SHA2_256","digest":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="},"signature":"AA=="}} {}`,
	} {
		if _, err := Parse([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func TestPolicy(t *testing.T) {
	dir := t.TempDir()
	priv, pub := pair(t, dir, "ana")
	_, _ = pair(t, dir, "any")
	p, err := NewPolicy(map[string][]string{"ana": {pub.Path}, AnyScope: {filepath.Join(dir, "any.pub")}}, map[string]string{"ana": "g.yaml", AnyScope: "g.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Demands("ana") || !p.Demands("bob") {
		t.Fatal("a listed scope and * must demand a signature")
	}
	if f, file := p.Field("bob"); f != "trusted_keys.*" || file != "g.yaml" {
		t.Fatalf("bob governed by %s in %s", f, file)
	}
	d := digestOf([]byte("x"))
	b, _ := Sign(priv, d)
	if _, err := p.Check("ana", d, nil); !errors.Is(err, ErrUnsigned) {
		t.Fatalf("no bundles: %v", err)
	}
	if _, err := p.Check("ana", d, [][]byte{[]byte("junk"), b}); err != nil {
		t.Fatalf("a good bundle after a bad one: %v", err)
	}
	if _, err := p.Check("bob", d, [][]byte{b}); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("ana's key under bob's (*) policy: %v", err)
	}
	var none *Policy
	if none.Demands("ana") {
		t.Fatal("no policy demands nothing")
	}
	if _, err := NewPolicy(map[string][]string{"ana": {filepath.Join(dir, "missing.pub")}}, nil); !errors.Is(err, ErrKey) {
		t.Fatalf("missing key file: %v", err)
	}
	if _, err := NewPolicy(map[string][]string{"ana": {filepath.Join(dir, "ana.key")}}, nil); !errors.Is(err, ErrKey) {
		t.Fatalf("a private key as trusted: %v", err)
	}
}

func TestGenerateRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	pair(t, dir, "ana")
	if _, _, _, err := Generate(dir, "ana"); !errors.Is(err, ErrKey) {
		t.Fatalf("second generate: %v", err)
	}
	if _, _, _, err := Generate(dir, "../x"); !errors.Is(err, ErrKey) {
		t.Fatalf("bad name: %v", err)
	}
}

// FuzzVerify: whatever the bytes, Verify never panics, and nothing but a
// bundle signed by the trusted key verifies.
func FuzzVerify(f *testing.F) {
	dir := f.TempDir()
	priv, pub := pair(f, dir, "k")
	d := digestOf([]byte("pkg"))
	good, _ := Sign(priv, d)
	f.Add(good)
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"certificate":{"rawBytes":"MIIB"}},"messageSignature":{"messageDigest":{"algorithm":"SHA2_256","digest":"AA=="},"signature":"MEUC"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Verify(b, d, []*PublicKey{pub})
		if err != nil {
			return
		}
		bd, perr := Parse(b)
		if perr != nil || !pub.Named(bd.KeyHint()) || v.Key != pub.ID {
			t.Fatalf("verified a bundle Parse refuses or that names another key: %v", perr)
		}
	})
}

// cosign sign-blob --key names its key by the same sha256 in standard
// base64 (cosign's MakeProtobufBundle); mur reads that hint too.
func TestBase64KeyHint(t *testing.T) {
	dir := t.TempDir()
	priv, pub := pair(t, dir, "ana")
	_, bob := pair(t, dir, "bob")
	d := digestOf([]byte("pkg"))
	raw, err := Sign(priv, d)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := hex.DecodeString(strings.TrimPrefix(pub.ID, "sha256:"))
	b64 := base64.StdEncoding.EncodeToString(sum)
	raw = []byte(strings.Replace(string(raw), `"hint":"`+pub.ID+`"`, `"hint":"`+b64+`"`, 1))
	if !strings.Contains(string(raw), b64) {
		t.Fatal("hint not rewritten")
	}
	if v, err := Verify(raw, d, []*PublicKey{bob, pub}); err != nil || v.Key != pub.ID {
		t.Fatalf("base64 hint: %+v, %v", v, err)
	}
	if _, err := Verify(raw, d, []*PublicKey{bob}); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("base64 hint of an untrusted key: %v", err)
	}
}
