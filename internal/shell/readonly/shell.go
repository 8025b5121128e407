package readonly

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/murmur/mur/internal/shell/syntax"
)

// ShellInterpreters are the binaries whose shell tool takes a whole line as
// their -c argument.
var ShellInterpreters = []string{"bash", "sh", "zsh", "fish", "dash", "ksh"}

// IsShellInterpreter reports whether the bare binary name is a shell
// interpreter.
func IsShellInterpreter(binary string) bool {
	b := filepath.Base(binary)
	for _, s := range ShellInterpreters {
		if b == s {
			return true
		}
	}
	return false
}

// CheckLine checks a shell tool call to an interpreter: line is the whole
// -c script, run in the workdir.
func (c *Checker) CheckLine(binary, line string) *Denial {
	if !c.Active() {
		return nil
	}
	if d := c.checkScript(line); d != nil {
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
			d = c.checkScript(script)
		}
	} else {
		d = c.checkCommand(filepath.Base(binary), args, c.workdir)
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

func (c *Checker) checkScript(line string) *Denial {
	dir := c.workdir
	for _, cmd := range syntax.Parse(line) {
		for _, r := range cmd.Redirs {
			if !r.Writes() || dir == "" && !filepath.IsAbs(r.Target) {
				continue
			}
			op := r.Op
			if r.FD >= 0 {
				op = fmt.Sprint(r.FD) + op
			}
			if d := c.check(r.Target, dir, fmt.Sprintf("the redirection %q", op)); d != nil {
				return d
			}
		}
		words := unwrap(cmd.Words)
		if len(words) == 0 {
			continue
		}
		name := filepath.Base(words[0])
		if name == "cd" {
			dir = cdTarget(dir, words[1:])
			continue
		}
		if dir == "" {
			// After a cd the check could not follow, only absolute paths
			// can be placed.
			if d := c.checkCommandAbs(name, words[1:]); d != nil {
				return d
			}
			continue
		}
		if d := c.checkCommand(name, words[1:], dir); d != nil {
			return d
		}
	}
	return nil
}

func (c *Checker) checkCommandAbs(name string, args []string) *Denial {
	for _, t := range writeTargets(name, args) {
		if filepath.IsAbs(t) {
			if d := c.check(t, "/", fmt.Sprintf("a write-target argument of %q", name)); d != nil {
				return d
			}
		}
	}
	return nil
}

// cdTarget follows a literal cd; an argument the check cannot place (none,
// -, anything with an expansion) leaves the directory unknown ("").
func cdTarget(dir string, args []string) string {
	if len(args) != 1 || dir == "" {
		return ""
	}
	a := args[0]
	if a == "-" || strings.ContainsAny(a, "$`~*?[") {
		return ""
	}
	if filepath.IsAbs(a) {
		return filepath.Clean(a)
	}
	return filepath.Join(dir, a)
}

func (c *Checker) checkCommand(name string, args []string, dir string) *Denial {
	for _, t := range writeTargets(name, args) {
		if d := c.check(t, dir, fmt.Sprintf("a write-target argument of %q", name)); d != nil {
			return d
		}
	}
	return nil
}

// check matches one candidate, expanding a glob against the filesystem the
// way the shell would (a pattern that matches nothing stays literal).
func (c *Checker) check(p, dir, rule string) *Denial {
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
		if rel, entry, ok := c.Covered(cand, dir); ok {
			return &Denial{Path: rel, Entry: entry, Rule: rule}
		}
	}
	return nil
}

// wrappers run the command named after their own options; the value is the
// options that take an argument.
var wrappers = map[string]string{
	"exec": "a", "command": "", "builtin": "", "nohup": "", "time": "",
	"nice": "n", "env": "uCS", "sudo": "ugCDhprT", "doas": "uC", "xargs": "adEeIiLlnPs",
	"timeout": "sk", "stdbuf": "ioe", "ionice": "cnp", "chrt": "",
}

// keywords open or close compound commands; the command proper follows.
var keywords = map[string]bool{
	"!": true, "{": true, "}": true, "then": true, "do": true, "else": true,
	"elif": true, "if": true, "while": true, "until": true, "done": true, "fi": true,
}

// unwrap drops leading keywords, variable assignments and wrapper commands
// (with their options) so the first word is the binary that runs.
func unwrap(w []string) []string {
	for len(w) > 0 {
		switch {
		case keywords[w[0]]:
			w = w[1:]
		case isAssignment(w[0]):
			w = w[1:]
		default:
			opts, ok := wrappers[filepath.Base(w[0])]
			if !ok {
				return w
			}
			name := filepath.Base(w[0])
			w = w[1:]
			for len(w) > 0 && strings.HasPrefix(w[0], "-") && w[0] != "-" {
				f := w[0]
				w = w[1:]
				if f == "--" {
					break
				}
				if !strings.HasPrefix(f, "--") && len(f) == 2 && strings.ContainsRune(opts, rune(f[1])) && len(w) > 0 {
					w = w[1:]
				}
			}
			if name == "timeout" && len(w) > 0 {
				w = w[1:] // the duration
			}
		}
	}
	return w
}

func isAssignment(s string) bool {
	eq := strings.IndexByte(s, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		ch := s[i]
		if !(ch == '_' || ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

// writeTargets returns the arguments the write-target table names for one
// command: every operand of the file-changing commands, the last operand of
// mv, cp, install and ln (and a -t directory), sed's files under -i, dd's of=.
func writeTargets(name string, args []string) []string {
	switch name {
	case "tee", "rm", "rmdir", "unlink", "shred", "truncate", "mkdir", "touch", "chmod", "chown", "patch":
		return operands(args)
	case "mv", "cp", "install", "ln":
		ops := operands(args)
		var out []string
		if len(ops) > 0 {
			out = append(out, ops[len(ops)-1])
		}
		for i, a := range args {
			switch {
			case a == "-t" && i+1 < len(args):
				out = append(out, args[i+1])
			case strings.HasPrefix(a, "--target-directory="):
				out = append(out, strings.TrimPrefix(a, "--target-directory="))
			}
		}
		return out
	case "sed":
		return sedTargets(args)
	case "dd":
		var out []string
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "of="); ok {
				out = append(out, v)
			}
		}
		return out
	}
	return nil
}

// operands are the non-flag arguments; everything after -- is an operand.
func operands(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			continue
		}
		out = append(out, a)
	}
	return out
}

// sedTargets returns sed's file operands when it edits in place: the script
// is the first operand unless -e/-f/--expression/--file supplied it.
func sedTargets(args []string) []string {
	inPlace, scriptGiven := false, false
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case a == "--in-place" || strings.HasPrefix(a, "--in-place="):
			inPlace = true
		case a == "--expression" || a == "--file":
			scriptGiven = true
			i++
		case strings.HasPrefix(a, "--expression=") || strings.HasPrefix(a, "--file="):
			scriptGiven = true
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && a[0] == '-':
			// A short cluster: i starts an in-place suffix, e/f/l take the
			// rest of the cluster or the next argument.
			for j := 1; j < len(a); j++ {
				ch := a[j]
				if ch == 'i' {
					inPlace = true
					break
				}
				if ch == 'e' || ch == 'f' || ch == 'l' {
					if ch != 'l' {
						scriptGiven = true
					}
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		default:
			ops = append(ops, a)
		}
	}
	if !inPlace {
		return nil
	}
	if !scriptGiven && len(ops) > 0 {
		ops = ops[1:]
	}
	return ops
}
