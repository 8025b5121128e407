//go:build linux

package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/murmur/mur/internal/artifact"
)

// stampedProject installs ana/tool and resolves it once after the racy
// window has passed, so the resolution verifies in full and stamps.
func stampedProject(t *testing.T) (*Project, string, []byte) {
	t.Helper()
	old := racyMargin
	racyMargin = 50 * time.Millisecond
	t.Cleanup(func() { racyMargin = old })
	ctx := context.Background()
	_, reg, proj := setup(t)
	b, m := pkg(t, "ana/tool", "1.0.0")
	d, _ := reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	in := &Installer{Project: proj, Sources: []Source{reg}}
	if _, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := proj.Resolve(ctx, toolEntry); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stampPath(proj.UnpackedDir(d))); err != nil {
		t.Fatalf("no stamp after a full verification: %v", err)
	}
	return proj, d, b
}

var toolEntry = []Entry{{Name: "ana/tool", Version: "1.0.0", Role: "tool"}}

// A stamped tree resolves without reading the package, to the same
// Resolved as a full verification.
func TestStampResolvesLikeFullVerification(t *testing.T) {
	proj, d, _ := stampedProject(t)
	fast := proj.stamped(ref("ana/tool@1.0.0"), d, "tool")
	if fast == nil {
		t.Fatal("unchanged stamped tree not trusted")
	}
	os.Remove(stampPath(proj.UnpackedDir(d)))
	full, err := proj.Resolve(context.Background(), toolEntry)
	if err != nil {
		t.Fatal(err)
	}
	slow := full.List[0]
	if fast.Name != slow.Name || fast.Version != slow.Version || fast.Role != slow.Role || fast.Digest != slow.Digest ||
		fast.Dir != slow.Dir || !bytes.Equal(fast.Manifest, slow.Manifest) || len(fast.Files) != len(slow.Files) {
		t.Fatalf("stamped %+v\nfull %+v", fast, slow)
	}
	for k, v := range slow.Files {
		if fast.Files[k] != v {
			t.Fatalf("file %s: stamped %q, full %q", k, fast.Files[k], v)
		}
	}
}

// Stats taken within the racy window are never stamped.
func TestStampNotWrittenWhenRacy(t *testing.T) {
	old := racyMargin
	racyMargin = time.Hour
	t.Cleanup(func() { racyMargin = old })
	ctx := context.Background()
	_, reg, proj := setup(t)
	b, m := pkg(t, "ana/tool", "1.0.0")
	d, _ := reg.Put(ctx, ref("ana/tool@1.0.0"), m, b)
	in := &Installer{Project: proj, Sources: []Source{reg}}
	in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")})
	for range 2 {
		if _, err := proj.Resolve(ctx, toolEntry); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(stampPath(proj.UnpackedDir(d))); err == nil {
		t.Fatal("racy stats were stamped")
	}
}

// Every change to a stamped tree or blob voids the stamp; the next
// resolution verifies in full, restores the tree or refuses the blob.
func TestStampVoidedByChanges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(t *testing.T, dir, blob string, b []byte)
		wantErr error
	}{
		{"tree file edited, same size", func(t *testing.T, dir, _ string, _ []byte) {
			wasm := filepath.Join(dir, "tool.wasm")
			orig, _ := os.ReadFile(wasm)
			os.WriteFile(wasm, bytes.Repeat([]byte{'e'}, len(orig)), 0o644)
		}, nil},
		{"tree file added", func(t *testing.T, dir, _ string, _ []byte) {
			os.WriteFile(filepath.Join(dir, "extra"), []byte("x"), 0o644)
		}, nil},
		{"tree file removed", func(t *testing.T, dir, _ string, _ []byte) {
			os.Remove(filepath.Join(dir, "tool.wasm"))
		}, nil},
		{"tree file replaced by rename", func(t *testing.T, dir, _ string, _ []byte) {
			wasm := filepath.Join(dir, "tool.wasm")
			orig, _ := os.ReadFile(wasm)
			os.WriteFile(wasm+".new", bytes.Repeat([]byte{'r'}, len(orig)), 0o644)
			os.Rename(wasm+".new", wasm)
		}, nil},
		{"tree file mode changed", func(t *testing.T, dir, _ string, _ []byte) {
			os.Chmod(filepath.Join(dir, "tool.wasm"), 0o777)
		}, nil},
		{"blob rewritten, same size", func(t *testing.T, _, blob string, b []byte) {
			bad := append([]byte(nil), b...)
			bad[len(bad)/2] ^= 0xff
			os.WriteFile(blob, bad, 0o644)
		}, ErrDigest},
		{"stamp names another digest", func(t *testing.T, dir, _ string, _ []byte) {
			st, err := readStamp(dir)
			if err != nil {
				t.Fatal(err)
			}
			st.Digest = "sha256:" + string(bytes.Repeat([]byte{'0'}, 64))
			st.write(dir)
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj, d, b := stampedProject(t)
			dir := proj.UnpackedDir(d)
			wasm := filepath.Join(dir, "tool.wasm")
			orig, _ := os.ReadFile(wasm)
			blob, _ := proj.Store.blobPath(d)
			tc.change(t, dir, blob, b)
			if proj.stamped(ref("ana/tool@1.0.0"), d, "tool") != nil {
				t.Fatal("changed tree or blob still trusted by its stamp")
			}
			_, err := proj.Resolve(context.Background(), toolEntry)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("resolve = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(wasm); !bytes.Equal(got, orig) {
				t.Fatal("tree not restored to the pinned bytes")
			}
			if _, err := os.Stat(filepath.Join(dir, "extra")); err == nil {
				t.Fatal("extra file survived")
			}
		})
	}
}
