package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
)

// MetaOf is the stored metadata of a built package published under scope.
func MetaOf(b *artifact.Built, scope string) Meta {
	a := b.Manifest
	m := Meta{
		Name:        scope + "/" + a.Name,
		Version:     a.Version,
		Runtime:     a.Runtime,
		Execution:   a.ExecutionType(),
		Description: a.Description,
		Platform:    "any",
		WIT:         artifact.ScanWIT(b.Payload...),
	}
	if m.Execution == manifest.ExecNative {
		// A native payload runs only where it was built.
		m.Platform = HostPlatform()
	}
	return m
}

// CheckPackedManifest makes the checks mur install and mur publish make on
// a packed murmur.yaml before anything is written: it decodes, names the
// artifact being installed, and declares a well-formed models: (E-REG-011,
// naming name@version and the field).
func CheckPackedManifest(a *manifest.Artifact, want artifact.Ref) error {
	if a == nil {
		return fmt.Errorf("%w: %s: its murmur.yaml does not decode", artifact.ErrPackage, want)
	}
	if a.Name != want.Name || (want.Version != "" && a.Version != want.Version) {
		return fmt.Errorf("%w: %s holds the manifest of %s@%s", ErrMismatch, want, a.Name, a.Version)
	}
	if a.ModelsProblem != "" {
		return diag.New(diag.RegModels, diag.Pos{}, "models", fmt.Sprintf("%s: %s; rebuild the driver with a valid models: block. Nothing was written", want, a.ModelsProblem))
	}
	return nil
}

// InstallChecker is the Checker mur install uses: CheckPackedManifest on
// the package's own murmur.yaml.
func InstallChecker(f *Fetched, pkg *artifact.Package) error {
	mf, err := pkg.ReadFile("murmur.yaml")
	if err != nil {
		return fmt.Errorf("%s: %w", f.Ref, err)
	}
	a, ds := manifest.ParseArtifact(f.Ref.String()+"!murmur.yaml", mf)
	if err := packedErr(ds, "Nothing was written"); err != nil {
		return err
	}
	return CheckPackedManifest(a, f.Ref)
}

// packedErr refuses a packed murmur.yaml with its own diagnostics (file,
// line and field inside the package) rather than half-reading it. A
// malformed models: is left to CheckPackedManifest, which reports it as
// E-REG-011.
func packedErr(ds diag.List, after string) error {
	var bad diag.List
	for _, d := range ds.Errors() {
		if d.Code == diag.BldModels {
			continue
		}
		d.Msg += "; the package's own murmur.yaml is refused: fix it, rebuild and publish a new version. " + after
		bad = append(bad, d)
	}
	return bad.Err()
}

// Publish checks a built package and puts it into target under
// <scope>/<name>:<version>. A reserved version (E-REG-004) or a malformed
// models: (E-REG-011) is refused before anything is written.
func Publish(ctx context.Context, target Source, b *artifact.Built, scope string) (artifact.Ref, error) {
	return PublishFor(ctx, target, b, scope, "")
}

// PublishFor is Publish with the platform a native payload is for
// (GOOS/GOARCH, such as one cross-compiled); "" is this host's. A wasm or
// static package runs anywhere and takes none.
func PublishFor(ctx context.Context, target Source, b *artifact.Built, scope, platform string) (artifact.Ref, error) {
	a := b.Manifest
	meta := MetaOf(b, scope)
	if platform != "" {
		if meta.Execution != manifest.ExecNative {
			return artifact.Ref{}, fmt.Errorf("%w: %s is a %s package, which runs on any platform: --platform is for a native payload only", ErrPlatform, a.Name, meta.Execution)
		}
		if !ValidPlatform(platform) {
			return artifact.Ref{}, fmt.Errorf("%w: %q is not GOOS/GOARCH, such as linux/amd64 or darwin/arm64", ErrPlatform, platform)
		}
		meta.Platform = platform
	}
	if !artifact.ValidBareName(scope) {
		return artifact.Ref{}, fmt.Errorf("%w: scope %q must be lowercase letters, digits and inner hyphens", artifact.ErrName, scope)
	}
	if ds := a.CheckPublishable(); ds.HasErrors() {
		return artifact.Ref{}, ds[0]
	}
	ref := artifact.Ref{Scope: scope, Name: a.Name, Version: a.Version}
	if !artifact.ValidVersion(a.Version) {
		return ref, fmt.Errorf("%w: version %q cannot be a registry tag: use letters, digits, '.', '_' and '-'", artifact.ErrName, a.Version)
	}
	if err := CheckPackedManifest(a, artifact.Ref{Scope: scope, Name: a.Name, Version: a.Version}); err != nil {
		var d diag.Diagnostic
		if errors.As(err, &d) {
			d.Pos = a.Pos("models")
			return ref, d
		}
		return ref, err
	}
	// A published version is immutable: every pin of it names its bytes.
	switch have, err := target.Fetch(ctx, ref); {
	case err == nil && have.Digest == b.Digest:
		return ref, nil
	case err == nil:
		return ref, fmt.Errorf("%w: %s in %s is %s, this package is %s; publish it under a new version", ErrPublished, ref, target.Name(), have.Digest, b.Digest)
	case !errors.Is(err, ErrNotFound):
		return ref, err
	}
	if _, err := target.Put(ctx, ref, meta, b.Data); err != nil {
		return ref, err
	}
	return ref, nil
}

