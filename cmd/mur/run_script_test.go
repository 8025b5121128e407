package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/trace"
)

// Script commands for the mur run scripts (run_*.txtar). Those scripts run
// the real mur binary with the real driver and tool components, which
// make drivers guests builds from source into $MUR_GUEST_OUT; without it
// each script skips on its first line:
//
//	[!exec:mur-guests] skip 'needs the components: make test-run-scripts'
//
//	runhome                    publish murmur/driver-openai and murmur/file-go into $HOME's store
//	exits N CMD ARGS...        exec CMD (stdout and stderr kept for the next checks) and
//	                           require exit status N exactly: mur run's 1 and 2 differ
//	expand FILE...             replace ${PROVIDER} and ${WORK} in each file with their values
//	provider start SCRIPT      serve SCRIPT (providertest.ParseScript's JSON) on loopback; sets $PROVIDER
//	provider requests N        the double was asked exactly N times
//	provider field I PATH      print request I's body at PATH (dot-separated keys and indexes)
//	provider header I NAME     print request I's header NAME
//	tracevar NAME EVENT KEY    set $NAME to KEY of the newest session's first EVENT line
//	records                    set $RECORDS to the newest session's records directory
//	result [-re] WANT          the newest session's out/result.txt is exactly WANT (or matches
//	                           the regexp WANT in full); a WANT in double quotes is a Go
//	                           string literal, for a newline
//	trace [-count N] [-wait] EVENT [KEY=VALUE|KEY~REGEXP|KEY|-KEY]...
//	                           the newest session's trace.jsonl has a line (exactly N with
//	                           -count; -wait polls up to 20s for it) of EVENT whose fields match: =VALUE compares as JSON when
//	                           VALUE parses as JSON, else as a string; ~ matches a regexp
//	                           against the value's text; KEY alone is present, -KEY absent.
//	                           KEY is a dot path (retry.max_retries, instruction_files.0.status).
func init() {
	scriptCmds["runhome"] = cmdRunHome
	scriptCmds["expand"] = cmdExpand
	scriptCmds["exits"] = cmdExits
	scriptCmds["provider"] = cmdProvider
	scriptCmds["records"] = cmdRecords
	scriptCmds["result"] = cmdResult
	scriptCmds["trace"] = cmdTrace
	scriptCmds["tracevar"] = cmdTraceVar
	scriptSetups = append(scriptSetups, setupGuests)
}

// runComponents are the components the run scripts install: source
// manifest directory (from cmd/mur) and component name.
var runComponents = []struct{ dir, name string }{
	{"../../drivers/driver-openai", "driver-openai"},
	{"../../examples/file-go", "file-go"},
	{"../../examples/summarize-go", "summarize-go"},
	{"../../hooks/hook-compact", "hook-compact"},
	{"../../hooks/hook-debug", "hook-debug"},
}

// guests is what the run scripts share within one test process: the
// components packed once, the marker the skip line looks for, and one
// compile cache every script's HOME links to, so each component is
// compiled once rather than once per script.
var guests struct {
	once  sync.Once
	dir   string // $MUR_GUEST_OUT/.runscripts
	cache string // dir/cache-<digest of the packed components>
	err   error
}

// guestDir prepares $MUR_GUEST_OUT/.runscripts once per process: the
// packed components (rebuilt every run, so a rebuilt component is never
// served stale), bin/mur-guests, and the warm compile cache. It returns "" when
// MUR_GUEST_OUT is unset.
func guestDir() (string, error) {
	out := os.Getenv("MUR_GUEST_OUT")
	if out == "" {
		return "", nil
	}
	guests.once.Do(func() {
		guests.dir, guests.err = prepareGuests(out)
	})
	return guests.dir, guests.err
}

