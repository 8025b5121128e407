package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
)

// Artifact implements manifest.Installed: the decoded own manifest of the
// entry named name as written. A local source has none, so it answers with
// what the entry itself says (its role, version local, static payload).
func (r *Resolution) Artifact(name string) (*manifest.Artifact, bool) {
	res, ok := r.byName[name]
	if !ok {
		return nil, false
	}
	res.decode()
	return res.parsed, res.parsed != nil
}

// decode reads the entry's own manifest once.
func (res *Resolved) decode() {
	res.parse.Do(func() {
		if res.Manifest == nil {
			res.parsed = &manifest.Artifact{Name: res.Name, Version: res.Version, Runtime: res.Role, Execution: manifest.ExecStatic}
			return
		}
		a, ds := manifest.ParseArtifact(res.Name+"@"+res.Version+"!murmur.yaml", res.Manifest)
		if res.parseErr = packedErr(ds, "Then run `mur install`"); res.parseErr == nil {
			res.parsed = a
		}
	})
}

var _ manifest.Installed = (*Resolution)(nil)

// parsedState is embedded in Resolved for its lazily decoded manifest.
type parsedState struct {
	parse  sync.Once
	parsed *manifest.Artifact
	// parseErr refuses a stored manifest with error diagnostics; parsed
	// is then nil, so no staging check reads it halfway.
	parseErr error
}

// Entries turns a capsule's artifacts: into resolver entries, defaults
// applied.
func Entries(c *manifest.Capsule) []Entry {
	out := make([]Entry, 0, len(c.Artifacts))
	for _, a := range c.Artifacts {
		local := a.Role() == manifest.RoleSkill
		if a.LocalSource != nil {
			local = *a.LocalSource
		}
		out = append(out, Entry{Name: a.Name, Version: a.Version, Role: a.Role(), Source: a.Source, LocalSource: local})
	}
	return out
}

// ProjectOf is the project of the capsule manifest c.
func ProjectOf(c *manifest.Capsule) *Project {
	dir := filepath.Dir(c.File)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return ProjectAt(dir)
}

// Stage resolves every artifact of c for launch (local sources from disk,
// everything else from its verified pin) and runs the staging checks that
// need installed artifacts' own manifests. floor is the effective
// containment floor. Each entry that cannot be resolved is one diagnostic
// with its code; the others are still checked.
func Stage(ctx context.Context, c *manifest.Capsule, floor string) (*Resolution, diag.List) {
	p := ProjectOf(c)
	res, errs := p.ResolveEach(ctx, Entries(c))
	var ds diag.List
	lockBad := false
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, artifact.ErrLock):
			// One malformed lock fails every stored entry; say it once.
			if !lockBad {
				ds = append(ds, diag.New(CodeLock, diag.Pos{File: p.LockPath()}, "", err.Error()+"; fix or delete it and run `mur install`"))
				lockBad = true
			}
		default:
			ds = append(ds, entryDiag(c, i, err))
		}
	}
	for _, r := range res.List {
		r.decode()
		var l diag.ListError
		if errors.As(r.parseErr, &l) {
			ds = append(ds, l...)
		}
	}
	if len(ds) == 0 {
		ds = append(ds, manifest.CheckStaging(c, res, floor)...)
	} else {
		// Staging checks would only repeat "not installed" for entries
		// already reported; run the ones about what did resolve.
		for _, d := range manifest.CheckStaging(c, res, floor) {
			if d.Code != diag.RunNotInstalled {
				ds = append(ds, d)
			}
		}
	}
	ds.Sort()
	return res, ds
}

func entryDiag(c *manifest.Capsule, i int, err error) diag.Diagnostic {
	field := fmt.Sprintf("artifacts[%d]", i)
	var d diag.Diagnostic
	if errors.As(err, &d) {
		d.Pos = c.Pos(d.Field)
		if d.Pos.Line == 0 {
			d.Pos = c.Pos(field)
		}
		return d
	}
	code, ok := CodeOf(err)
	if !ok {
		code = diag.RunNotInstalled
	}
	return diag.New(code, c.Pos(field), field, err.Error())
}

// ResolveEach is Resolve that goes on past a failed entry: errs[i] is the
// error of entries[i], nil when it resolved.
func (p *Project) ResolveEach(ctx context.Context, entries []Entry) (*Resolution, []error) {
	res := &Resolution{byName: map[string]*Resolved{}}
	errs := make([]error, len(entries))
	lock, err := artifact.LoadLock(p.LockPath())
	trust := &launchTrust{dir: p.Dir}
	for i, e := range entries {
		var r *Resolved
		switch {
		case e.Source != "":
			r, errs[i] = p.resolveLocal(i, e)
		case err != nil:
			errs[i] = err
		default:
			r, errs[i] = p.resolveStored(ctx, lock, e)
			if errs[i] == nil {
				// Nothing whose recorded signature fails is staged.
				if errs[i] = p.reverifyEntry(lock, e, trust); errs[i] != nil {
					r = nil
				}
			}
		}
		if r != nil {
			res.byName[e.Name] = r
			res.List = append(res.List, r)
		}
	}
	return res, errs
}

// Materialize copies every resolved artifact's files into a session's
// runtime directory at their install paths (tools/<name>/…). Files are
// copies, not links, so nothing a session does reaches the store; they are
// read-only, and a skill's files are never executable.
func (r *Resolution) Materialize(runtimeDir string) error {
	for _, res := range r.List {
		for rel, host := range res.Files {
			b, err := os.ReadFile(host)
			if err != nil {
				return fmt.Errorf("stage %s: %w", res.Name, err)
			}
			mode := os.FileMode(0o444)
			if fi, err := os.Stat(host); err == nil && fi.Mode()&0o111 != 0 && res.Role != manifest.RoleSkill {
				mode = 0o555
			}
			dst := filepath.Join(runtimeDir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return fmt.Errorf("stage %s: %w", res.Name, err)
			}
			if err := os.WriteFile(dst, b, mode); err != nil {
				return fmt.Errorf("stage %s: %w", res.Name, err)
			}
		}
	}
	return nil
}
