package readonly

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file is the rule set: spec 004's "What the runtime refuses" table for
// shell calls, and nothing else. The walk in shell.go finds each command and
// redirection however the line spells it; these tables decide which of them
// write.

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

// writeRedir reports whether a redirection writes the file its word names:
// the table's >, >>, >|, &>, &>> and their N-prefixed forms, and bash's
// ">&word", its older spelling of "&>word" (as "1>&word"; "N>&word" for
// another N is an ambiguous redirect that writes nothing). dup reports a
// ">&" whose word is a descriptor, which names no file.
func writeRedir(r *syntax.Redirect, word string) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
		return true
	case syntax.DplOut:
		if isFD(word) {
			return false
		}
		return r.N == nil || r.N.Value == "1"
	}
	return false
}

// isFD is a descriptor word of a duplication: N, N- (move) or - (close).
func isFD(w string) bool {
	w = strings.TrimSuffix(w, "-")
	return w == "" || isDigits(w)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// wrappers run the command named after their own options; the value is the
// options that take an argument.
var wrappers = map[string]string{
	"exec": "a", "command": "", "builtin": "", "nohup": "", "time": "",
	"nice": "n", "env": "uCS", "sudo": "ugCDhprT", "doas": "uC", "xargs": "adEeIiLlnPs",
	"timeout": "sk", "stdbuf": "ioe", "ionice": "cnp", "chrt": "",
}

// unwrap drops leading variable assignments (env's, or a direct argv's) and
// wrapper commands (with their options) so the first word is the binary that
// runs.
func unwrap(w []string) []string {
	for len(w) > 0 {
		switch {
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

// writeCommand reports whether the table names write targets of name.
func writeCommand(name string) bool {
	return writeTargets(name, []string{"x", "y"}) != nil || name == "sed" || name == "dd"
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