func prepareGuests(out string) (string, error) {
	dir := filepath.Join(out, ".runscripts")
	for _, d := range []string{"bin", "home", "src"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return "", err
		}
	}
	// testscript.Main put the mur command on this process's PATH.
	mur, err := exec.LookPath("mur")
	if err != nil {
		return "", fmt.Errorf("run scripts: %w", err)
	}
	for _, c := range runComponents {
		src := filepath.Join(dir, "src", c.name)
		if err := os.MkdirAll(src, 0o755); err != nil {
			return "", err
		}
		for from, to := range map[string]string{
			filepath.Join(c.dir, "murmur.yaml"): "murmur.yaml",
			filepath.Join(out, c.name+".wasm"):  c.name + ".wasm",
		} {
			b, err := os.ReadFile(from)
			if err != nil {
				return "", fmt.Errorf("run scripts need the components of make drivers guests hooks: %w", err)
			}
			if err := os.WriteFile(filepath.Join(src, to), b, 0o644); err != nil {
				return "", err
			}
		}
		// Built under a name of its own and renamed, so another test process
		// packing the same component never sees half a file.
		tmp := filepath.Join(dir, fmt.Sprintf("%s.%d.mur.zip", c.name, os.Getpid()))
		cmd := exec.Command(mur, "build", src, "-o", tmp)
		cmd.Env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"))
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("mur build %s: %w\n%s", c.name, err, b)
		}
		if err := os.Rename(tmp, filepath.Join(dir, c.name+".mur.zip")); err != nil {
			return "", err
		}
	}
	// The compile cache lives beside the packages it was compiled from:
	// one directory per set of packed components, so a rebuild starts a
	// fresh cache and the stale one is removed rather than growing by a
	// compiled driver per rebuild.
	h := sha256.New()
	for _, c := range runComponents {
		b, err := os.ReadFile(filepath.Join(dir, c.name+".mur.zip"))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	guests.cache = filepath.Join(dir, fmt.Sprintf("cache-%x", h.Sum(nil)[:6]))
	old, _ := filepath.Glob(filepath.Join(dir, "cache-*"))
	for _, o := range old {
		if o != guests.cache {
			os.RemoveAll(o)
		}
	}
	if err := os.MkdirAll(filepath.Join(guests.cache, "wasm"), 0o755); err != nil {
		return "", err
	}
	if err := warmCache(mur, dir); err != nil {
		return "", err
	}
	marker := filepath.Join(dir, "bin", "mur-guests")
	if err := os.WriteFile(marker, []byte("#!/bin/sh\n# The run scripts' [exec:mur-guests] condition: the components are built.\n"), 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// warmCapsule is a capsule whose one run compiles both components into
// the shared cache: a launch compiles every component it stages.
const warmCapsule = `name: run-scripts-warm
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %s/v1
      keyless: true
  - name: murmur/file-go
    version: "0.1.0"
    runtime: tool
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
`

// warmCache runs one session before any script does, so the scripts,
// which run in parallel, find both components compiled instead of each
// compiling them at once (tens of seconds of CPU apiece). A cache already
// warm from an earlier run makes this a fast launch.
func warmCache(mur, dir string) error {
	home := filepath.Join(dir, "home")
	if err := os.RemoveAll(home); err != nil {
		return err
	}
	capDir := filepath.Join(home, "cap")
	if err := os.MkdirAll(filepath.Join(home, ".murmur"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(capDir, 0o755); err != nil {
		return err
	}
	if err := os.Symlink(guests.cache, filepath.Join(home, ".murmur", "cache")); err != nil {
		return err
	}
	prov, err := providertest.Serve(
		providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "file-go", Input: `{"op":"list","path":"."}`}}},
		providertest.Step{Text: "warm"},
	)
	if err != nil {
		return err
	}
	defer prov.Close()
	if err := os.WriteFile(filepath.Join(capDir, "murmur.yaml"), []byte(fmt.Sprintf(warmCapsule, prov.URL)), 0o644); err != nil {
		return err
	}
	run := func(dir string, args ...string) error {
		cmd := exec.Command(mur, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+home)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("warming the compile cache: mur %s: %w\n%s", strings.Join(args, " "), err, b)
		}
		return nil
	}
	for _, c := range runComponents {
		if err := run(dir, "publish", filepath.Join(dir, c.name+".mur.zip"), "--scope", "murmur"); err != nil {
			return err
		}
	}
	if err := run(capDir, "install"); err != nil {
		return err
	}
	return run(capDir, "run", "--task", "warm up")
}

// setupGuests puts bin/mur-guests on every script's PATH when the
// components are there, and hands MUR_GUEST_OUT to the script.
func setupGuests(env *testscript.Env) error {
	dir, err := guestDir()
	if err != nil || dir == "" {
		return err
	}
	env.Setenv("MUR_GUEST_OUT", os.Getenv("MUR_GUEST_OUT"))
	env.Setenv("PATH", filepath.Join(dir, "bin")+string(filepath.ListSeparator)+env.Getenv("PATH"))
	return nil
}

func cmdRunHome(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: runhome")
	}
	dir, err := guestDir()
	ts.Check(err)
	if dir == "" {
		ts.Fatalf("runhome: MUR_GUEST_OUT is unset; start the script with [!exec:mur-guests] skip")
	}
	home := ts.Getenv("HOME")
	ts.Check(os.MkdirAll(filepath.Join(home, ".murmur"), 0o755))
	// The compile cache is keyed by each component's verified identity and
	// written by rename, so scripts share it safely.
	ts.Check(os.Symlink(guests.cache, filepath.Join(home, ".murmur", "cache")))
	for _, c := range runComponents {
		if err := ts.Exec("mur", "publish", filepath.Join(dir, c.name+".mur.zip"), "--scope", "murmur"); err != nil {
			ts.Fatalf("runhome: mur publish %s: %v", c.name, err)
		}
	}
}

