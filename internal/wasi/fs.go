package wasi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"
)

// maxSymlinks bounds symlink expansion during one resolution, as the
// kernel's own MAXSYMLINKS does.
const maxSymlinks = 40

// Preopen is one directory the guest is handed by wasi:filesystem/preopens.
// Every path the guest names is resolved beneath it, a component at a time,
// so no "..", absolute path or symlink leaves it.
type Preopen struct {
	// Name is the guest-visible name: "." or "state".
	Name string
	// HostDir is the directory on the host.
	HostDir string

	root *os.Root
	dir  *os.File // the directory itself, for openat2 on Linux
	// wdRel is HostDir relative to the workdir ("" when it is not under the
	// workdir, as the state store is not); read-only entries match
	// wdRel/<resolved path>.
	wdRel    string
	readOnly []string
}

// OpenPreopen opens hostDir as the preopen called name. readOnly holds
// workdir-relative subtrees and wdRel is hostDir relative to the workdir
// ("" for a directory outside it).
func OpenPreopen(name, hostDir, wdRel string, readOnly []string) (*Preopen, error) {
	r, err := os.OpenRoot(hostDir)
	if err != nil {
		return nil, fmt.Errorf("preopen %q: %w", name, err)
	}
	d, err := os.Open(hostDir)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("preopen %q: %w", name, err)
	}
	return &Preopen{Name: name, HostDir: hostDir, root: r, dir: d, wdRel: wdRel, readOnly: readOnly}, nil
}

// Close releases the preopen's directory handles.
func (p *Preopen) Close() error {
	return errors.Join(p.root.Close(), p.dir.Close())
}

// Resolve turns a guest path relative to base (an already resolved path
// under the preopen, "." for its root) into a resolved path with no ".."
// and no symlinks, following a final symlink only when followFinal is set.
// An absolute path, a ".." above the preopen and a symlink whose target
// leaves it fail with ErrEscape.
func (p *Preopen) Resolve(base, guest string, followFinal bool) (string, error) {
	if strings.HasPrefix(guest, "/") {
		return "", fsErr("resolve", guest, fmt.Errorf("absolute path: %w", ErrEscape))
	}
	if strings.IndexByte(guest, 0) >= 0 {
		return "", &FSError{Code: CodeInvalid, Op: "resolve", Path: guest, Err: errors.New("path holds a NUL byte")}
	}
	var stack []string
	if base != "." && base != "" {
		stack = strings.Split(base, "/")
	}
	pending := splitPath(guest)
	links := 0
	missing := false
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		if c == ".." {
			if len(stack) == 0 {
				return "", fsErr("resolve", guest, fmt.Errorf("\"..\" climbs above %q: %w", p.Name, ErrEscape))
			}
			stack = stack[:len(stack)-1]
			missing = false
			continue
		}
		cand := append(append([]string(nil), stack...), c)
		last := len(pending) == 0
		if missing || (last && !followFinal) {
			stack = cand
			continue
		}
		rel := strings.Join(cand, "/")
		fi, err := p.root.Lstat(rel)
		if err != nil {
			// A missing component is left for the operation itself to
			// report (a create may be about to make it).
			missing = true
			stack = cand
			continue
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			stack = cand
			continue
		}
		links++
		if links > maxSymlinks {
			return "", &FSError{Code: CodeLoop, Op: "resolve", Path: guest, Err: errors.New("too many levels of symbolic links")}
		}
		target, err := p.root.Readlink(rel)
		if err != nil {
			return "", fsErr("readlink", guest, err)
		}
		if strings.HasPrefix(target, "/") {
			return "", fsErr("resolve", guest, fmt.Errorf("symlink %q points at absolute %q: %w", rel, target, ErrEscape))
		}
		pending = append(splitPath(target), pending...)
	}
	if len(stack) == 0 {
		return ".", nil
	}
	return strings.Join(stack, "/"), nil
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// checkWrite refuses a write to rel (resolved, preopen-relative) when it lies
// under a read-only subtree.
func (p *Preopen) checkWrite(op, rel string) error {
	if p.wdRel == "" {
		return nil
	}
	wd := path.Join(p.wdRel, rel)
	for _, ro := range p.readOnly {
		if underSubtree(wd, ro) {
			return &FSError{Code: CodeAccess, Op: op, Path: rel, Err: fmt.Errorf("%q is under read-only %q: %w", wd, ro, ErrReadOnly)}
		}
	}
	return nil
}

