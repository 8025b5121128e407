// Package readonly is the pre-dispatch check behind
// capabilities.filesystem.read_only: before a shell line or a tool input is
// dispatched, it refuses what it can positively identify as a write to a
// protected subtree of the workdir. It decides nothing else; Landlock and
// the filesystem scope bound everything it cannot see.
package readonly

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/murmur/mur/internal/event"
)

// ErrEntry is the kind of a read_only entry that is absolute or escapes the
// workdir (the manifest refuses those with E-CAP-012 at staging).
var ErrEntry = errors.New("invalid read_only entry")

// ErrDenied is the kind of every refusal; the error is a *Denial.
var ErrDenied = errors.New("protected path")

// EventType is the record a refusal writes.
const EventType = "protected_path_denied"

// Checker matches candidate paths against one capsule's read_only entries.
// A nil or empty Checker covers nothing.
type Checker struct {
	workdir string // absolute, symlinks resolved
	entries []string
}

// New returns a checker for the workdir and the capsule's read_only entries.
// Empty and whitespace-only entries are dropped, as at parse; an absolute or
// escaping entry is an error of kind ErrEntry.
func New(workdir string, entries []string) (*Checker, error) {
	abs, err := filepath.Abs(workdir)
	if err != nil {
		return nil, fmt.Errorf("resolve workdir %q: %w", workdir, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	c := &Checker{workdir: abs}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.HasPrefix(e, "/") || filepath.IsAbs(e) {
			return nil, fmt.Errorf("read_only entry %q is absolute; give a workdir-relative path: %w", e, ErrEntry)
		}
		clean := path.Clean(filepath.ToSlash(e))
		if clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, fmt.Errorf("read_only entry %q escapes the workdir through ..: %w", e, ErrEntry)
		}
		c.entries = append(c.entries, clean)
	}
	return c, nil
}

// Entries returns the cleaned entries the checker enforces.
func (c *Checker) Entries() []string {
	if c == nil {
		return nil
	}
	return append([]string(nil), c.entries...)
}

// Active reports whether any entry is declared.
func (c *Checker) Active() bool { return c != nil && len(c.entries) > 0 }

// Covered resolves p against dir (the workdir when dir is "") and reports
// the workdir-relative path and the entry covering it. An absolute path, a
// relative one and a symlink into a covered subtree resolve to the same
// answer; a path that resolves outside the workdir is covered by nothing.
func (c *Checker) Covered(p, dir string) (rel, entry string, ok bool) {
	if dir == "" {
		dir = c.workdir
	}
	return c.covered(p, dir)
}

// covered is Covered for a command whose working directory is cwd, ""
// when the check cannot place it (then only an absolute path is judged).
func (c *Checker) covered(p, cwd string) (rel, entry string, ok bool) {
	if !c.Active() || p == "" {
		return "", "", false
	}
	resolved, placed := resolve(p, cwd)
	if !placed {
		return "", "", false
	}
	r, err := filepath.Rel(c.workdir, resolved)
	if err != nil {
		return "", "", false
	}
	r = filepath.ToSlash(r)
	if r == ".." || strings.HasPrefix(r, "../") {
		return "", "", false
	}
	for _, e := range c.entries {
		if e == "." || r == e || strings.HasPrefix(r, e+"/") {
			return r, e, true
		}
	}
	return "", "", false
}

// check matches one candidate of a tool input, expanding a glob against
// the filesystem the way a shell would (a pattern that matches nothing
// stays literal).
func (c *Checker) check(p, dir, rule string) *Denial {
	if dir == "" {
		dir = c.workdir
	}
	var cands []string
	if strings.ContainsAny(p, "*?[") {
		pat := p
		if !filepath.IsAbs(pat) {
			pat = filepath.Join(dir, pat)
		}
		if m, err := filepath.Glob(pat); err == nil {
			cands = m // the paths the shell will pass, named first
		}
	}
	cands = append(cands, p)
	for _, cand := range cands {
		if rel, entry, ok := c.covered(cand, dir); ok {
			return &Denial{Path: rel, Entry: entry, Rule: rule}
		}
	}
	return nil
}

