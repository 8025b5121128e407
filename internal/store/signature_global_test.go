package store

import (
	"context"
	"errors"
	"testing"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
)

// TestSignedInstallGlobal: mur install -g checks signatures too, and the
// global store keeps the verified bundle.
func TestSignedInstallGlobal(t *testing.T) {
	ctx := context.Background()
	ana, bob, policy := keys(t)
	_, reg := newReg(t)
	signedSource(t, reg, ana, bob)
	dst := GlobalStore(t.TempDir())
	in := &Installer{Sources: []Source{reg}, Check: InstallChecker, Trust: policy}
	if _, err := in.InstallTo(ctx, dst, []artifact.Ref{ref("ana/tool@1.0.0")}); err != nil {
		t.Fatal(err)
	}
	if sigs, err := dst.Signatures(ctx, ref("ana/tool@1.0.0")); err != nil || len(sigs) != 1 {
		t.Fatalf("global store signatures = %d, %v", len(sigs), err)
	}
	_, err := in.InstallTo(ctx, dst, []artifact.Ref{ref("ana/plain@1.0.0")})
	if code, _ := CodeOf(err); code != diag.RegUnsigned {
		t.Fatalf("unsigned -g install: %v", err)
	}
	if _, err := dst.Fetch(ctx, ref("ana/plain@1.0.0")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("refused artifact was stored: %v", err)
	}
}