func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N CMD ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: expand FILE...")
	}
	// Only the script's own addresses: manifests spell their credentials
	// ${NAME} too, and those are mur's to resolve, even when the script
	// sets NAME in the environment mur reads it from.
	keep := func(name string) string {
		if name == "PROVIDER" || name == "WORK" {
			return ts.Getenv(name)
		}
		return "${" + name + "}"
	}
	for _, f := range args {
		p := ts.MkAbs(f)
		ts.Check(os.WriteFile(p, []byte(os.Expand(ts.ReadFile(f), keep)), 0o644))
	}
}

var (
	provMu sync.Mutex
	provs  = map[*testscript.TestScript]*providertest.Server{}
)

func cmdProvider(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: provider start|requests|field|header")
	}
	provMu.Lock()
	s := provs[ts]
	provMu.Unlock()
	if args[0] != "start" && s == nil {
		ts.Fatalf("provider %s: no provider started", args[0])
	}
	switch {
	case args[0] == "start" && len(args) == 2 && !neg:
		steps, err := providertest.ParseScript([]byte(ts.ReadFile(args[1])))
		ts.Check(err)
		s, err = providertest.Serve(steps...)
		ts.Check(err)
		provMu.Lock()
		provs[ts] = s
		provMu.Unlock()
		ts.Defer(func() {
			s.Close()
			provMu.Lock()
			delete(provs, ts)
			provMu.Unlock()
		})
		ts.Setenv("PROVIDER", s.URL)
	case args[0] == "requests" && len(args) == 2:
		want, err := strconv.Atoi(args[1])
		ts.Check(err)
		got := len(s.Requests())
		if (got == want) == neg {
			ts.Fatalf("provider saw %d requests; want %s%d", got, map[bool]string{true: "not ", false: ""}[neg], want)
		}
	case args[0] == "field" && len(args) == 3 && !neg:
		r := request(ts, s, args[1])
		v, ok := lookup(r.Body, args[2])
		if !ok {
			ts.Fatalf("request %s has no %s: %s", args[1], args[2], r.Raw)
		}
		fmt.Fprintln(ts.Stdout(), text(v))
	case args[0] == "header" && len(args) == 3 && !neg:
		r := request(ts, s, args[1])
		fmt.Fprintln(ts.Stdout(), strings.Join(r.Header.Values(args[2]), "\n"))
	default:
		ts.Fatalf("usage: provider start SCRIPT | [!] requests N | field I PATH | header I NAME")
	}
}

func request(ts *testscript.TestScript, s *providertest.Server, idx string) providertest.Request {
	i, err := strconv.Atoi(idx)
	ts.Check(err)
	reqs := s.Requests()
	if i < 0 || i >= len(reqs) {
		ts.Fatalf("request %d: the provider saw %d", i, len(reqs))
	}
	return reqs[i]
}

// lookup follows a dot path of object keys and array indexes.
func lookup(v any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// text is a value as a script compares it: a string as itself, anything
// else as compact JSON.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// newestSession is the records directory of the newest session under
// $HOME/.murmur/records: ses_ ids sort by the time they were minted.
func newestSession(ts *testscript.TestScript) string {
	dir, err := findNewestSession(ts)
	ts.Check(err)
	return dir
}

func findNewestSession(ts *testscript.TestScript) (string, error) {
	var best string
	root := filepath.Join(ts.Getenv("HOME"), ".murmur", "records")
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || !strings.HasPrefix(d.Name(), "ses_") {
			return nil
		}
		if best == "" || d.Name() > filepath.Base(best) {
			best = p
		}
		return filepath.SkipDir
	})
	if best == "" {
		return "", fmt.Errorf("no session records under %s", root)
	}
	return best, nil
}

func cmdRecords(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: records")
	}
	ts.Setenv("RECORDS", newestSession(ts))
}

func cmdTraceVar(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: tracevar NAME EVENT KEY")
	}
	for _, f := range traceLines(ts, args[1]) {
		if v, ok := lookup(f, args[2]); ok {
			ts.Setenv(args[0], text(v))
			return
		}
	}
	ts.Fatalf("tracevar: no %s line has %s", args[1], args[2])
}

// traceLines is the newest session's EVENT lines, their fields decoded.
func traceLines(ts *testscript.TestScript, ev string) []map[string]any {
	out, err := readTrace(ts, ev)
	ts.Check(err)
	return out
}