// holdsReadOnly reports a read-only entry lying strictly beneath rel.
func (p *Preopen) holdsReadOnly(rel string) (string, bool) {
	if p.wdRel == "" {
		return "", false
	}
	wd := path.Join(p.wdRel, rel)
	for _, ro := range p.readOnly {
		if wd == "." || strings.HasPrefix(ro, wd+"/") {
			return ro, true
		}
	}
	return "", false
}

// ReadOnlyAt reports whether rel (resolved, preopen-relative) is covered by
// a read-only subtree.
func (p *Preopen) ReadOnlyAt(rel string) bool {
	return p.checkWrite("check", rel) != nil
}

// OpenFlags are the open-at options of wasi:filesystem, as booleans.
type OpenFlags struct {
	Create, Directory, Exclusive, Truncate bool
	Read, Write                            bool
	FollowSymlinks                         bool
}

// Open opens guest (relative to base) beneath the preopen and returns the
// file with its resolved path.
func (p *Preopen) Open(base, guest string, fl OpenFlags) (*os.File, string, error) {
	rel, err := p.Resolve(base, guest, fl.FollowSymlinks)
	if err != nil {
		return nil, "", err
	}
	if fl.Write || fl.Create || fl.Truncate {
		if err := p.checkWrite("open", rel); err != nil {
			return nil, "", err
		}
	}
	flags := os.O_RDONLY
	switch {
	case fl.Write && fl.Read:
		flags = os.O_RDWR
	case fl.Write:
		flags = os.O_WRONLY
	}
	if fl.Create {
		flags |= os.O_CREATE
	}
	if fl.Exclusive {
		flags |= os.O_EXCL
	}
	if fl.Truncate {
		flags |= os.O_TRUNC
	}
	f, err := p.openResolved(rel, flags, fl.Directory, fl.FollowSymlinks)
	if err != nil {
		return nil, "", fsErr("open", guest, err)
	}
	if fl.Directory {
		fi, err := f.Stat()
		if err == nil && !fi.IsDir() {
			f.Close()
			return nil, "", &FSError{Code: CodeNotDirectory, Op: "open", Path: guest, Err: errors.New("not a directory")}
		}
	}
	return f, rel, nil
}

// Mkdir creates directory guest (relative to base).
func (p *Preopen) Mkdir(base, guest string) error {
	rel, err := p.writable("mkdir", base, guest)
	if err != nil {
		return err
	}
	return fsErr("mkdir", guest, p.root.Mkdir(rel, 0o777))
}

// Unlink removes the non-directory guest (relative to base).
func (p *Preopen) Unlink(base, guest string) error {
	rel, err := p.writable("unlink", base, guest)
	if err != nil {
		return err
	}
	fi, err := p.root.Lstat(rel)
	if err != nil {
		return fsErr("unlink", guest, err)
	}
	if fi.IsDir() {
		return &FSError{Code: CodeIsDirectory, Op: "unlink", Path: guest, Err: errors.New("is a directory")}
	}
	return fsErr("unlink", guest, p.root.Remove(rel))
}

// Rmdir removes the empty directory guest (relative to base).
func (p *Preopen) Rmdir(base, guest string) error {
	rel, err := p.writable("rmdir", base, guest)
	if err != nil {
		return err
	}
	if rel == "." {
		return &FSError{Code: CodeBusy, Op: "rmdir", Path: guest, Err: errors.New("the preopen itself cannot be removed")}
	}
	fi, err := p.root.Lstat(rel)
	if err != nil {
		return fsErr("rmdir", guest, err)
	}
	if !fi.IsDir() {
		return &FSError{Code: CodeNotDirectory, Op: "rmdir", Path: guest, Err: errors.New("not a directory")}
	}
	return fsErr("rmdir", guest, p.root.Remove(rel))
}

