package sign

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cosign runs the real cosign CLI (MUR_TEST_COSIGN names the binary; make
// test-cosign builds it from github.com/sigstore/cosign/v2 and sets it),
// offline: no Fulcio, no Rekor, no TUF fetch.
func cosign(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Getenv("MUR_TEST_COSIGN"), args...)
	cmd.Dir = dir
	// An empty password for cosign's encrypted key; no home of ours.
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD=", "HOME="+dir, "TUF_ROOT="+filepath.Join(dir, "tuf"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestCosignInterop: cosign verify-blob accepts the bundle mur writes for
// a package, with mur's public key, and refuses it for other bytes; mur
// verifies the bundle cosign sign-blob --key writes (offline, no tlog
// upload) with cosign's public key, and refuses it for other bytes.
func TestCosignInterop(t *testing.T) {
	if os.Getenv("MUR_TEST_COSIGN") == "" {
		t.Skip("MUR_TEST_COSIGN names no cosign binary (make test-cosign builds one)")
	}
	dir := t.TempDir()
	blob := filepath.Join(dir, "tool-0.1.0.mur.zip")
	data := []byte("the .mur.zip bytes")
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.mur.zip")
	if err := os.WriteFile(other, []byte("other bytes"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("cosign verifies mur's bundle", func(t *testing.T) {
		priv, pub := pair(t, dir, "ana")
		b, err := Sign(priv, digestOf(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mur.bundle"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		// cosign wants a trusted root for a new-format bundle even with
		// --key; an empty one keeps it offline (it would fetch Sigstore's
		// public root over TUF), and the key is all that is checked.
		root := `{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1","tlogs":[],"certificateAuthorities":[],"ctlogs":[],"timestampAuthorities":[]}`
		if err := os.WriteFile(filepath.Join(dir, "trusted_root.json"), []byte(root), 0o644); err != nil {
			t.Fatal(err)
		}
		verify := []string{"verify-blob", "--key", pub.Path, "--bundle", "mur.bundle", "--new-bundle-format", "--insecure-ignore-tlog=true", "--trusted-root", "trusted_root.json"}
		if out := cosign(t, dir, append(verify, blob)...); !strings.Contains(out, "Verified OK") {
			t.Fatalf("cosign verify-blob: %s", out)
		}
		cmd := exec.Command(os.Getenv("MUR_TEST_COSIGN"), append(verify, other)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Fatalf("cosign verified mur's bundle over other bytes:\n%s", out)
		}
	})

	t.Run("mur verifies cosign's bundle", func(t *testing.T) {
		cosign(t, dir, "generate-key-pair")
		cosign(t, dir, "sign-blob", "--key", "cosign.key", "--bundle", "cosign.bundle", "--new-bundle-format", "--tlog-upload=false", "--yes", blob)
		b, err := os.ReadFile(filepath.Join(dir, "cosign.bundle"))
		if err != nil {
			t.Fatal(err)
		}
		pub, err := LoadPublic(filepath.Join(dir, "cosign.pub"))
		if err != nil {
			t.Fatal(err)
		}
		v, err := Verify(b, digestOf(data), []*PublicKey{pub})
		if err != nil {
			t.Fatalf("cosign's bundle refused: %v\n%s", err, b)
		}
		if v.Key != pub.ID {
			t.Fatalf("verified by %s, want %s", v.Key, pub.ID)
		}
		if _, err := Verify(b, digestOf([]byte("other bytes")), []*PublicKey{pub}); err == nil {
			t.Fatal("cosign's bundle verified for other bytes")
		}
	})
}
