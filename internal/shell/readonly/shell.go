package readonly

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// CheckLine checks a shell tool call to an interpreter: line is the whole
// -c script, run in the workdir.
func (c *Checker) CheckLine(binary, line string) *Denial {
	if !c.Active() {
		return nil
	}
	if d := c.checkScript(binary, line); d != nil {
		d.Tool, d.Command = binary, line
		return d
	}
	return nil
}

// CheckArgs checks a direct invocation of binary with argv args (the
// arguments alone), as a non-interpreter shell tool or murmur:shell/execute
// runs it. An interpreter given -c has its script checked as a line.
func (c *Checker) CheckArgs(binary string, args []string) *Denial {
	if !c.Active() {
		return nil
	}
	var d *Denial
	if IsShellInterpreter(binary) {
		if script, ok := dashC(args); ok {
			d = c.checkScript(binary, script)
		}
	} else {
		w := &walker{c: c}
		w.targets(filepath.Base(binary), args, c.workdir)
		d = w.d
	}
	if d != nil {
		d.Tool, d.Command = binary, strings.Join(args, " ")
	}
	return d
}

// dashC finds the script an interpreter runs with -c (also inside a short
// flag cluster such as -ec).
func dashC(args []string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			return "", false
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a[1:], 'c') {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return "", false
		}
	}
	return "", false
}

// variant is the language the binary reads; anything mvdan.cc/sh does not
// model is read as bash, the superset closest to it.
func variant(binary string) syntax.LangVariant {
	switch filepath.Base(binary) {
	case "sh", "dash":
		return syntax.LangPOSIX
	case "ksh", "mksh":
		return syntax.LangMirBSDKorn
	case "zsh":
		return syntax.LangZsh
	}
	return syntax.LangBash
}

// parse returns the statements of script up to its first syntax error:
// the shell runs a script one complete command at a time, so what precedes
// an error still runs and is still checked.
func parse(binary, script string) []*syntax.Stmt {
	return parseStmts(syntax.NewParser(syntax.Variant(variant(binary))), script)
}

func parseStmts(p *syntax.Parser, script string) (out []*syntax.Stmt) {
	failed := false
	// The iterator is drained rather than stopped at the error: v3.14's
	// Parser.Stmts breaks out early and the parser then yields again,
	// which panics.
	for st, err := range p.StmtsSeq(strings.NewReader(script)) {
		if err != nil {
			failed = true
		}
		if !failed && st != nil {
			out = append(out, st)
		}
	}
	return out
}

// dirs is the set of working directories a command may run in at one point
// of a line, sorted; "" stands for one the check cannot place (a cd to an
// expansion). A write target is checked in each of them.
type dirs []string

// maxDirs bounds the set; past it the rest is "a directory the check cannot
// place".
const maxDirs = 32

func (s dirs) union(t dirs) dirs {
	out := slices.Clone(s)
	for _, d := range t {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) > maxDirs {
		out = append(out[:maxDirs-1], "")
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// unknownWord stands for a word the check cannot expand (a parameter it
// does not know, a command substitution, a ~): it keeps its position in
// argv and names nothing.
const unknownWord = "\x00"

// budget bounds the statements one check visits: nested loops that change
// directory are visited twice each, so pathological nesting falls back to
// the flat walk, which is linear.
const budget = 20000

var errBudget = errors.New("walk budget exhausted")

// walker walks the syntax tree of a line, following the directories a cd
// can move each command to, and records the first write it finds to a
// protected path.
type walker struct {
	c      *Checker
	binary string
	seen   dirs           // every directory the line may reach
	funcs  []*syntax.Stmt // function bodies, checked once the whole line is seen
	flat   bool           // every command runs in any directory of seen
	steps  int
	depth  int // nested eval and -c scripts
	d      *Denial
	// cdMayStay is set when the line can make cd something else (a
	// function named cd, an alias, enable -n): a cd then may leave the
	// shell where it was even when it "succeeds".
	cdMayStay bool
}

// scan sets cdMayStay when stmts can redefine what cd does.
func (w *walker) scan(stmts []*syntax.Stmt) {
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.FuncDecl:
				if x.Name == nil {
					break
				}
				switch x.Name.Value {
				case "cd", "pushd", "popd":
					w.cdMayStay = true
				}
			case *syntax.CallExpr:
				if len(x.Args) > 0 {
					switch x.Args[0].Lit() {
					case "alias", "enable":
						w.cdMayStay = true
					}
				}
			}
			return !w.cdMayStay
		})
	}
}

