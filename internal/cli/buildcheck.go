package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/murmur/mur/internal/act"
	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/store"
	"github.com/murmur/mur/internal/wasm/cm"
)

// world is one export a component may satisfy its role with: an
// interface of a murmur: package, at the version this mur serves, and the
// functions the host calls on it.
type world struct {
	pkg, iface string
	funcs      []string
}

func (w world) name() string { return w.pkg + "/" + w.iface + "@" + store.ServedWIT[w.pkg] }

// worldsFor lists the exports that satisfy role; any one does.
func worldsFor(role string) []world {
	var hook []string
	for _, h := range component.HookHandlers {
		if !h.Optional {
			hook = append(hook, h.Name)
		}
	}
	switch role {
	case manifest.RoleTool:
		return []world{{"murmur:tool", "run", []string{"run"}}}
	case manifest.RoleDriver:
		return []world{
			{"murmur:tool", "run", []string{"run"}},
			{"murmur:driver", "process", []string{"describe", "parse-version", "launch", "parse-line"}},
		}
	case manifest.RoleHook:
		return []world{{"murmur:hook", "lifecycle", hook}}
	case "capsule":
		return []world{{"murmur:capsule", "run", []string{"run"}}}
	}
	return nil
}

// compileCacheDir is where a launch keeps compiled components
// (~/.murmur/cache/wasm), so what mur build compiles a run finds.
func compileCacheDir() (string, error) {
	home, err := config.MurmurDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "cache", "wasm"), nil
}

// checkComponent compiles a wasm artifact's component into the compile
// cache, keyed as the launch of the installed package keys it, and checks
// that it exports what its role needs and imports only murmur: packages
// this mur serves. checked names what was found, for the build's report.
func checkComponent(b *artifact.Built) (checked string, ds diag.List) {
	a := b.Manifest
	f, i, ok := b.ComponentFile()
	if !ok || a.ExecutionType() != manifest.ExecWasm {
		return "", nil
	}
	field := fmt.Sprintf("requires_files[%d]", i)
	pos := a.Pos(field)
	dir, err := compileCacheDir()
	if err != nil {
		return "", diag.List{diag.New(diag.BldComponent, pos, field, err.Error())}
	}
	rt, err := component.New(cm.Config{CacheDir: dir})
	if errors.Is(err, cm.ErrNoCgo) {
		return "", diag.List{diag.New(diag.BldComponent, pos, field, fmt.Sprintf("%q cannot be checked: %v", f.Path, err))}
	}
	if err != nil {
		return "", diag.List{diag.New(diag.BldComponent, pos, field, err.Error())}
	}
	defer rt.Close()
	c, err := rt.CompileFrom(artifact.ComponentID(b.Digest, artifact.InstallPath(a.Name, f.Path)), func() ([]byte, error) { return f.Data, nil })
	if err != nil {
		return "", diag.List{diag.New(diag.BldComponent, pos, field, fmt.Sprintf("%q does not compile: %s; rebuild it with tools/guest/build.sh", f.Path, oneLine(act.CompileError(a.Name, err))))}
	}
	defer c.Close()
	if p := importProblem(c.Imports()); p != "" {
		return "", diag.List{diag.New(diag.BldWorld, pos, field, fmt.Sprintf("%q %s", f.Path, p))}
	}
	if a.Runtime == manifest.RoleTool || a.Runtime == "" {
		if isACT, found, p := actExports(f.Data, c.Exports()); isACT {
			if p != "" {
				return "", diag.List{diag.New(diag.BldWorld, pos, field, fmt.Sprintf("%q %s", f.Path, p))}
			}
			return fmt.Sprintf("%s: %s; compiled into %s", f.Path, found, dir), nil
		}
	}
	w, p := fitWorld(a.Runtime, c.Exports())
	if p != "" {
		return "", diag.List{diag.New(diag.BldWorld, pos, field, fmt.Sprintf("%q %s", f.Path, p))}
	}
	return fmt.Sprintf("%s exports %s; compiled into %s", f.Path, w.name(), dir), nil
}

// fitWorld finds the export that satisfies role among exports, or says
// what is wrong, naming what the component does export.
func fitWorld(role string, exports []cm.Import) (world, string) {
	worlds := worldsFor(role)
	if len(worlds) == 0 {
		return world{}, ""
	}
	byName := map[string]cm.Import{}
	var names []string
	for _, e := range exports {
		byName[e.Name] = e
		names = append(names, e.Name)
	}
	var problems []string
	for _, w := range worlds {
		e, ok := byName[w.name()]
		if !ok {
			problems = append(problems, missingExport(w, names))
			continue
		}
		var lack []string
		for _, fn := range w.funcs {
			if !slices.Contains(e.Funcs, fn) {
				lack = append(lack, fn)
			}
		}
		if len(lack) == 0 {
			return w, ""
		}
		problems = append(problems, fmt.Sprintf("exports %s without %s", w.name(), strings.Join(lack, ", ")))
	}
	return world{}, strings.Join(problems, "; and it ") + fmt.Sprintf("; a runtime: %s component must export %s", role, worldNames(worlds))
}

// missingExport says how w is missing from the exports named names: at
// another version (rebuild against the served one) or not at all.
func missingExport(w world, names []string) string {
	prefix := w.pkg + "/" + w.iface + "@"
	for _, n := range names {
		if v, ok := strings.CutPrefix(n, prefix); ok {
			return fmt.Sprintf("exports %s%s, but this mur serves %s (run mur version for its WIT level): rebuild it against that version", prefix, v, w.name())
		}
	}
	have := "nothing"
	if len(names) > 0 {
		have = strings.Join(names, ", ")
	}
	return fmt.Sprintf("does not export %s (it exports %s)", w.name(), have)
}

func worldNames(ws []world) string {
	var n []string
	for _, w := range ws {
		n = append(n, w.name())
	}
	return strings.Join(n, " or ")
}

// importProblem says which murmur: import this mur cannot serve: an
// unknown package, or a version no served one is compatible with (same
// major, and same minor below 1.0, as the linker matches them).
func importProblem(imports []cm.Import) string {
	for _, im := range imports {
		if !strings.HasPrefix(im.Name, "murmur:") {
			continue
		}
		name, ver, _ := strings.Cut(im.Name, "@")
		pkg, _, _ := strings.Cut(name, "/")
		served, ok := store.ServedWIT[pkg]
		if !ok {
			return fmt.Sprintf("imports %s, a package this mur does not serve", im.Name)
		}
		if !semverCompatible(served, ver) {
			return fmt.Sprintf("imports %s, but this mur serves %s@%s: rebuild it against that version", im.Name, pkg, served)
		}
	}
	return ""
}

// semverCompatible reports whether a definition at served can serve an
// import at want: same major, and for 0.x the same minor; pre-releases
// only exactly.
func semverCompatible(served, want string) bool {
	if served == want {
		return true
	}
	s, ok1 := splitSemver(served)
	w, ok2 := splitSemver(want)
	if !ok1 || !ok2 || s[0] != w[0] {
		return false
	}
	return s[0] != 0 || s[1] == w[1]
}

func splitSemver(v string) ([3]int, bool) {
	var out [3]int
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

// oneLine is wasmtime's error on one line, without its native backtrace.
func oneLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "Stack backtrace:")
	return strings.Join(strings.Fields(msg), " ")
}
