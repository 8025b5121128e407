// Package sign signs and verifies artifacts as Sigstore bundles (v0.3,
// JSON) holding a message signature: an ECDSA P-256 signature over the
// .mur.zip's SHA-256 digest, made with a local key pair (no Fulcio, no
// Rekor), the public key named by its id in the bundle's
// verificationMaterial.publicKey.hint. sigstore-go's verifier reads these
// bundles (TestSigstoreGoVerifiesOurBundle); the format is written here
// with the standard library because importing sigstore-go into mur cost
// every command its package inits (docs/RATIONALE.md, "Signed artifacts").
package sign

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// BundleMediaType is the Sigstore bundle's media type: the bundle's own
// mediaType field, and the OCI artifact type and layer media type a
// signature travels under as a referrer of the artifact's manifest (as
// cosign's --new-bundle-format attaches bundles).
const BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// maxBundle bounds a bundle read from a store or registry.
const maxBundle = 64 << 10

// Error kinds of verification.
var (
	// ErrMalformed: the bytes are not a bundle this package reads.
	ErrMalformed = errors.New("malformed signature bundle")
	// ErrUntrusted: the bundle names a key that is not trusted.
	ErrUntrusted = errors.New("signature by an untrusted key")
	// ErrInvalid: the bundle's signature does not verify, or it signs
	// other bytes than the artifact's.
	ErrInvalid = errors.New("signature does not verify")
	// ErrKey: a key file cannot be read as a key of the kind expected.
	ErrKey = errors.New("unusable key")
	// ErrKeyless: the bundle is a keyless (Fulcio certificate) signature,
	// which mur does not verify: no trust root is configured for it.
	ErrKeyless = errors.New("keyless bundles are not verified by this mur")
)

// PublicKey is a trusted ECDSA P-256 public key with its id.
type PublicKey struct {
	ID   string
	Key  *ecdsa.PublicKey
	Path string // the file it was read from, for messages
}

// Named reports whether a bundle's key hint names k: mur writes its id
// (sha256:<hex>), cosign sign-blob --key the same sha256 in standard
// base64.
func (k *PublicKey) Named(hint string) bool {
	if hint == k.ID {
		return true
	}
	sum, err := hex.DecodeString(strings.TrimPrefix(k.ID, "sha256:"))
	return err == nil && hint == base64.StdEncoding.EncodeToString(sum)
}

// PrivateKey signs; ID is its public key's id.
type PrivateKey struct {
	ID  string
	Key *ecdsa.PrivateKey
}

// KeyID is sha256:<hex> of the public key's DER SubjectPublicKeyInfo, the
// hint a bundle carries.
func KeyID(pub *ecdsa.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrKey, err)
	}
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Generate makes a P-256 key pair at dir/name.key (PKCS#8 PEM, mode 0600)
// and dir/name.pub (PKIX PEM), refusing to overwrite either.
func Generate(dir, name string) (priv, pub, id string, err error) {
	if !keyName.MatchString(name) {
		return "", "", "", fmt.Errorf("%w: key name %q: use letters, digits, '.', '_' and '-'", ErrKey, name)
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", "", fmt.Errorf("generate key: %w", err)
	}
	pk8, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", "", "", fmt.Errorf("generate key: %w", err)
	}
	spki, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return "", "", "", fmt.Errorf("generate key: %w", err)
	}
	if id, err = KeyID(&k.PublicKey); err != nil {
		return "", "", "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", "", fmt.Errorf("generate key: %w", err)
	}
	priv, pub = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	for _, p := range []string{priv, pub} {
		if _, err := os.Lstat(p); err == nil {
			return "", "", "", fmt.Errorf("%w: %s exists; choose another name or remove it first", ErrKey, p)
		}
	}
	if err := writeNew(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk8}), 0o600); err != nil {
		return "", "", "", err
	}
	if err := writeNew(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki}), 0o644); err != nil {
		os.Remove(priv)
		return "", "", "", err
	}
	return priv, pub, id, nil
}

var keyName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func writeNew(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// pemBlock reads the one PEM block of type want in path.
func pemBlock(path, want string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != want {
		return nil, fmt.Errorf("%w: %s holds no PEM %q block (mur key generate writes NAME.key and NAME.pub)", ErrKey, path, want)
	}
	return blk.Bytes, nil
}

// LoadPrivate reads a PKCS#8 PEM ECDSA P-256 private key.
func LoadPrivate(path string) (*PrivateKey, error) {
	der, err := pemBlock(path, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKey, path, err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: %s is not an ECDSA P-256 key", ErrKey, path)
	}
	id, err := KeyID(&ek.PublicKey)
	if err != nil {
		return nil, err
	}
	return &PrivateKey{ID: id, Key: ek}, nil
}

// LoadPublic reads a PKIX PEM ECDSA P-256 public key (what cosign and
// openssl write too).
func LoadPublic(path string) (*PublicKey, error) {
	der, err := pemBlock(path, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKey, path, err)
	}
	ek, ok := k.(*ecdsa.PublicKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: %s is not an ECDSA P-256 public key", ErrKey, path)
	}
	id, err := KeyID(ek)
	if err != nil {
		return nil, err
	}
	return &PublicKey{ID: id, Key: ek, Path: path}, nil
}

// Bundle is the part of a Sigstore bundle v0.3 (protobuf-specs
// dev.sigstore.bundle.v1.Bundle, in its JSON mapping) that a key-signed
// message signature uses. []byte fields are base64, as protojson writes
// them.
type Bundle struct {
	MediaType            string               `json:"mediaType"`
	VerificationMaterial verificationMaterial `json:"verificationMaterial"`
	MessageSignature     *messageSignature    `json:"messageSignature"`
}

