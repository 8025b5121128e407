package sign

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgsign "github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"
)

// The bundles mur writes are Sigstore's: sigstore-go, the library cosign
// verifies bundles with, verifies them with the public key alone (no
// transparency log, no timestamps: WithNoObserverTimestamps is its mode
// for long-lived keys), and mur verifies what sigstore-go's signer makes
// with the same key. These tests use sigstore-go only as a test
// dependency: mur's binary does not link it (docs/RATIONALE.md).

func sigstoreVerifier(t *testing.T, pub *PublicKey) *verify.Verifier {
	t.Helper()
	sv, err := signature.LoadECDSAVerifier(pub.Key, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	tm := root.NewTrustedPublicKeyMaterialFromMapping(map[string]*root.ExpiringKey{pub.ID: root.NewExpiringKey(sv, time.Time{}, time.Time{})})
	v, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSigstoreGoVerifiesOurBundle(t *testing.T) {
	priv, pub := pair(t, t.TempDir(), "ana")
	pkg := []byte("the .mur.zip bytes")
	sum := sha256.Sum256(pkg)
	raw, err := Sign(priv, digestOf(pkg))
	if err != nil {
		t.Fatal(err)
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		t.Fatalf("sigstore-go does not read our bundle: %v\n%s", err, raw)
	}
	v := sigstoreVerifier(t, pub)
	if _, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", sum[:]), verify.WithKey())); err != nil {
		t.Fatalf("sigstore-go refuses our bundle: %v\n%s", err, raw)
	}
	other := sha256.Sum256([]byte("tampered"))
	if _, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", other[:]), verify.WithKey())); err == nil {
		t.Fatal("sigstore-go accepted our bundle for other bytes")
	}
}

// keypair is sigstore-go's signer interface over a mur key.
type keypair struct{ k *PrivateKey }

func (p keypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}
func (p keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}
func (p keypair) GetHint() []byte                { return []byte(p.k.ID) }
func (p keypair) GetKeyAlgorithm() string        { return "ECDSA" }
func (p keypair) GetPublicKey() crypto.PublicKey { return &p.k.Key.PublicKey }
func (p keypair) GetPublicKeyPem() (string, error) {
	der, err := x509.MarshalPKIXPublicKey(&p.k.Key.PublicKey)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), err
}
func (p keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	d := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, p.k.Key, d[:])
	return sig, d[:], err
}

func TestWeVerifySigstoreGoBundle(t *testing.T) {
	priv, pub := pair(t, t.TempDir(), "ana")
	pkg := []byte("the .mur.zip bytes")
	pb, err := sgsign.Bundle(&sgsign.PlainData{Data: pkg}, keypair{priv}, sgsign.BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Verify(raw, digestOf(pkg), []*PublicKey{pub})
	if err != nil {
		t.Fatalf("sigstore-go's bundle refused: %v\n%s", err, raw)
	}
	if got.Key != pub.ID {
		t.Fatalf("verified by %s, want %s", got.Key, pub.ID)
	}
	if _, err := Verify(raw, digestOf([]byte("tampered")), []*PublicKey{pub}); err == nil {
		t.Fatal("sigstore-go's bundle verified for other bytes")
	}
}