func readTrace(ts *testscript.TestScript, ev string) ([]map[string]any, error) {
	dir, err := findNewestSession(ts)
	if err != nil {
		return nil, err
	}
	lines, err := trace.ReadFile(filepath.Join(dir, "trace.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, l := range trace.Filter(lines, ev) {
		fields := map[string]any{}
		for k, raw := range l.Fields {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, err
			}
			fields[k] = v
		}
		out = append(out, fields)
	}
	return out, nil
}

func cmdResult(ts *testscript.TestScript, neg bool, args []string) {
	re := len(args) == 2 && args[0] == "-re"
	if neg || (len(args) != 1 && !re) {
		ts.Fatalf("usage: result [-re] WANT")
	}
	want := args[len(args)-1]
	if q, err := strconv.Unquote(want); err == nil && strings.HasPrefix(want, `"`) {
		want = q
	}
	b, err := os.ReadFile(filepath.Join(newestSession(ts), "out", "result.txt"))
	ts.Check(err)
	got := string(b)
	if re {
		if !regexp.MustCompile(`^(?s:` + want + `)$`).MatchString(got) {
			ts.Fatalf("out/result.txt = %q, want ~ %q", got, want)
		}
		return
	}
	if got != want {
		ts.Fatalf("out/result.txt = %q, want %q", got, want)
	}
}

func cmdTrace(ts *testscript.TestScript, neg bool, args []string) {
	count, wait := -1, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-wait":
			wait, args = true, args[1:]
		case args[0] == "-count" && len(args) >= 2:
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			count, args = n, args[2:]
		default:
			ts.Fatalf("trace: unknown flag %s", args[0])
		}
	}
	if len(args) == 0 || (wait && neg) {
		ts.Fatalf("usage: trace [-count N] [-wait] EVENT [KEY=VALUE|KEY~REGEXP|KEY|-KEY]...")
	}
	conds := make([]func(map[string]any) error, len(args)-1)
	for i, a := range args[1:] {
		conds[i] = fieldCond(ts, a)
	}
	check := func() (ok bool, matched int, misses []string, err error) {
		lines, err := readTrace(ts, args[0])
		if err != nil {
			return false, 0, nil, err
		}
		for _, fields := range lines {
			var miss error
			for _, c := range conds {
				if miss = c(fields); miss != nil {
					break
				}
			}
			if miss == nil {
				matched++
				continue
			}
			b, _ := json.Marshal(fields)
			misses = append(misses, fmt.Sprintf("  %v: %s", miss, b))
		}
		ok = matched > 0
		if count >= 0 {
			ok = matched == count
		}
		return ok, matched, misses, nil
	}
	ok, matched, misses, err := check()
	// -wait reads a trace a background mur run is still writing: a
	// session not begun yet, or a line not there yet, is tried again.
	for deadline := time.Now().Add(20 * time.Second); wait && !ok && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		ok, matched, misses, err = check()
	}
	ts.Check(err)
	if ok == neg {
		want := "at least one"
		if count >= 0 {
			want = strconv.Itoa(count)
		}
		if neg {
			want = "none"
		}
		ts.Fatalf("trace: %d %s lines match %q, want %s; others:\n%s", matched, args[0], args[1:], want, strings.Join(misses, "\n"))
	}
}

// fieldCond parses one trace condition.
func fieldCond(ts *testscript.TestScript, a string) func(map[string]any) error {
	if strings.HasPrefix(a, "-") {
		key := a[1:]
		return func(f map[string]any) error {
			if v, ok := lookup(f, key); ok {
				return fmt.Errorf("%s present (%s)", key, text(v))
			}
			return nil
		}
	}
	i := strings.IndexAny(a, "=~")
	if i < 0 {
		return func(f map[string]any) error {
			if _, ok := lookup(f, a); !ok {
				return fmt.Errorf("%s absent", a)
			}
			return nil
		}
	}
	key, op, want := a[:i], a[i], a[i+1:]
	if op == '~' {
		re, err := regexp.Compile(want)
		ts.Check(err)
		return func(f map[string]any) error {
			v, ok := lookup(f, key)
			if !ok || !re.MatchString(text(v)) {
				return fmt.Errorf("%s = %s, want ~ %s", key, text(v), want)
			}
			return nil
		}
	}
	var wantJSON any
	isJSON := json.Unmarshal([]byte(want), &wantJSON) == nil
	return func(f map[string]any) error {
		v, ok := lookup(f, key)
		if !ok {
			return fmt.Errorf("%s absent, want %s", key, want)
		}
		if isJSON {
			if equalJSON(v, wantJSON) {
				return nil
			}
		} else if s, isStr := v.(string); isStr && s == want {
			return nil
		}
		return fmt.Errorf("%s = %s, want %s", key, text(v), want)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
