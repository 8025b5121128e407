package artifact

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestPackReproducible(t *testing.T) {
	in := []Entry{{Path: "b.txt", Data: []byte("b")}, {Path: "murmur.yaml", Data: []byte("name: x\n")}, {Path: "a/tool.wasm", Data: []byte{0, 1, 2}, Exec: true}}
	rev := []Entry{in[2], in[0], in[1]}
	a, err := Pack(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Pack(rev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("same entries in another order packed to different bytes")
	}
	p, err := Open(a, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Names(); len(got) != 3 || got[0] != "a/tool.wasm" || got[2] != "murmur.yaml" {
		t.Fatalf("names = %v", got)
	}
	zr, _ := zip.NewReader(bytes.NewReader(a), int64(len(a)))
	for _, f := range zr.File {
		if !f.Modified.Equal(epoch) {
			t.Errorf("%s modified %v, want %v", f.Name, f.Modified, epoch)
		}
	}
	dest := filepath.Join(t.TempDir(), "out")
	if err := p.Extract(dest); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dest, "a", "tool.wasm"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("executable entry: %v %v", fi, err)
	}
}

func TestPackRefusesDuplicates(t *testing.T) {
	_, err := Pack([]Entry{{Path: "x"}, {Path: "X"}})
	if !errors.Is(err, ErrPackage) {
		t.Fatalf("err = %v, want ErrPackage", err)
	}
}

type rawEntry struct {
	name   string
	data   []byte
	mode   fs.FileMode
	method uint16
}

func rawZip(t testing.TB, ents ...rawEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range ents {
		h := &zip.FileHeader{Name: e.name, Method: e.method}
		if e.mode == 0 {
			e.mode = 0o644
		}
		h.SetMode(e.mode)
		f, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(e.data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOpenRefusesHostileArchives(t *testing.T) {
	zeros := make([]byte, 8<<20)
	tests := []struct {
		name string
		zip  []byte
		lim  Limits
	}{
		{"zip-slip", rawZip(t, rawEntry{name: "../evil", data: []byte("x")}), DefaultLimits},
		{"zip-slip inner", rawZip(t, rawEntry{name: "a/../../evil", data: []byte("x")}), DefaultLimits},
		{"absolute", rawZip(t, rawEntry{name: "/etc/passwd", data: []byte("x")}), DefaultLimits},
		{"backslash", rawZip(t, rawEntry{name: `..\evil`, data: []byte("x")}), DefaultLimits},
		{"drive letter", rawZip(t, rawEntry{name: `C:/evil`, data: []byte("x")}), DefaultLimits},
		{"dot segment", rawZip(t, rawEntry{name: "./a", data: []byte("x")}), DefaultLimits},
		{"symlink", rawZip(t, rawEntry{name: "link", data: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777}), DefaultLimits},
		{"device", rawZip(t, rawEntry{name: "dev", mode: fs.ModeDevice | 0o644}), DefaultLimits},
		{"duplicate", rawZip(t, rawEntry{name: "a", data: []byte("1")}, rawEntry{name: "a", data: []byte("2")}), DefaultLimits},
		{"duplicate ignoring case", rawZip(t, rawEntry{name: "Skill.md", data: []byte("1")}, rawEntry{name: "skill.md", data: []byte("2")}), DefaultLimits},
		{"file is a directory", rawZip(t, rawEntry{name: "a", data: []byte("1")}, rawEntry{name: "a/b", data: []byte("2")}), DefaultLimits},
		{"oversized entry", rawZip(t, rawEntry{name: "big", data: make([]byte, 2048)}), Limits{MaxEntries: 10, MaxFileBytes: 1024, MaxTotal: 1 << 20, MaxRatio: 1000}},
		{"too much in total", rawZip(t, rawEntry{name: "a", data: make([]byte, 600)}, rawEntry{name: "b", data: make([]byte, 600)}), Limits{MaxEntries: 10, MaxFileBytes: 1024, MaxTotal: 1000, MaxRatio: 1000}},
		{"too many entries", rawZip(t, rawEntry{name: "a"}, rawEntry{name: "b"}, rawEntry{name: "c"}), Limits{MaxEntries: 2, MaxFileBytes: 1024, MaxTotal: 1 << 20, MaxRatio: 1000}},
		{"zip bomb", rawZip(t, rawEntry{name: "bomb", data: zeros, method: zip.Deflate}), DefaultLimits},
		{"not a zip", []byte("PK\x03\x04 nonsense"), DefaultLimits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(tt.zip, tt.lim)
			if !errors.Is(err, ErrPackage) {
				t.Fatalf("Open err = %v, want ErrPackage", err)
			}
		})
	}
}

// A header that understates its size must not let more bytes through.
func TestReadFileRefusesLyingSize(t *testing.T) {
	b := rawZip(t, rawEntry{name: "a", data: []byte("hello world"), method: zip.Store})
	// Patch the central directory's uncompressed size (and local header's)
	// from 11 to 5 by rewriting every little-endian 11 after the name.
	i := bytes.LastIndex(b, []byte("PK\x01\x02"))
	b[i+24] = 5 // uncompressed size in the central directory
	p, err := Open(b, DefaultLimits)
	if err != nil {
		t.Skipf("reader refused the patched archive outright: %v", err)
	}
	dest := filepath.Join(t.TempDir(), "out")
	if err := p.Extract(dest); err == nil {
		t.Fatal("extract of an entry larger than its header succeeded")
	}
	if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("a failed extract left the destination behind")
	}
	left, _ := os.ReadDir(filepath.Dir(dest))
	if len(left) != 0 {
		t.Fatalf("a failed extract left %d entries behind", len(left))
	}
}

func TestExtractRefusesExistingDest(t *testing.T) {
	b, _ := Pack([]Entry{{Path: "a", Data: []byte("x")}})
	p, _ := Open(b, DefaultLimits)
	dest := t.TempDir()
	if err := p.Extract(dest); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("err = %v, want ErrExist", err)
	}
}

func FuzzOpenExtract(f *testing.F) {
	good, _ := Pack([]Entry{{Path: "murmur.yaml", Data: []byte("name: x\n")}, {Path: "d/skill.md", Data: []byte("# hi")}})
	f.Add(good)
	f.Add(rawZip(f, rawEntry{name: "../evil", data: []byte("x")}))
	f.Add(rawZip(f, rawEntry{name: "link", data: []byte("/"), mode: fs.ModeSymlink | 0o777}))
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Open(data, Limits{MaxEntries: 50, MaxFileBytes: 1 << 20, MaxTotal: 4 << 20, MaxRatio: 200})
		if err != nil {
			return
		}
		root := t.TempDir()
		dest := filepath.Join(root, "out")
		if err := p.Extract(dest); err != nil {
			if left, _ := os.ReadDir(root); len(left) != 0 {
				t.Fatalf("failed extract left %v", left)
			}
			return
		}
		// Everything written is inside dest, regular files and dirs only.
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(dest, path)
			if path != root && (rel == ".." || len(rel) > 2 && rel[:3] == "../") {
				t.Fatalf("wrote %s outside %s", path, dest)
			}
			if d.Type()&fs.ModeSymlink != 0 {
				t.Fatalf("wrote a symlink %s", path)
			}
			return nil
		})
	})
}
