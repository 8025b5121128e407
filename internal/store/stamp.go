package store

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/murmur/mur/internal/artifact"
)

// A stamp lets a launch trust an unpacked tree and its store blob without
// re-reading them. It is written only after a launch has verified both in
// full (the blob re-hashed against the pin, every file of the tree
// compared with the package), and it records the identity of each file as
// it was stat'ed before that verification: device, inode, size, mode,
// mtime and ctime. Any write, chmod, rename or replacement changes the
// ctime or the inode, and ctime cannot be set from user space, so a later
// launch that finds every stat unchanged sees the verified bytes. When a
// stat disagrees, the launch verifies in full again, replaces a changed
// tree, and writes a new stamp. docs/RATIONALE.md has the trade-off.
type stamp struct {
	Digest string              `json:"digest"`
	Blob   string              `json:"blob"`
	BlobAt fileStat            `json:"blob_stat"`
	Files  map[string]fileStat `json:"files"`
}

// fileStat is what identifies one version of a file's bytes.
type fileStat struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mode  uint32 `json:"mode"`
	Mtime int64  `json:"mtime_ns"`
	Ctime int64  `json:"ctime_ns"`
}

// racyMargin covers the file system's timestamp granularity: a file
// changed within one clock tick of being stat'ed can keep its ctime, so a
// stat taken within racyMargin of a file's last change is never written
// into a stamp (the next launch verifies in full and stamps then), as git
// treats its racily clean index entries.
var racyMargin = time.Second

func stampPath(dir string) string { return dir + ".stamp" }

// snapshotTree stats every file under dir by its slash path. Anything but
// a regular file or directory, or a platform without file identities,
// fails it.
func snapshotTree(dir string) (map[string]fileStat, error) {
	out := map[string]fileStat{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return errors.New("not a regular file")
		}
		st, ok := statFile(path)
		if !ok {
			return errors.New("no file identity")
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = st
		return nil
	})
	return out, err
}

// readStamp reads the stamp of the tree at dir.
func readStamp(dir string) (*stamp, error) {
	b, err := os.ReadFile(stampPath(dir))
	if err != nil {
		return nil, err
	}
	st := &stamp{}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, err
	}
	return st, nil
}

// holds reports whether the stamp still describes the blob at blobPath
// and the tree at dir for digest: every stat unchanged, no file added or
// removed.
func (st *stamp) holds(digest, blobPath, dir string) bool {
	if st.Digest != digest || st.Blob != blobPath {
		return false
	}
	if b, ok := statFile(blobPath); !ok || b != st.BlobAt {
		return false
	}
	tree, err := snapshotTree(dir)
	return err == nil && maps.Equal(tree, st.Files)
}

// racy reports whether any stat was taken within racyMargin of its file's
// last change, before or after since.
func (st *stamp) racy(since time.Time) bool {
	limit := since.Add(-racyMargin).UnixNano()
	if st.BlobAt.Ctime >= limit || st.BlobAt.Mtime >= limit {
		return true
	}
	for _, f := range st.Files {
		if f.Ctime >= limit || f.Mtime >= limit {
			return true
		}
	}
	return false
}

// write records the stamp beside dir. A stamp that cannot be written
// costs the next launch a full verification, not correctness.
func (st *stamp) write(dir string) {
	b, err := json.Marshal(st)
	if err != nil {
		return
	}
	_ = artifact.WriteFileRename(stampPath(dir), b, 0o644, false)
}
