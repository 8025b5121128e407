package artifact

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrPackage is the kind of every refusal of a .mur.zip's contents.
var ErrPackage = errors.New("refused package")

// epoch is the one timestamp every packed entry carries, so the same inputs
// give the same bytes. 1980-01-01 is the earliest a zip (DOS) date holds.
var epoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// Entry is one file to pack: its slash-separated path inside the package,
// its bytes and whether it is executable.
type Entry struct {
	Path string
	Data []byte
	Exec bool
}

// Pack writes entries as a reproducible zip: sorted by path, fixed
// timestamps, fixed modes (0644, or 0755 for executables), deflated. It
// refuses duplicate or unsafe paths, so what Pack writes Open accepts.
func Pack(entries []Entry) ([]byte, error) {
	sorted := append([]Entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	if err := checkNames(func(yield func(string) bool) {
		for _, e := range sorted {
			if !yield(e.Path) {
				return
			}
		}
	}); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range sorted {
		h := &zip.FileHeader{Name: e.Path, Method: zip.Deflate, Modified: epoch}
		mode := fs.FileMode(0o644)
		if e.Exec {
			mode = 0o755
		}
		h.SetMode(mode)
		f, err := w.CreateHeader(h)
		if err != nil {
			return nil, fmt.Errorf("pack %q: %w", e.Path, err)
		}
		if _, err := f.Write(e.Data); err != nil {
			return nil, fmt.Errorf("pack %q: %w", e.Path, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	return buf.Bytes(), nil
}

// Digest returns the OCI digest string of b: "sha256:<hex>". It is the
// pinned hash of a package everywhere in mur.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Limits bound what Open accepts, so a hostile package cannot exhaust the
// disk or memory of the host that unpacks it.
type Limits struct {
	MaxEntries   int
	MaxFileBytes uint64
	MaxTotal     uint64
	// MaxRatio is the largest uncompressed/compressed ratio one entry may
	// claim; deflate rarely passes 100 on real files, bombs claim 1000+.
	MaxRatio uint64
}

// DefaultLimits are generous for tools, drivers and skills.
var DefaultLimits = Limits{
	MaxEntries:   10000,
	MaxFileBytes: 512 << 20,
	MaxTotal:     1 << 30,
	MaxRatio:     200,
}

// Package is a validated .mur.zip held in memory.
type Package struct {
	zr     *zip.Reader
	limits Limits
	files  map[string]*zip.File
}

// Open validates every entry of a .mur.zip before anything is read or
// written: paths must be clean and relative, unique (also ignoring case),
// regular files within the limits. A package that fails any rule is refused
// whole with ErrPackage.
func Open(data []byte, lim Limits) (*Package, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: not a zip archive: %w", ErrPackage, err)
	}
	if len(zr.File) > lim.MaxEntries {
		return nil, fmt.Errorf("%w: %d entries, more than the %d allowed", ErrPackage, len(zr.File), lim.MaxEntries)
	}
	p := &Package{zr: zr, limits: lim, files: make(map[string]*zip.File, len(zr.File))}
	var total uint64
	var names []string
	for _, f := range zr.File {
		m := f.Mode()
		switch {
		case m&fs.ModeSymlink != 0:
			return nil, fmt.Errorf("%w: entry %q is a symlink", ErrPackage, f.Name)
		case strings.HasSuffix(f.Name, "/") && (m.IsDir() || f.UncompressedSize64 == 0):
			// A directory entry carries nothing; its name is still checked.
			if err := checkName(strings.TrimSuffix(f.Name, "/")); err != nil {
				return nil, err
			}
			continue
		case !m.IsRegular():
			return nil, fmt.Errorf("%w: entry %q is not a regular file (%s)", ErrPackage, f.Name, m.Type())
		}
		if f.UncompressedSize64 > lim.MaxFileBytes {
			return nil, fmt.Errorf("%w: entry %q is %d bytes, more than the %d allowed", ErrPackage, f.Name, f.UncompressedSize64, lim.MaxFileBytes)
		}
		total += f.UncompressedSize64
		if total > lim.MaxTotal {
			return nil, fmt.Errorf("%w: entries add up to more than the %d bytes allowed", ErrPackage, lim.MaxTotal)
		}
		if f.UncompressedSize64 > 1<<16 && f.UncompressedSize64 > lim.MaxRatio*max(f.CompressedSize64, 1) {
			return nil, fmt.Errorf("%w: entry %q claims a compression ratio above %d (a zip bomb?)", ErrPackage, f.Name, lim.MaxRatio)
		}
		names = append(names, f.Name)
		p.files[f.Name] = f
	}
	if err := checkNames(func(yield func(string) bool) {
		for _, n := range names {
			if !yield(n) {
				return
			}
		}
	}); err != nil {
		return nil, err
	}
	return p, nil
}

// checkName refuses any path that could land outside the target directory
// or that names it differently on another system.
func checkName(n string) error {
	switch {
	case n == "":
		return fmt.Errorf("%w: empty entry name", ErrPackage)
	case strings.ContainsAny(n, "\\\x00:"):
		return fmt.Errorf("%w: entry %q holds '\\', ':' or NUL", ErrPackage, n)
	case strings.HasPrefix(n, "/"):
		return fmt.Errorf("%w: entry %q is an absolute path", ErrPackage, n)
	case path.Clean(n) != n:
		return fmt.Errorf("%w: entry %q is not a clean relative path", ErrPackage, n)
	}
	for _, seg := range strings.Split(n, "/") {
		if seg == ".." || seg == "." {
			return fmt.Errorf("%w: entry %q escapes the package (zip-slip)", ErrPackage, n)
		}
	}
	return nil
}

// checkNames checks each name and refuses duplicates, names equal ignoring
// case (they collide on case-insensitive file systems), and a file that is
// also another entry's directory.
func checkNames(each func(func(string) bool)) error {
	seen := map[string]string{}
	var err error
	var all []string
	each(func(n string) bool {
		if err = checkName(n); err != nil {
			return false
		}
		k := strings.ToLower(n)
		if prev, ok := seen[k]; ok {
			err = fmt.Errorf("%w: duplicate entry %q (also %q)", ErrPackage, n, prev)
			return false
		}
		seen[k] = n
		all = append(all, k)
		return true
	})
	if err != nil {
		return err
	}
	for _, n := range all {
		for d := path.Dir(n); d != "."; d = path.Dir(d) {
			if prev, ok := seen[d]; ok {
				return fmt.Errorf("%w: entry %q is a file and also the directory of %q", ErrPackage, prev, n)
			}
		}
	}
	return nil
}

// Names returns the package's file paths, sorted.
func (p *Package) Names() []string {
	out := make([]string, 0, len(p.files))
	for n := range p.files {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Has reports whether the package holds a file at name.
func (p *Package) Has(name string) bool { _, ok := p.files[name]; return ok }

// ReadFile returns one file's bytes, reading at most the declared size so a
// header that lies about its size cannot make it read more.
func (p *Package) ReadFile(name string) ([]byte, error) {
	f, ok := p.files[name]
	if !ok {
		return nil, fmt.Errorf("%w: no %q in package", fs.ErrNotExist, name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: open %q: %w", ErrPackage, name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, int64(f.UncompressedSize64)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read %q: %w", ErrPackage, name, err)
	}
	if uint64(len(b)) != f.UncompressedSize64 {
		return nil, fmt.Errorf("%w: entry %q holds more or fewer bytes than its header says", ErrPackage, name)
	}
	return b, nil
}

// Extract writes the package into dest, which must not exist. It writes
// into a temporary directory beside dest and renames it into place, so on
// any error nothing is left at dest and the temporary directory is removed.
func (p *Package) Extract(dest string) (err error) {
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("extract: %q: %w", dest, fs.ErrExist)
	}
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("extract: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".unpack-")
	if err != nil {
		return fmt.Errorf("extract: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	for _, name := range p.Names() {
		b, err := p.ReadFile(name)
		if err != nil {
			return err
		}
		target := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("extract %q: %w", name, err)
		}
		mode := fs.FileMode(0o644)
		if p.files[name].Mode()&0o111 != 0 {
			mode = 0o755
		}
		// Not synced here: Extract's callers flush once for many trees.
		if err := os.WriteFile(target, b, mode); err != nil {
			return fmt.Errorf("extract %q: %w", name, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("extract: %w", err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("extract: %w", err)
	}
	return nil
}