func (c *Checker) checkScript(binary, script string) (d *Denial) {
	stmts := parse(binary, script)
	start := dirs{c.workdir}
	w := &walker{c: c, binary: binary, seen: start}
	if err := w.run(stmts, start); errors.Is(err, errBudget) {
		// Too much nesting to follow each cd: check every command in every
		// directory the line reaches, twice so a write before a cd is also
		// checked after it (a loop's next turn).
		w = &walker{c: c, binary: binary, seen: start, flat: true}
		_ = w.run(stmts, start)
		if w.d == nil {
			_ = w.run(stmts, start)
		}
	}
	return w.d
}

func (w *walker) run(stmts []*syntax.Stmt, start dirs) (err error) {
	w.scan(stmts)
	defer func() {
		if r := recover(); r != nil {
			if r != errBudget { //nolint:errorlint // the sentinel itself is panicked
				panic(r)
			}
			err = errBudget
		}
	}()
	w.list(stmts, start)
	// A function may be called after any cd, so its body is checked in
	// every directory the line reaches.
	for i := 0; i < len(w.funcs) && w.d == nil; i++ {
		w.stmt(w.funcs[i], w.seen)
	}
	return nil
}

// list walks statements in sequence. It returns the directories after the
// last one succeeded, and every directory the list may end in.
func (w *walker) list(stmts []*syntax.Stmt, s dirs) (succ, all dirs) {
	succ, all = s, s
	for _, st := range stmts {
		succ, all = w.stmt(st, all)
	}
	return succ, all
}

// stmt walks one statement in the directories s. It returns the
// directories it leaves behind when it succeeds, and in any case (a
// superset of s: a cd that fails leaves the shell where it was).
func (w *walker) stmt(st *syntax.Stmt, s dirs) (succ, all dirs) {
	if w.steps++; w.steps > budget && !w.flat {
		panic(errBudget)
	}
	if w.d != nil || st == nil {
		return s, s
	}
	if w.flat {
		s = w.seen
	}
	// Redirections are opened before the command runs, where it starts.
	for _, r := range st.Redirs {
		w.redir(r, s)
	}
	if st.Cmd == nil {
		return s, s
	}
	succ, all = w.cmd(st.Cmd, s)
	switch {
	case st.Background || st.Coprocess:
		return s, s // a subshell: its cd stays there
	case st.Negated:
		return all, all
	}
	return succ, all
}

func (w *walker) cmd(cmd syntax.Command, s dirs) (succ, all dirs) {
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		return w.call(x, s)
	case *syntax.BinaryCmd:
		switch x.Op {
		case syntax.AndStmt:
			sx, ax := w.stmt(x.X, s)
			sy, ay := w.stmt(x.Y, sx)
			return sy, ax.union(ay)
		case syntax.OrStmt:
			sx, ax := w.stmt(x.X, s)
			sy, ay := w.stmt(x.Y, ax)
			return sx.union(sy), ax.union(ay)
		}
		// A pipeline: each side runs in its own subshell.
		w.stmt(x.X, s)
		w.stmt(x.Y, s)
		return s, s
	case *syntax.Subshell:
		w.list(x.Stmts, s)
		return s, s
	case *syntax.Block:
		return w.list(x.Stmts, s)
	case *syntax.IfClause:
		all = s
		for c := x; c != nil; c = c.Else {
			cs, ca := w.list(c.Cond, all)
			_, ta := w.list(c.Then, cs)
			all = all.union(ca).union(ta)
		}
		return all, all
	case *syntax.WhileClause:
		return w.loop(s, func(s dirs) dirs {
			cs, ca := w.list(x.Cond, s)
			_, da := w.list(x.Do, cs)
			return ca.union(da)
		})
	case *syntax.ForClause:
		w.subst(x.Loop, s)
		return w.loop(s, func(s dirs) dirs {
			_, da := w.list(x.Do, s)
			return da
		})
	case *syntax.CaseClause:
		w.subst(x.Word, s)
		all = s
		for _, item := range x.Items {
			for _, p := range item.Patterns {
				w.subst(p, s)
			}
			_, ia := w.list(item.Stmts, s)
			all = all.union(ia)
		}
		return all, all
	case *syntax.FuncDecl:
		w.funcs = append(w.funcs, x.Body)
		return s, s
	case *syntax.TimeClause:
		return w.stmt(x.Stmt, s)
	case *syntax.CoprocClause:
		w.stmt(x.Stmt, s)
		return s, s
	case *syntax.TestDecl:
		w.subst(x.Description, s)
		w.stmt(x.Body, s)
		return s, s
	}
	// declare/export/local, [[ ]], (( )), let: only their substitutions run
	// commands.
	w.subst(cmd, s)
	return s, s
}

