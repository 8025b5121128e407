package wasi

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/murmur/mur/internal/wasm/cm"
)

// Descriptor is the host object behind a wasi:filesystem descriptor: an
// open file or directory and its resolved path under its preopen.
type Descriptor struct {
	po    *Preopen
	rel   string
	f     *os.File
	read  bool
	write bool
	dir   bool
}

// Close closes the file.
func (d *Descriptor) Close() error { return d.f.Close() }

// checkWrite re-applies the read-only rule to the descriptor's own path.
func (d *Descriptor) checkWrite(op string) error { return d.po.checkWrite(op, d.rel) }

// dirStream is a directory listing read once at read-directory and handed
// out an entry at a time.
type dirStream struct {
	entries []fs.DirEntry
}

func (s *dirStream) Close() error { return nil }

func fsResult(v cm.Val, err error) cm.Val {
	if err != nil {
		return cm.Err(cm.Enum(string(CodeOf(err))))
	}
	return cm.OK(v)
}

func fsUnit(err error) cm.Val {
	if err != nil {
		return cm.Err(cm.Enum(string(CodeOf(err))))
	}
	return cm.OK()
}

func descType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic-link"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character-device"
	case m&fs.ModeDevice != 0:
		return "block-device"
	case m.IsRegular():
		return "regular-file"
	}
	return "unknown"
}

func optTime(t time.Time) cm.Val {
	if t.IsZero() {
		return cm.None()
	}
	return cm.Some(datetime(t))
}

func statVal(fi fs.FileInfo) cm.Val {
	var nlink uint64 = 1
	atime, ctime := time.Time{}, time.Time{}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		nlink = uint64(st.Nlink)
		atime, ctime = statTimes(st)
	}
	return cm.Record(
		cm.Field{Name: "type", Val: cm.Enum(descType(fi.Mode()))},
		cm.Field{Name: "link-count", Val: cm.U64(nlink)},
		cm.Field{Name: "size", Val: cm.U64(uint64(fi.Size()))},
		cm.Field{Name: "data-access-timestamp", Val: optTime(atime)},
		cm.Field{Name: "data-modification-timestamp", Val: optTime(fi.ModTime())},
		cm.Field{Name: "status-change-timestamp", Val: optTime(ctime)},
	)
}

func hasFlag(v cm.Val, name string) bool {
	for _, f := range v.Flags() {
		if f == name {
			return true
		}
	}
	return false
}

// newTimestamp reads a new-timestamp variant: zero time for no-change.
func newTimestamp(v cm.Val) time.Time {
	switch v.Str() {
	case "now":
		return time.Now()
	case "timestamp":
		p, _ := v.Payload()
		s, _ := p.Field("seconds")
		n, _ := p.Field("nanoseconds")
		return time.Unix(int64(s.U64()), int64(n.U32()))
	}
	return time.Time{}
}

