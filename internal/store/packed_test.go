package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
)

// damagedTool is a package whose own murmur.yaml names the right artifact
// and version but is refused by the build checks: its line 4 lists a
// requires_files entry that climbs out of the package.
func damagedTool(t *testing.T) ([]byte, Meta) {
	t.Helper()
	b, err := artifact.Pack([]artifact.Entry{
		{Path: "murmur.yaml", Data: []byte("name: tool\nversion: \"1.0.0\"\nruntime: tool\nrequires_files: [tool.wasm, ../outside]\n")},
		{Path: "tool.wasm", Data: []byte("\x00asm murmur:tool/run@0.1.0")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b, Meta{Name: "ana/tool", Version: "1.0.0", Runtime: "tool", Execution: "wasm", Platform: "any", WIT: []string{"murmur:tool/run@0.1.0"}}
}

// wantPackedRefusal checks err carries the packed manifest's own
// diagnostic: E-BLD-002 at ana/tool@1.0.0!murmur.yaml line 4, saying what
// to do.
func wantPackedRefusal(t *testing.T, ds diag.List) {
	t.Helper()
	for _, d := range ds {
		if d.Code == diag.BldPath && strings.HasSuffix(d.Pos.File, "ana/tool@1.0.0!murmur.yaml") && d.Pos.Line == 4 &&
			strings.Contains(d.Field, "requires_files") && strings.Contains(d.Msg, "publish a new version") {
			return
		}
	}
	t.Fatalf("no E-BLD-002 naming the packed murmur.yaml's line 4 in %v", ds)
}

func TestInstallRefusesDamagedPackedManifest(t *testing.T) {
	ctx := context.Background()
	_, reg, proj := setup(t)
	b, m := damagedTool(t)
	if _, err := reg.Put(ctx, ref("ana/tool@1.0.0"), m, b); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, proj.Dir)
	in := &Installer{Project: proj, Sources: []Source{proj.Store, reg}, Check: InstallChecker}
	_, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")})
	var l diag.ListError
	if !errors.As(err, &l) {
		t.Fatalf("err = %v, want the packed manifest's diagnostics", err)
	}
	wantPackedRefusal(t, diag.List(l))
	sameTree(t, before, snapshot(t, proj.Dir))
}

// TestStageRefusesDamagedStoredManifest: a package already in the store
// and pinned (installed before install checked its manifest) is refused at
// staging with its manifest's diagnostics, not read halfway.
func TestStageRefusesDamagedStoredManifest(t *testing.T) {
	ctx := context.Background()
	_, reg, proj := setup(t)
	b, m := damagedTool(t)
	if _, err := reg.Put(ctx, ref("ana/tool@1.0.0"), m, b); err != nil {
		t.Fatal(err)
	}
	in := &Installer{Project: proj, Sources: []Source{reg}} // no checks: as an older mur installed it
	if _, err := in.Install(ctx, []artifact.Ref{ref("ana/tool@1.0.0")}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(proj.Dir, "murmur.yaml")
	if err := os.WriteFile(path, []byte("name: c\nversion: \"1\"\nartifacts:\n  - name: ana/tool\n    version: \"1.0.0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, ds := manifest.LoadCapsule(path)
	if c == nil || ds.HasErrors() {
		t.Fatalf("capsule: %v", ds)
	}
	res, ds := Stage(ctx, c, "")
	wantPackedRefusal(t, ds)
	if a, ok := res.Artifact("ana/tool"); ok || a != nil {
		t.Fatalf("the refused manifest is still served: %+v", a)
	}
}