// loop walks a loop body twice when its first turn changes directory, so a
// write is checked where the next turn runs it; further turns go where the
// check cannot follow.
func (w *walker) loop(s dirs, body func(dirs) dirs) (succ, all dirs) {
	a1 := s.union(body(s))
	if w.flat || slices.Equal(a1, s) {
		return a1, a1
	}
	a2 := a1.union(body(a1))
	if !slices.Equal(a2, a1) {
		a2 = a2.union(dirs{""})
	}
	return a2, a2
}

// subst walks the command and process substitutions anywhere inside n:
// they run in the directory of the command that holds them, in a subshell.
func (w *walker) subst(n syntax.Node, s dirs) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			w.list(x.Stmts, s)
			return false
		case *syntax.ProcSubst:
			w.list(x.Stmts, s)
			return false
		}
		return w.d == nil
	})
}

func (w *walker) redir(r *syntax.Redirect, s dirs) {
	if r.Word != nil {
		w.subst(r.Word, s)
	}
	if r.Hdoc != nil {
		w.subst(r.Hdoc, s)
	}
	if r.Word == nil {
		return
	}
	op := r.Op.String()
	if r.N != nil {
		op = r.N.Value + op
	}
	for _, dir := range s {
		word := []*syntax.Word{r.Word}
		// Only a write is expanded against the filesystem (a glob).
		if !slices.ContainsFunc(w.fields(word, dir, false), func(t string) bool { return t != unknownWord && writeRedir(r, t) }) {
			continue
		}
		for _, t := range w.fields(word, dir, true) {
			if t != unknownWord && writeRedir(r, t) {
				w.check(t, dir, fmt.Sprintf("the redirection %q", op))
			}
		}
	}
}

// call walks a simple command in each directory of s.
func (w *walker) call(x *syntax.CallExpr, s dirs) (succ, all dirs) {
	for _, a := range x.Assigns {
		w.subst(a, s)
	}
	for _, a := range x.Args {
		w.subst(a, s)
	}
	if len(x.Args) == 0 {
		return s, s
	}
	for _, dir := range s {
		argv := unwrap(w.fields(x.Args, dir, false))
		if len(argv) == 0 || argv[0] == unknownWord {
			succ = succ.union(dirs{dir})
			continue
		}
		name := filepath.Base(argv[0])
		if writeCommand(name) || name == "cd" || name == "pushd" {
			// Globs are read from the filesystem only for a command whose
			// operands the table names, so a read-only line never walks a
			// tree to be judged.
			argv = unwrap(w.fields(x.Args, dir, true))
		}
		switch name {
		case "cd", "pushd":
			t := cdTarget(dir, argv[1:])
			w.seen = w.seen.union(dirs{t})
			succ = succ.union(dirs{t})
			if w.cdMayStay {
				succ = succ.union(dirs{dir})
			}
			continue
		case "popd":
			succ = succ.union(w.seen) // back to a directory the line reached
			continue
		case "eval":
			if !slices.Contains(argv[1:], unknownWord) {
				es, _ := w.nested(w.binary, strings.Join(argv[1:], " "), dirs{dir})
				succ = succ.union(es)
				continue
			}
		}
		if IsShellInterpreter(name) {
			if script, ok := dashC(argv[1:]); ok && script != unknownWord {
				w.nested(name, script, dirs{dir}) // a new process: its cd stays there
			}
		}
		w.targets(name, argv[1:], dir)
		succ = succ.union(dirs{dir})
	}
	return succ, s.union(succ)
}

