// Package wit_test checks the WIT tree against the versioning policy in
// VERSIONING.md: every package declares an x.y.z version, and a package
// whose content differs from wit.lock has bumped its version as far as the
// change requires. `make wit-lock` (go test ./wit/ -run TestLock -update)
// rewrites the lock once the check passes.
package wit_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite wit.lock after a passing check")

const lockFile = "wit.lock"

type lockEntry struct {
	Version string            `json:"version"`
	Doc     string            `json:"doc"`
	Decls   map[string]string `json:"decls"`
}

type pkg struct {
	name    string // ns:name
	version semver
	dir     string
	lockEntry
}

var packageRE = regexp.MustCompile(`(?m)^\s*package\s+([a-z][a-z0-9-]*:[a-z][a-z0-9-]*)(@[^;\s]*)?\s*;`)

type semver struct{ major, minor, patch int }

func (v semver) String() string { return fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch) }

func parseSemver(s string) (semver, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return semver{}, fmt.Errorf("version %q is not x.y.z", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || (len(p) > 1 && p[0] == '0') {
			return semver{}, fmt.Errorf("version %q is not x.y.z", s)
		}
		n[i] = v
	}
	return semver{n[0], n[1], n[2]}, nil
}

func less(a, b semver) bool {
	if a.major != b.major {
		return a.major < b.major
	}
	if a.minor != b.minor {
		return a.minor < b.minor
	}
	return a.patch < b.patch
}

// Change levels, in increasing order.
const (
	changeNone = iota
	changePatch
	changeMinor
	changeMajor
)

var levelName = []string{"no", "a doc-only (patch)", "an additive (minor)", "a breaking (major)"}

// bumped reports whether going from old to cur is a large enough bump for
// a change of the given level. For 0.y.z the minor number is the breaking
// position, as the component model's version matching treats it.
func bumped(old, cur semver, level int) bool {
	switch level {
	case changeNone:
		return true
	case changePatch:
		return less(old, cur)
	case changeMinor:
		return cur.major > old.major || (cur.major == old.major && cur.minor > old.minor)
	}
	if old.major == 0 {
		return cur.major > 0 || cur.minor > old.minor
	}
	return cur.major > old.major
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:12])
}

// tokens splits WIT text into tokens, dropping comments when keepComments
// is false and keeping each comment as one token otherwise.
func tokens(src string, keepComments bool) []string {
	var out []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			if keepComments {
				out = append(out, strings.TrimSpace(src[i:i+j]))
			}
			i += j
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			end := len(src)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			if keepComments {
				out = append(out, src[i:end])
			}
			i = end
		case isWord(c):
			j := i
			for j < len(src) && isWord(src[j]) {
				j++
			}
			out = append(out, src[i:j])
			i = j
		case strings.HasPrefix(src[i:], "->"):
			out = append(out, "->")
			i += 2
		default:
			out = append(out, string(c))
			i++
		}
	}
	return out
}