func (d *definer) filesystem() {
	t := d.iface("wasi:filesystem/types")
	for name, ty := range map[string]cm.ResourceType{
		"input-stream": rtInputStream, "output-stream": rtOutputStream, "error": rtError,
		"descriptor": rtDescriptor, "directory-entry-stream": rtDirEntryStream,
	} {
		t.resource(name, ty)
	}
	desc := func(name string, f func(x *Ctx, c *cm.Caller, d *Descriptor, a []cm.Val) cm.Val) {
		t.fn("[method]descriptor."+name, func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
			dd, _, err := handle[*Descriptor](x, c, a[0])
			if err != nil {
				return cm.Val{}, err
			}
			return f(x, c, dd, a), nil
		})
	}
	bad := func(code FSCode) cm.Val { return cm.Err(cm.Enum(string(code))) }

	desc("read-via-stream", func(x *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		if d.dir {
			return bad(CodeIsDirectory)
		}
		return cm.OK(x.own(rtInputStream, &fileInput{r: d.f, off: int64(a[1].U64())}))
	})
	desc("write-via-stream", func(x *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		if err := d.checkWrite("write"); err != nil {
			return fsResult(cm.Val{}, err)
		}
		if !d.write {
			return bad(CodeBadDescriptor)
		}
		return cm.OK(x.own(rtOutputStream, &fileOutput{w: d.f, off: int64(a[1].U64()), check: func() error { return d.checkWrite("write") }}))
	})
	desc("append-via-stream", func(x *Ctx, _ *cm.Caller, d *Descriptor, _ []cm.Val) cm.Val {
		if err := d.checkWrite("append"); err != nil {
			return fsResult(cm.Val{}, err)
		}
		if !d.write {
			return bad(CodeBadDescriptor)
		}
		return cm.OK(x.own(rtOutputStream, &fileOutput{f: appender{d.f}, append: true, check: func() error { return d.checkWrite("append") }}))
	})
	desc("advise", func(*Ctx, *cm.Caller, *Descriptor, []cm.Val) cm.Val { return cm.OK() })
	desc("sync-data", func(_ *Ctx, _ *cm.Caller, d *Descriptor, _ []cm.Val) cm.Val {
		if d.dir {
			return cm.OK()
		}
		return fsUnit(d.f.Sync())
	})
	desc("sync", func(_ *Ctx, _ *cm.Caller, d *Descriptor, _ []cm.Val) cm.Val {
		if d.dir {
			return cm.OK()
		}
		return fsUnit(d.f.Sync())
	})
	desc("get-flags", func(_ *Ctx, _ *cm.Caller, d *Descriptor, _ []cm.Val) cm.Val {
		var fl []string
		if d.read {
			fl = append(fl, "read")
		}
		if d.write && !d.dir {
			fl = append(fl, "write")
		}
		if d.dir && !d.po.ReadOnlyAt(d.rel) {
			fl = append(fl, "mutate-directory")
		}
		return cm.OK(cm.Flags(fl...))
	})
	desc("get-type", func(_ *Ctx, _ *cm.Caller, d *Descriptor, _ []cm.Val) cm.Val {
		fi, err := d.f.Stat()
		return fsResult(cm.Enum(descType(fi.Mode())), err)
	})
	desc("set-size", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		if err := d.checkWrite("set-size"); err != nil {
			return fsUnit(err)
		}
		if !d.write {
			return bad(CodeBadDescriptor)
		}
		return fsUnit(d.f.Truncate(int64(a[1].U64())))
	})
	desc("set-times", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		return fsUnit(d.po.Chtimes(d.rel, ".", true, newTimestamp(a[1]), newTimestamp(a[2])))
	})
	desc("read", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		if d.dir {
			return bad(CodeIsDirectory)
		}
		b := make([]byte, min(a[1].U64(), chunk))
		n, err := d.f.ReadAt(b, int64(a[2].U64()))
		if err != nil && !errors.Is(err, io.EOF) {
			return fsResult(cm.Val{}, err)
		}
		return cm.OK(cm.Tuple(cm.Bytes(b[:n]), cm.Bool(errors.Is(err, io.EOF) && n < len(b))))
	})
	desc("write", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		if err := d.checkWrite("write"); err != nil {
			return fsResult(cm.Val{}, err)
		}
		if !d.write {
			return bad(CodeBadDescriptor)
		}
		b, _ := a[1].Bytes()
		n, err := d.f.WriteAt(b, int64(a[2].U64()))
		return fsResult(cm.U64(uint64(n)), err)
	})
	desc("read-directory", func(x *Ctx, _ *cm.Caller, d *Descriptor, _ []cm.Val) cm.Val {
		if !d.dir {
			return bad(CodeNotDirectory)
		}
		// A fresh handle so each listing starts at the beginning.
		f, _, err := d.po.Open(d.rel, ".", OpenFlags{Read: true, Directory: true})
		if err != nil {
			return fsResult(cm.Val{}, err)
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return fsResult(cm.Val{}, err)
		}
		return cm.OK(x.own(rtDirEntryStream, &dirStream{entries: ents}))
	})
	desc("create-directory-at", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		return fsUnit(d.po.Mkdir(d.rel, a[1].Str()))
	})
	desc("stat", func(_ *Ctx, _ *cm.Caller, d *Descriptor, _ []cm.Val) cm.Val {
		fi, err := d.f.Stat()
		if err != nil {
			return fsResult(cm.Val{}, err)
		}
		return cm.OK(statVal(fi))
	})
	desc("stat-at", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		fi, err := d.po.Stat(d.rel, a[2].Str(), hasFlag(a[1], "symlink-follow"))
		if err != nil {
			return fsResult(cm.Val{}, err)
		}
		return cm.OK(statVal(fi))
	})
	desc("set-times-at", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		return fsUnit(d.po.Chtimes(d.rel, a[2].Str(), hasFlag(a[1], "symlink-follow"), newTimestamp(a[3]), newTimestamp(a[4])))
	})
	desc("link-at", func(x *Ctx, c *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		nd, _, err := handle[*Descriptor](x, c, a[3])
		if err != nil {
			return bad(CodeBadDescriptor)
		}
		return fsUnit(d.po.Link(d.rel, a[2].Str(), hasFlag(a[1], "symlink-follow"), nd.po, nd.rel, a[4].Str()))
	})
	desc("open-at", func(x *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		if !d.dir {
			return bad(CodeNotDirectory)
		}
		of, df := a[3], a[4]
		fl := OpenFlags{
			FollowSymlinks: hasFlag(a[1], "symlink-follow"),
			Create:         hasFlag(of, "create"),
			Directory:      hasFlag(of, "directory"),
			Exclusive:      hasFlag(of, "exclusive"),
			Truncate:       hasFlag(of, "truncate"),
			Read:           hasFlag(df, "read"),
			Write:          hasFlag(df, "write"),
		}
		f, rel, err := d.po.Open(d.rel, a[2].Str(), fl)
		if err != nil {
			// Opening a directory for writing is not an error in WASI;
			// retry read-only so the guest gets a directory descriptor.
			if fl.Write && !fl.Create && CodeOf(err) == CodeIsDirectory {
				fl.Write = false
				f, rel, err = d.po.Open(d.rel, a[2].Str(), fl)
			}
			if err != nil {
				return fsResult(cm.Val{}, err)
			}
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return fsResult(cm.Val{}, err)
		}
		nd := &Descriptor{po: d.po, rel: rel, f: f, read: fl.Read || !fl.Write, write: fl.Write, dir: fi.IsDir()}
		return cm.OK(x.own(rtDescriptor, nd))
	})
	desc("readlink-at", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		s, err := d.po.Readlink(d.rel, a[1].Str())
		return fsResult(cm.String(s), err)
	})
	desc("remove-directory-at", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		return fsUnit(d.po.Rmdir(d.rel, a[1].Str()))
	})
	desc("rename-at", func(x *Ctx, c *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		nd, _, err := handle[*Descriptor](x, c, a[2])
		if err != nil {
			return bad(CodeBadDescriptor)
		}
		return fsUnit(d.po.Rename(d.rel, a[1].Str(), nd.po, nd.rel, a[3].Str()))
	})
	desc("symlink-at", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		return fsUnit(d.po.Symlink(a[1].Str(), d.rel, a[2].Str()))
	})
	desc("unlink-file-at", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		return fsUnit(d.po.Unlink(d.rel, a[1].Str()))
	})
	t.fn("[method]descriptor.is-same-object", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		d1, _, err := handle[*Descriptor](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		d2, _, err := handle[*Descriptor](x, c, a[1])
		if err != nil {
			return cm.Val{}, err
		}
		f1, e1 := d1.f.Stat()
		f2, e2 := d2.f.Stat()
		return cm.Bool(e1 == nil && e2 == nil && os.SameFile(f1, f2)), nil
	})
	hash := func(fi fs.FileInfo) cm.Val {
		var lo, hi uint64
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			lo, hi = uint64(st.Ino), uint64(st.Dev)
		}
		return cm.Record(cm.Field{Name: "lower", Val: cm.U64(lo)}, cm.Field{Name: "upper", Val: cm.U64(hi)})
	}
	desc("metadata-hash", func(_ *Ctx, _ *cm.Caller, d *Descriptor, _ []cm.Val) cm.Val {
		fi, err := d.f.Stat()
		if err != nil {
			return fsResult(cm.Val{}, err)
		}
		return cm.OK(hash(fi))
	})
	desc("metadata-hash-at", func(_ *Ctx, _ *cm.Caller, d *Descriptor, a []cm.Val) cm.Val {
		fi, err := d.po.Stat(d.rel, a[2].Str(), hasFlag(a[1], "symlink-follow"))
		if err != nil {
			return fsResult(cm.Val{}, err)
		}
		return cm.OK(hash(fi))
	})
	t.fn("[method]directory-entry-stream.read-directory-entry", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		s, _, err := handle[*dirStream](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		if len(s.entries) == 0 {
			return cm.OK(cm.None()), nil
		}
		e := s.entries[0]
		s.entries = s.entries[1:]
		return cm.OK(cm.Some(cm.Record(
			cm.Field{Name: "type", Val: cm.Enum(descType(e.Type()))},
			cm.Field{Name: "name", Val: cm.String(e.Name())},
		))), nil
	})
	t.fn("filesystem-error-code", func(x *Ctx, c *cm.Caller, a []cm.Val) (cm.Val, error) {
		e, _, err := handle[*ioError](x, c, a[0])
		if err != nil {
			return cm.Val{}, err
		}
		var fe *FSError
		if errors.As(e.err, &fe) {
			return cm.Some(cm.Enum(string(fe.Code))), nil
		}
		return cm.None(), nil
	})

	p := d.iface("wasi:filesystem/preopens")
	p.resource("descriptor", rtDescriptor)
	p.fn("get-directories", func(x *Ctx, _ *cm.Caller, _ []cm.Val) (cm.Val, error) {
		var out []cm.Val
		for _, name := range guestNames(x.preopens) {
			f, _, err := name.po.Open(".", ".", OpenFlags{Read: true, Directory: true})
			if err != nil {
				return cm.Val{}, err
			}
			dd := &Descriptor{po: name.po, rel: ".", f: f, read: true, dir: true}
			out = append(out, cm.Tuple(x.own(rtDescriptor, dd), cm.String(name.name)))
		}
		return cm.List(out...), nil
	})
}

// appender writes at the end of the file whatever others wrote since.
type appender struct{ f *os.File }

func (a appender) Write(p []byte) (int, error) {
	if _, err := a.f.Seek(0, io.SeekEnd); err != nil {
		return 0, err
	}
	return a.f.Write(p)
}

type preopenName struct {
	name string
	po   *Preopen
}

// guestNames lists each preopen under its spec name ("." or "state") and
// under the absolute name of the same directory ("/" or "/state"),
// absolute names first. Go's wasip1 runtime resolves every path as an
// absolute one against the preopen names (cwd defaults to the first
// preopen), so it only finds directories with absolute names; libc-based
// guests look for ".". Both names open the same directory, so the second
// name grants nothing the first does not.
func guestNames(ps []*Preopen) []preopenName {
	var abs, rel []preopenName
	for _, p := range ps {
		a := "/" + p.Name
		if p.Name == "." {
			a = "/"
		}
		abs = append(abs, preopenName{a, p})
		rel = append(rel, preopenName{p.Name, p})
	}
	return append(abs, rel...)
}