// resolve returns the absolute path a command whose working directory is
// cwd reaches for p, following symlinks component by component so a ".."
// after a symlink climbs from the link's target, as path lookup does. From
// the first component that does not exist the rest is appended as written
// (cleaned), so a path about to be created resolves the way its existing
// parent does.
//
// The lookup runs in the runtime's process, so the entries of /proc that
// name a process — self, thread-self, a pid, and /dev/fd and /dev/std*
// through them — are not followed there: cwd and root are the command's
// own (cwd and /), and anything else under them (fd/N, a descriptor's
// file) is decided by the command's own redirections, which are checked
// themselves; placed is false for those, and for a relative path or a
// cwd link when cwd is "" (unknown).
func resolve(p, cwd string) (path string, placed bool) {
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return "", false
		}
		p = cwd + "/" + p // not Join: Clean would undo a ".." after a symlink
	}
	pending := strings.Split(filepath.ToSlash(p), "/")
	cur := "/"
	hops := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		if cur == "/proc" && (c == "self" || c == "thread-self" || isDigits(c)) {
			for len(pending) >= 2 && pending[0] == "task" {
				pending = pending[2:] // /proc/<pid>/task/<tid>/ is the same process's view
			}
			if len(pending) == 0 {
				return "", false
			}
			switch pending[0] {
			case "cwd":
				if cwd == "" {
					return "", false
				}
				pending = append(strings.Split(cwd, "/"), pending[1:]...)
				cur = "/"
			case "root":
				pending = pending[1:]
				cur = "/"
			default:
				return "", false
			}
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			// Missing (or unreadable): the rest cannot be followed.
			return filepath.Join(append([]string{next}, pending...)...), true
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(next)
			if hops++; err != nil || hops > maxHops {
				// A link loop ends here, as the kernel's ELOOP does.
				return filepath.Join(append([]string{next}, pending...)...), true
			}
			if filepath.IsAbs(target) {
				cur = "/"
			}
			pending = append(strings.Split(filepath.ToSlash(target), "/"), pending...)
			continue
		}
		cur = next
	}
	return cur, true
}

// maxHops bounds symlink chains the way the kernel's ELOOP does.
const maxHops = 40

// Denial is one refused call: what it would have written, which entry
// protects it, and the rule that identified the write.
type Denial struct {
	// Path is the workdir-relative path the call would write.
	Path string
	// Entry is the read_only entry that covers Path.
	Entry string
	// Rule says how the write was identified, e.g. `redirection ">"`,
	// `write target of "rm"`, `key "dest"`.
	Rule string
	// Location is where in a tool input the path sat (edits[].path), or ""
	// for a shell line.
	Location string
	// Tool is the tool called (the binary for a shell tool).
	Tool string
	// Command is the shell line or arguments, for shell calls.
	Command string
}

func (d *Denial) Error() string {
	return fmt.Sprintf("%s: %q is under read_only entry %q (%s)", ErrDenied, d.Path, d.Entry, d.Rule)
}

// Is makes errors.Is(err, ErrDenied) hold for a *Denial.
func (d *Denial) Is(target error) bool { return target == ErrDenied }

// Message is what the model reads instead of a result: the path, the rule,
// that nothing ran, and that the path is still readable.
func (d *Denial) Message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Refused before running: this call would write %q", d.Path)
	if d.Location != "" {
		fmt.Fprintf(&b, " (input %s)", d.Location)
	}
	fmt.Fprintf(&b, ", which is under %q in capabilities.filesystem.read_only; the write was identified by %s. ", d.Entry, d.Rule)
	b.WriteString("Nothing ran. The path is still readable; write somewhere outside the read-only subtrees instead.")
	return b.String()
}

// Event is the protected_path_denied record for the refusal.
func (d *Denial) Event() event.Event {
	f := map[string]any{
		"tool":  d.Tool,
		"path":  d.Path,
		"entry": d.Entry,
		"rule":  d.Rule,
	}
	if d.Location != "" {
		f["location"] = d.Location
	}
	if d.Command != "" {
		f["command"] = d.Command
	}
	return event.Event{Type: EventType, Fields: f}
}