// maxDepth bounds eval and -c scripts nested in one another.
const maxDepth = 8

// nested walks a script a command hands to a shell (eval's words, bash -c).
func (w *walker) nested(binary, script string, s dirs) (succ, all dirs) {
	if w.depth >= maxDepth {
		return s, s
	}
	w.depth++
	defer func() { w.depth-- }()
	stmts := parse(binary, script)
	w.scan(stmts)
	return w.list(stmts, s)
}

// targets checks the write-target arguments of one command run in dir.
func (w *walker) targets(name string, args []string, dir string) {
	for _, t := range writeTargets(name, args) {
		w.check(t, dir, fmt.Sprintf("a write-target argument of %q", name))
	}
}

// cdTarget follows a literal cd; an argument the check cannot place (none,
// -, an expansion it does not know) leaves the directory unknown ("").
// A cd is logical, as the shell's is: .. removes the last name written.
func cdTarget(dir string, args []string) string {
	if len(args) > 0 && (args[0] == "-L" || args[0] == "-P" || args[0] == "--") {
		args = args[1:]
	}
	if len(args) != 1 {
		return ""
	}
	a := args[0]
	switch {
	case a == "-" || a == unknownWord:
		return ""
	case filepath.IsAbs(a):
		return filepath.Clean(a)
	case dir == "":
		return ""
	}
	return filepath.Join(dir, a)
}

// fields expands words as the shell would in dir: quotes (ANSI-C $'...'
// included), braces, $PWD and, with glob, globs against the filesystem. A word that
// needs anything the check does not know becomes unknownWord.
func (w *walker) fields(words []*syntax.Word, dir string, glob bool) []string {
	cfg := &expand.Config{
		Env: expand.FuncEnviron(func(name string) string {
			switch name {
			case "PWD":
				return dir
			case "$", "BASHPID":
				// The shell's own process, whose cwd and root are the
				// command's: /proc/$$/cwd is /proc/self/cwd.
				return "self"
			}
			return ""
		}),
		// A process substitution's path is a pipe the command makes.
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return "", errUnknown },
		NoUnset:   true,
	}
	if glob && dir != "" {
		cfg.ReadDir2 = readDir
	}
	var out []string
	for _, wd := range words {
		if tilde(wd) {
			out = append(out, unknownWord)
			continue
		}
		f, err := expandWord(cfg, wd)
		if err != nil {
			out = append(out, unknownWord)
			continue
		}
		out = append(out, f...)
	}
	return out
}

// errUnknown marks a word the check cannot expand.
var errUnknown = errors.New("not known before the command runs")

// expandWord is expand.Fields for one word; a panic in the expander on a
// word it does not model makes the word unknown rather than the check crash.
func expandWord(cfg *expand.Config, w *syntax.Word) (f []string, err error) {
	defer func() {
		if recover() != nil {
			f, err = nil, errUnknown
		}
	}()
	return expand.Fields(cfg, w)
}

// readDir is how a glob reads the filesystem (a test counts the reads).
var readDir = os.ReadDir

// tilde reports a word starting with an unquoted ~: the shell's home
// directory is the command's, not something the check knows.
func tilde(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && strings.HasPrefix(l.Value, "~")
}

// check records a refusal when t, run in dir ("" unknown), is covered.
func (w *walker) check(t, dir, rule string) {
	if w.d != nil || t == unknownWord || strings.ContainsRune(t, 0) {
		return
	}
	if rel, entry, ok := w.c.covered(t, dir); ok {
		w.d = &Denial{Path: rel, Entry: entry, Rule: rule}
	}
}
