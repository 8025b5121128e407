package artifact

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/murmur/mur/internal/diag"
)

// CollectRequired reads the requires_files of the artifact in dir, in the
// order written. An entry that is absolute, has a .. component or is (or
// passes through) a symlink is refused with E-BLD-002; a missing one with
// E-IO-003, naming the first missing entry. pos and field locate the list
// in murmur.yaml for the diagnostic.
func CollectRequired(dir string, files []string, pos func(i int) diag.Pos) ([]Entry, error) {
	var out []Entry
	for i, f := range files {
		field := fmt.Sprintf("requires_files[%d]", i)
		p := pos(i)
		clean := path.Clean(f)
		switch {
		case f == "" || strings.ContainsRune(f, '\\'):
			return nil, diag.New(diag.BldPath, p, field, fmt.Sprintf("%q is not a plain relative path; write it with '/' separators relative to the source directory", f))
		case path.IsAbs(f) || filepath.IsAbs(f):
			return nil, diag.New(diag.BldPath, p, field, fmt.Sprintf("%q is an absolute path; write it relative to the source directory", f))
		case hasDotDot(f):
			return nil, diag.New(diag.BldPath, p, field, fmt.Sprintf("%q has a '..' component; requires_files may only name files inside the source directory", f))
		}
		full := filepath.Join(dir, filepath.FromSlash(clean))
		if err := noSymlinks(dir, clean); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, diag.New(diag.IOMissingFile, p, field, fmt.Sprintf("required file %q is missing from %s; create it or remove it from requires_files", f, dir))
			}
			return nil, diag.New(diag.BldPath, p, field, fmt.Sprintf("%q: %v; requires_files must name real files, not symlinks", f, err))
		}
		fi, err := os.Stat(full)
		if err != nil {
			return nil, diag.New(diag.IOMissingFile, p, field, fmt.Sprintf("required file %q is missing from %s; create it or remove it from requires_files", f, dir))
		}
		if !fi.Mode().IsRegular() {
			return nil, diag.New(diag.BldPath, p, field, fmt.Sprintf("%q is not a regular file", f))
		}
		b, err := os.ReadFile(full)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", full, err)
		}
		out = append(out, Entry{Path: clean, Data: b, Exec: fi.Mode()&0o111 != 0})
	}
	return out, nil
}

func hasDotDot(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == ".." {
			return true
		}
	}
	return false
}

// noSymlinks refuses rel (under dir) when it or any directory on its way is
// a symlink.
func noSymlinks(dir, rel string) error {
	cur := dir
	for _, seg := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, seg)
		fi, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symlink", cur)
		}
	}
	return nil
}

// SkillFolder is a skill folder read by the rules mur build packs it with
// and a local source installs it with: every regular file at its relative
// path, the skill file (found case-insensitively) renamed to skill.md, and
// the folder's own murmur.yaml left out. A symlink anywhere, two files that
// both name the skill file, or a root murmur-build.json are refused with
// E-BLD-002; a folder with no skill file with E-IO-001.
type SkillFolder struct {
	Dir   string
	Files []Entry
	// Manifest is the folder's own murmur.yaml, nil when it has none.
	Manifest []byte
}

// ReadSkillFolder reads dir as a skill folder.
func ReadSkillFolder(dir string) (*SkillFolder, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, diag.New(diag.IONotFound, diag.Pos{}, "source", fmt.Sprintf("skill source path not found: %s", dir))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	sf := &SkillFolder{Dir: dir}
	var skill []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			return diag.New(diag.BldPath, diag.Pos{}, "source", fmt.Sprintf("skill source refused: %s is a symlink", p))
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return diag.New(diag.BldPath, diag.Pos{}, "source", fmt.Sprintf("skill source refused: %s is not a regular file", p))
		}
		switch {
		case rel == "murmur-build.json":
			return diag.New(diag.BldPath, diag.Pos{}, "source", fmt.Sprintf("skill source refused: %s is a build recipe (murmur-build.json), not a skill folder", p))
		case rel == "murmur.yaml":
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sf.Manifest = b
			return nil
		case strings.EqualFold(rel, "skill.md"):
			skill = append(skill, rel)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := rel
		if strings.EqualFold(rel, "skill.md") {
			name = "skill.md"
		}
		sf.Files = append(sf.Files, Entry{Path: name, Data: b, Exec: info.Mode()&0o111 != 0})
		return nil
	})
	if err != nil {
		var d diag.Diagnostic
		if errors.As(err, &d) {
			return nil, d
		}
		return nil, fmt.Errorf("read skill folder %s: %w", dir, err)
	}
	switch len(skill) {
	case 0:
		return nil, diag.New(diag.IONotFound, diag.Pos{}, "source", fmt.Sprintf("skill source directory '%s' contains no skill.md", dir))
	case 1:
	default:
		sort.Strings(skill)
		return nil, diag.New(diag.BldPath, diag.Pos{}, "source", fmt.Sprintf("skill source refused: %s holds both %s; keep one", dir, strings.Join(skill, " and ")))
	}
	sort.Slice(sf.Files, func(i, j int) bool { return sf.Files[i].Path < sf.Files[j].Path })
	return sf, nil
}

// SkillFrontMatter reads name, version and description from a skill.md's
// YAML front matter (between leading '---' lines), each "" when absent.
func SkillFrontMatter(md []byte) (name, version, description string) {
	s := strings.ReplaceAll(string(md), "\r\n", "\n")
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return "", "", ""
	}
	fm, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return "", "", ""
	}
	for _, line := range strings.Split(fm, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch strings.TrimSpace(k) {
		case "name":
			name = v
		case "version":
			version = v
		case "description":
			description = v
		}
	}
	return name, version, description
}

var witExport = regexp.MustCompile(`murmur:[a-z][a-z0-9-]*/[a-z][a-z0-9-]*@[0-9]+\.[0-9]+\.[0-9]+`)

// ScanWIT lists the versioned murmur:* interface names a payload mentions.
// A component's imports and exports are stored as plain strings in its
// binary, so this finds every interface it was built against without
// instantiating it.
func ScanWIT(payloads ...[]byte) []string {
	seen := map[string]bool{}
	for _, b := range payloads {
		for _, m := range witExport.FindAll(b, -1) {
			seen[string(m)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FirstSentence is the description's first sentence, as mur index records
// it: up to and including the first '.', '!' or '?' followed by a space or
// the end, with whitespace collapsed.
func FirstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for i := 0; i < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && (i+1 == len(s) || s[i+1] == ' ') {
			return s[:i+1]
		}
	}
	return s
}