func isWord(c byte) bool {
	return c == '-' || c == '%' || c == '.' || c == '_' || c == '@' || c == '+' ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

var typeKinds = map[string]bool{"record": true, "variant": true, "enum": true, "flags": true, "resource": true, "type": true}

// decls returns every declaration of a package body (its `package` line
// removed), keyed by where it lives and what it names, with the hash of
// its tokens. Top-level items (interfaces, worlds) are also hashed whole
// under "top <kind> <name>"; their items are keyed "<kind> <name>.<item>".
func decls(body string) map[string]string {
	toks := tokens(body, false)
	out := map[string]string{}
	var outer string
	for i := 0; i < len(toks); {
		// Top level: interface NAME { ... } or world NAME { ... }, or a
		// top-level `use`.
		start := i
		if toks[i] == "use" {
			for i < len(toks) && toks[i] != ";" {
				i++
			}
			i++
			key := "use " + strings.Join(toks[start:min(i, len(toks))], " ")
			out[key] = hash(key)
			continue
		}
		if i+2 >= len(toks) || toks[i+2] != "{" {
			// Not a shape this check knows: hash the rest whole so any
			// change still counts as breaking.
			out["?"+strconv.Itoa(i)] = hash(strings.Join(toks[i:], " "))
			break
		}
		outer = toks[i] + " " + toks[i+1]
		i += 3
		for i < len(toks) && toks[i] != "}" {
			itemStart := i
			depth := 0
			// A `use` item ends at its semicolon, braces and all.
			isUse := toks[i] == "use"
			for i < len(toks) && isUse {
				i++
				if toks[i-1] == ";" {
					break
				}
			}
			for i < len(toks) && !isUse {
				t := toks[i]
				i++
				if t == "{" {
					depth++
				} else if t == "}" {
					depth--
					if depth == 0 {
						break
					}
				} else if t == ";" && depth == 0 {
					break
				}
			}
			item := toks[itemStart:i]
			var key string
			switch {
			case len(item) > 1 && typeKinds[item[0]]:
				key = item[1]
			case len(item) > 1 && item[1] == ":":
				key = item[0]
			default: // use, import, export, include: identity is the text
				key = strings.Join(item, " ")
			}
			out[outer+"."+key] = hash(strings.Join(item, " "))
		}
		i++ // closing brace
		out["top "+outer] = hash(strings.Join(toks[start:min(i, len(toks))], " "))
	}
	return out
}

// classify returns the change level between a locked and a current
// package.
func classify(old, cur lockEntry) int {
	if old.Doc == cur.Doc {
		return changeNone
	}
	level := changePatch
	for k, h := range old.Decls {
		ch, ok := cur.Decls[k]
		if !ok {
			return changeMajor
		}
		if ch != h && !strings.HasPrefix(k, "top ") {
			return changeMajor
		}
	}
	for k := range cur.Decls {
		if _, ok := old.Decls[k]; !ok {
			level = changeMinor
		}
	}
	// Whole-interface hashes differ whenever an item was added; with no
	// item changed or removed that is additive, which the loop above
	// found. Anything else at this point is a comment or layout edit.
	return level
}

func readTree(t *testing.T) []pkg {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []pkg
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(e.Name(), "*.wit"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Errorf("%s: a package directory with no .wit file", e.Name())
			continue
		}
		sort.Strings(files)
		var p pkg
		var docText, body strings.Builder
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m := packageRE.FindStringSubmatchIndex(string(b))
			if m == nil {
				t.Errorf("%s: no package declaration", f)
				continue
			}
			name := string(b[m[2]:m[3]])
			if m[4] < 0 {
				t.Errorf("%s: package %s declares no version; every package declares @x.y.z (wit/VERSIONING.md)", f, name)
				continue
			}
			v, err := parseSemver(string(b[m[4]+1 : m[5]]))
			if err != nil {
				t.Errorf("%s: package %s: %v", f, name, err)
				continue
			}
			if p.name == "" {
				p.name, p.version, p.dir = name, v, e.Name()
			} else if p.name != name || p.version != v {
				t.Errorf("%s: declares %s@%s, but %s holds %s@%s: one package per directory", f, name, v, e.Name(), p.name, p.version)
			}
			rest := string(b[:m[0]]) + string(b[m[1]:])
			docText.WriteString(strings.Join(tokens(rest, true), " ") + "\n")
			body.WriteString(rest + "\n")
		}
		if p.name == "" {
			continue
		}
		if want := strings.ReplaceAll(p.name, ":", "-"); p.dir != want {
			t.Errorf("%s: package %s belongs in directory %s", p.dir, p.name, want)
		}
		p.Version = p.version.String()
		p.Doc = hash(docText.String())
		p.Decls = decls(body.String())
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestSpecVersions pins every package the specification lists at exactly
// its listed version.
func TestSpecVersions(t *testing.T) {
	want := map[string]string{
		"murmur:tool":             "0.1.0",
		"murmur:tool-registry":    "0.1.0",
		"murmur:capsule":          "0.1.0",
		"murmur:artifact-manager": "0.1.0",
		"murmur:shell":            "0.1.0",
		"murmur:message":          "0.1.0",
		"murmur:task":             "0.1.0",
		"murmur:hook":             "0.5.0",
		"murmur:runtime":          "0.2.0",
		"murmur:runtime-guest":    "0.1.0",
		"murmur:host":             "0.1.0",
		"act:core":                "0.4.0",
		"act:tools":               "0.2.0",
		"act:sessions":            "0.2.0",
	}
	got := map[string]string{}
	for _, p := range readTree(t) {
		got[p.name] = p.Version
	}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s: version %q, the specification lists %s", name, got[name], v)
		}
	}
}

