package sign

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
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

// localCA is a CertificateProvider standing in for Fulcio: a CA made in
// the test issues the signing key a short-lived code-signing certificate,
// so sigstore-go writes a keyless bundle (verificationMaterial.certificate).
type localCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func (ca localCA) GetCertificate(_ context.Context, kp sgsign.Keypair, _ *sgsign.CertificateProviderOptions) ([]byte, error) {
	tmpl := &x509.Certificate{
		SerialNumber:   big.NewInt(2),
		NotBefore:      time.Now().Add(-time.Minute),
		NotAfter:       time.Now().Add(10 * time.Minute),
		KeyUsage:       x509.KeyUsageDigitalSignature,
		ExtKeyUsage:    []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		EmailAddresses: []string{"ana@example.com"},
	}
	return x509.CreateCertificate(rand.Reader, tmpl, ca.cert, kp.GetPublicKey(), ca.key)
}

func newLocalCA(t *testing.T) localCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test fulcio"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return localCA{cert, key}
}

// keylessBundle is a keyless bundle sigstore-go writes over data, its
// certificate issued by a local CA.
func keylessBundle(t *testing.T, data []byte) []byte {
	t.Helper()
	priv, _ := pair(t, t.TempDir(), "ephemeral")
	pb, err := sgsign.Bundle(&sgsign.PlainData{Data: data}, keypair{priv}, sgsign.BundleOptions{CertificateProvider: newLocalCA(t)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// A keyless bundle is refused by name (ErrKeyless), not as malformed, even
// when its signing key is one mur trusts: mur verifies no certificate.
func TestKeylessBundleRefusedByName(t *testing.T) {
	pkg := []byte("the .mur.zip bytes")
	raw := keylessBundle(t, pkg)
	_, pub := pair(t, t.TempDir(), "ana")
	_, err := Verify(raw, digestOf(pkg), []*PublicKey{pub})
	if !errors.Is(err, ErrKeyless) || errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "keyless bundles are not verified by this mur") {
		t.Fatalf("keyless bundle: %v, want ErrKeyless\n%s", err, raw)
	}
}