type verificationMaterial struct {
	PublicKey *struct {
		Hint string `json:"hint"`
	} `json:"publicKey"`
	TlogEntries               []json.RawMessage `json:"tlogEntries"`
	TimestampVerificationData *json.RawMessage  `json:"timestampVerificationData,omitempty"`
	// A keyless bundle carries the signer's Fulcio certificate in one of
	// these instead of a public key hint; read only to refuse it by name.
	Certificate          *json.RawMessage `json:"certificate,omitempty"`
	X509CertificateChain *json.RawMessage `json:"x509CertificateChain,omitempty"`
}

type messageSignature struct {
	MessageDigest struct {
		Algorithm string `json:"algorithm"`
		Digest    []byte `json:"digest"`
	} `json:"messageDigest"`
	Signature []byte `json:"signature"`
}

// KeyHint is the id of the key the bundle says signed it.
func (b *Bundle) KeyHint() string { return b.VerificationMaterial.PublicKey.Hint }

// Sign makes the bundle of digest (sha256:<hex>, the .mur.zip's) signed
// by k.
func Sign(k *PrivateKey, digest string) ([]byte, error) {
	sum, err := digestBytes(digest)
	if err != nil {
		return nil, err
	}
	sig, err := ecdsa.SignASN1(rand.Reader, k.Key, sum)
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", digest, err)
	}
	b := Bundle{MediaType: BundleMediaType, MessageSignature: &messageSignature{Signature: sig}}
	b.VerificationMaterial.PublicKey = &struct {
		Hint string `json:"hint"`
	}{k.ID}
	b.VerificationMaterial.TlogEntries = []json.RawMessage{}
	b.MessageSignature.MessageDigest.Algorithm = "SHA2_256"
	b.MessageSignature.MessageDigest.Digest = sum
	return json.Marshal(b)
}

func digestBytes(d string) ([]byte, error) {
	h, ok := strings.CutPrefix(d, "sha256:")
	sum, err := hex.DecodeString(h)
	if !ok || err != nil || len(sum) != sha256.Size {
		return nil, fmt.Errorf("%w: digest %q is not sha256:<64 hex>", ErrMalformed, d)
	}
	return sum, nil
}

// Parse decodes a bundle strictly: the v0.3 media type, a public-key
// hint, a SHA2_256 message signature; unknown keys refused.
func Parse(data []byte) (*Bundle, error) {
	if len(data) > maxBundle {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrMalformed, len(data), maxBundle)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b Bundle
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: data after the bundle", ErrMalformed)
	}
	switch vm := b.VerificationMaterial; {
	case vm.Certificate != nil || vm.X509CertificateChain != nil:
		return nil, fmt.Errorf("%w: it carries a signing certificate (Fulcio, with Rekor entries) where mur reads a public key hint; sign with a key (mur publish --sign, or cosign sign-blob --key)", ErrKeyless)
	case b.MediaType != BundleMediaType:
		return nil, fmt.Errorf("%w: mediaType %q, want %s", ErrMalformed, b.MediaType, BundleMediaType)
	case b.VerificationMaterial.PublicKey == nil || b.VerificationMaterial.PublicKey.Hint == "":
		return nil, fmt.Errorf("%w: no verificationMaterial.publicKey.hint (mur verifies key-signed bundles only)", ErrMalformed)
	case b.MessageSignature == nil:
		return nil, fmt.Errorf("%w: no messageSignature", ErrMalformed)
	case b.MessageSignature.MessageDigest.Algorithm != "SHA2_256" || len(b.MessageSignature.MessageDigest.Digest) != sha256.Size:
		return nil, fmt.Errorf("%w: messageDigest is not a SHA2_256 digest", ErrMalformed)
	case len(b.MessageSignature.Signature) == 0:
		return nil, fmt.Errorf("%w: empty signature", ErrMalformed)
	}
	return &b, nil
}

// Verified is what a verification established: the trusted key that
// signed, and the sha256 of the bundle that says so.
type Verified struct {
	Key    string
	Bundle string
}

// Verify checks that bundle is a signature of digest by one of trusted.
// It refuses a malformed bundle (ErrMalformed), one naming no trusted key
// (ErrUntrusted), and one whose signature fails or covers other bytes
// (ErrInvalid).
func Verify(bundle []byte, digest string, trusted []*PublicKey) (Verified, error) {
	b, err := Parse(bundle)
	if err != nil {
		return Verified{}, err
	}
	want, err := digestBytes(digest)
	if err != nil {
		return Verified{}, err
	}
	var key *PublicKey
	for _, k := range trusted {
		if k.Named(b.KeyHint()) {
			key = k
			break
		}
	}
	if key == nil {
		return Verified{}, fmt.Errorf("%w: signed by %s", ErrUntrusted, b.KeyHint())
	}
	if !bytes.Equal(b.MessageSignature.MessageDigest.Digest, want) {
		return Verified{}, fmt.Errorf("%w: it signs sha256:%x, the artifact is %s", ErrInvalid, b.MessageSignature.MessageDigest.Digest, digest)
	}
	if !ecdsa.VerifyASN1(key.Key, want, b.MessageSignature.Signature) {
		return Verified{}, fmt.Errorf("%w: the signature over %s does not verify with key %s (%s)", ErrInvalid, digest, key.ID, key.Path)
	}
	sum := sha256.Sum256(bundle)
	return Verified{Key: key.ID, Bundle: "sha256:" + hex.EncodeToString(sum[:])}, nil
}