// TestLock compares the tree with wit.lock.
func TestLock(t *testing.T) {
	pkgs := readTree(t)
	lock := map[string]lockEntry{}
	b, err := os.ReadFile(lockFile)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err == nil {
		if err := json.Unmarshal(b, &lock); err != nil {
			t.Fatalf("%s: %v", lockFile, err)
		}
	}
	stale := false
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.name] = true
		old, ok := lock[p.name]
		if !ok {
			stale = true
			continue
		}
		ov, err := parseSemver(old.Version)
		if err != nil {
			t.Fatalf("%s: %s: %v", lockFile, p.name, err)
		}
		level := classify(old, p.lockEntry)
		if !bumped(ov, p.version, level) {
			t.Errorf("%s: %s@%s has %s change since wit.lock's %s and must bump its version (wit/VERSIONING.md)",
				p.dir, p.name, p.version, levelName[level], old.Version)
			continue
		}
		if less(p.version, ov) {
			t.Errorf("%s: %s@%s is older than wit.lock's %s", p.dir, p.name, p.version, old.Version)
		}
		if old.Version != p.Version || old.Doc != p.Doc {
			stale = true
		}
	}
	for name := range lock {
		if !seen[name] {
			stale = true
		}
	}
	if t.Failed() || !stale {
		return
	}
	if !*update {
		t.Fatalf("%s is out of date with the tree: run make wit-lock and commit it", lockFile)
	}
	next := map[string]lockEntry{}
	for _, p := range pkgs {
		next[p.name] = p.lockEntry
	}
	out, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lockFile, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestClassify covers the policy's three levels on a small package.
func TestClassify(t *testing.T) {
	base := "interface run {\n  /// Runs.\n  record input { data: string }\n  run: func(i: input) -> string;\n}\n"
	entry := func(body string) lockEntry {
		return lockEntry{Doc: hash(strings.Join(tokens(body, true), " ")), Decls: decls(body)}
	}
	old := entry(base)
	tests := []struct {
		name string
		body string
		want int
	}{
		{"same", base, changeNone},
		{"comment", strings.Replace(base, "Runs.", "Runs one call.", 1), changePatch},
		{"layout", strings.Replace(base, "{ data: string }", "{\n    data: string\n  }", 1), changeNone},
		{"new function", strings.Replace(base, "-> string;\n", "-> string;\n  stop: func();\n", 1), changeMinor},
		{"new interface", base + "interface extra {\n  ping: func();\n}\n", changeMinor},
		{"field added", strings.Replace(base, "data: string", "data: string, more: u32", 1), changeMajor},
		{"signature", strings.Replace(base, "-> string", "-> u32", 1), changeMajor},
		{"removed", "interface run {\n  record input { data: string }\n}\n", changeMajor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(old, entry(tt.body)); got != tt.want {
				t.Errorf("classify = %s, want %s", levelName[got], levelName[tt.want])
			}
		})
	}
}

func TestBumped(t *testing.T) {
	v := func(s string) semver {
		x, err := parseSemver(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	tests := []struct {
		old, cur string
		level    int
		want     bool
	}{
		{"0.5.0", "0.5.0", changeNone, true},
		{"0.5.0", "0.5.1", changePatch, true},
		{"0.5.0", "0.5.0", changePatch, false},
		{"0.5.0", "0.6.0", changeMinor, true},
		{"0.5.0", "0.5.1", changeMinor, false},
		{"0.5.0", "0.6.0", changeMajor, true},
		{"0.5.0", "0.5.9", changeMajor, false},
		{"1.2.0", "1.3.0", changeMajor, false},
		{"1.2.0", "2.0.0", changeMajor, true},
	}
	for _, tt := range tests {
		if got := bumped(v(tt.old), v(tt.cur), tt.level); got != tt.want {
			t.Errorf("bumped(%s -> %s, %s) = %v, want %v", tt.old, tt.cur, levelName[tt.level], got, tt.want)
		}
	}
	if _, err := parseSemver("1.0"); err == nil {
		t.Error("parseSemver accepted 1.0")
	}
}

// FuzzDecls feeds arbitrary text to the WIT tokenizer and declaration
// splitter, which read every file of the tree.
func FuzzDecls(f *testing.F) {
	for _, s := range []string{
		"interface a { f: func(); }",
		"world w { import x:y/z@1.0.0; export q; }",
		"/* open comment",
		"interface { } } {",
		"use a:b/c@0.1.0.{d};",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		decls(s)
		tokens(s, true)
	})
}
