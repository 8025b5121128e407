package readonly

import (
	"fmt"
	"path"
	"strings"

	"github.com/murmur/mur/internal/diag"
)

// Interpreters are binaries that do their own file I/O from a program the
// check cannot read: the shell interpreters plus language runtimes. Entries
// are path.Match patterns over the bare name (python3.12 matches python*).
var Interpreters = []string{
	"bash", "sh", "zsh", "fish", "dash", "ksh", "csh", "tcsh", "busybox",
	"python*", "pypy*", "node", "nodejs", "deno", "bun", "perl*", "ruby*", "php*",
	"lua*", "luajit", "tclsh*", "wish*", "Rscript", "R", "julia", "awk", "gawk", "mawk", "nawk",
	"osascript", "pwsh", "powershell", "guile*", "racket", "sbcl", "elixir", "erl", "escript",
	"java", "jshell", "groovy", "scala", "kotlin", "dotnet", "swift",
}

// IsInterpreter reports whether a bare binary name is an interpreter.
func IsInterpreter(binary string) bool {
	for _, p := range Interpreters {
		if ok, _ := path.Match(p, binary); ok {
			return true
		}
	}
	return false
}

// InterpreterWarnings returns W-SEC-017 for every interpreter in
// capabilities.shell.allow when read_only declares an entry: the dispatch
// check cannot see an interpreter's own file I/O.
func InterpreterWarnings(readOnly, allow []string) diag.List {
	if !hasEntry(readOnly) {
		return nil
	}
	var out diag.List
	for i, b := range allow {
		if IsInterpreter(b) {
			out = append(out, diag.New(diag.SecReadOnlyInterpreter, diag.Pos{},
				fmt.Sprintf("capabilities.shell.allow[%d]", i),
				fmt.Sprintf("%q is an interpreter: capabilities.filesystem.read_only is checked before dispatch only "+
					"for writes the runtime can read in a shell line, not for the interpreter's own file I/O, so the "+
					"protection is advisory against %q; remove it from capabilities.shell.allow or rely on a "+
					"kernel-enforcing host", b, b)))
		}
	}
	return out
}

// SchemaWarning returns W-SEC-018 for a tool whose input_schema leaves
// path- or destination-shaped properties to the key-name rules, naming the
// tool and every such property; nil when there are none or read_only is
// empty.
func SchemaWarning(readOnly []string, tool string, s *Schema) *diag.Diagnostic {
	props := s.PathShaped()
	if !hasEntry(readOnly) || len(props) == 0 {
		return nil
	}
	d := diag.New(diag.SecReadOnlyUndeclared, diag.Pos{}, "capabilities.filesystem.read_only",
		fmt.Sprintf("tool %q leaves %s to the key-name rules; declare each destination with "+
			`"format": "murmur-destination", stored payload with "format": "murmur-opaque", or list derived `+
			`destinations in "murmur-destinations" at the schema root`, tool, quoteAll(props)))
	return &d
}

func hasEntry(entries []string) bool {
	for _, e := range entries {
		if strings.TrimSpace(e) != "" {
			return true
		}
	}
	return false
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}