// ErrPlatform: mur publish --platform names no GOOS/GOARCH, or a package
// that is not native.
var ErrPlatform = errors.New("bad platform")

// ValidPlatform reports whether p is GOOS/GOARCH: two lowercase words of
// letters and digits.
func ValidPlatform(p string) bool {
	goos, goarch, ok := strings.Cut(p, "/")
	word := func(w string) bool {
		if w == "" || len(w) > 32 {
			return false
		}
		for _, c := range w {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
				return false
			}
		}
		return true
	}
	return ok && word(goos) && word(goarch)
}

// ErrPublished: the version is already published with other bytes.
var ErrPublished = errors.New("version already published")

// IndexEntry is one artifact in the index: its newest version that fits
// this mur, and its description's first sentence.
type IndexEntry struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Runtime     string `json:"runtime"`
	Description string `json:"description"`
	From        string `json:"from"`
}

// Index lists every artifact the sources hold, once per name, at its
// newest version that fits (else its newest), with the first sentence of
// its description. A source that cannot be listed is reported in errs and
// the rest are still indexed.
func Index(ctx context.Context, srcs []Source) ([]IndexEntry, []error) {
	byName := map[string][]Meta{}
	from := map[string]string{}
	var errs []error
	for _, s := range srcs {
		ms, err := s.List(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, m := range ms {
			byName[m.Name] = append(byName[m.Name], m)
			if _, ok := from[m.Name+"@"+m.Version]; !ok {
				from[m.Name+"@"+m.Version] = s.Name()
			}
		}
	}
	out := make([]IndexEntry, 0, len(byName))
	for name, ms := range byName {
		m, ok := Newest(ms)
		if !ok {
			sortMetas(ms)
			m = ms[0]
		}
		out = append(out, IndexEntry{Name: name, Version: m.Version, Runtime: m.Runtime, Description: artifact.FirstSentence(m.Description), From: from[name+"@"+m.Version]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errs
}

// Search keeps the index entries whose name or description contains every
// word of query, ignoring case.
func Search(idx []IndexEntry, query string) []IndexEntry {
	words := strings.Fields(strings.ToLower(query))
	var out []IndexEntry
	for _, e := range idx {
		hay := strings.ToLower(e.Name + " " + e.Description + " " + e.Runtime)
		ok := true
		for _, w := range words {
			if !strings.Contains(hay, w) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, e)
		}
	}
	return out
}

// IndexFile is the recorded artifact index under ~/.murmur: what mur index
// last found, read by a running session's manage.search and describe
// without reaching any registry.
const IndexFile = "index.json"

// RecordIndex writes idx to murmurDir/index.json atomically.
func RecordIndex(murmurDir string, idx []IndexEntry) error {
	if idx == nil {
		idx = []IndexEntry{}
	}
	b, err := json.MarshalIndent(struct {
		Artifacts []IndexEntry `json:"artifacts"`
	}{idx}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode index: %w", err)
	}
	if err := os.MkdirAll(murmurDir, 0o700); err != nil {
		return fmt.Errorf("record index: %w", err)
	}
	return artifact.WriteFileAtomic(filepath.Join(murmurDir, IndexFile), append(b, '\n'), 0o644)
}

// LoadIndex reads the recorded index; none recorded is an empty index.
func LoadIndex(murmurDir string) ([]IndexEntry, error) {
	b, err := os.ReadFile(filepath.Join(murmurDir, IndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	var f struct {
		Artifacts []IndexEntry `json:"artifacts"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, filepath.Join(murmurDir, IndexFile), err)
	}
	return f.Artifacts, nil
}