// Rename moves oldGuest (relative to oldBase) to newGuest under np
// (relative to newBase). Both ends must be writable.
func (p *Preopen) Rename(oldBase, oldGuest string, np *Preopen, newBase, newGuest string) error {
	oldRel, err := p.writable("rename", oldBase, oldGuest)
	if err != nil {
		return err
	}
	newRel, err := np.writable("rename", newBase, newGuest)
	if err != nil {
		return err
	}
	if np != p {
		return &FSError{Code: CodeCrossDevice, Op: "rename", Path: newGuest, Err: errors.New("rename across preopens")}
	}
	// Moving an ancestor of a read-only subtree would carry the subtree
	// out from under its rule.
	for _, rel := range []string{oldRel, newRel} {
		if ro, ok := p.holdsReadOnly(rel); ok {
			return &FSError{Code: CodeAccess, Op: "rename", Path: rel, Err: fmt.Errorf("%q contains read-only %q: %w", rel, ro, ErrReadOnly)}
		}
	}
	return fsErr("rename", oldGuest, p.root.Rename(oldRel, newRel))
}

// Symlink creates newGuest (relative to base) pointing at target. A target
// that is absolute or climbs out of the preopen is refused: the link could
// never be followed here, and refusing it keeps the tree clean for other
// readers of the directory.
func (p *Preopen) Symlink(target, base, newGuest string) error {
	rel, err := p.writable("symlink", base, newGuest)
	if err != nil {
		return err
	}
	if strings.HasPrefix(target, "/") {
		return fsErr("symlink", newGuest, fmt.Errorf("absolute target %q: %w", target, ErrEscape))
	}
	if c := path.Clean(path.Join(path.Dir(rel), target)); c == ".." || strings.HasPrefix(c, "../") {
		return fsErr("symlink", newGuest, fmt.Errorf("target %q leaves %q: %w", target, p.Name, ErrEscape))
	}
	return fsErr("symlink", newGuest, p.root.Symlink(target, rel))
}

// Link creates a hard link newGuest under np to oldGuest.
func (p *Preopen) Link(oldBase, oldGuest string, followOld bool, np *Preopen, newBase, newGuest string) error {
	oldRel, err := p.Resolve(oldBase, oldGuest, followOld)
	if err != nil {
		return err
	}
	// A hard link to a read-only file would be a writable name for it.
	if err := p.checkWrite("link", oldRel); err != nil {
		return err
	}
	newRel, err := np.writable("link", newBase, newGuest)
	if err != nil {
		return err
	}
	if np != p {
		return &FSError{Code: CodeCrossDevice, Op: "link", Path: newGuest, Err: errors.New("link across preopens")}
	}
	return fsErr("link", newGuest, p.root.Link(oldRel, newRel))
}

// Readlink returns the target of the symlink guest (relative to base).
func (p *Preopen) Readlink(base, guest string) (string, error) {
	rel, err := p.Resolve(base, guest, false)
	if err != nil {
		return "", err
	}
	t, err := p.root.Readlink(rel)
	return t, fsErr("readlink", guest, err)
}

// Stat stats guest (relative to base), following a final symlink when
// follow is set.
func (p *Preopen) Stat(base, guest string, follow bool) (fs.FileInfo, error) {
	rel, err := p.Resolve(base, guest, follow)
	if err != nil {
		return nil, err
	}
	fi, err := p.root.Lstat(rel)
	return fi, fsErr("stat", guest, err)
}

// Chtimes sets access and modification times of guest (relative to base);
// a zero time leaves that time unchanged.
func (p *Preopen) Chtimes(base, guest string, follow bool, atime, mtime time.Time) error {
	rel, err := p.Resolve(base, guest, follow)
	if err != nil {
		return err
	}
	if err := p.checkWrite("set-times", rel); err != nil {
		return err
	}
	return fsErr("set-times", guest, p.root.Chtimes(rel, atime, mtime))
}

func (p *Preopen) writable(op, base, guest string) (string, error) {
	rel, err := p.Resolve(base, guest, false)
	if err != nil {
		return "", err
	}
	return rel, p.checkWrite(op, rel)
}
