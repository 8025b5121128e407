// Package diag holds mur's diagnostics: the stable code catalogue
// (codes.go) and the Diagnostic value every refusal and warning travels as.
package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Severity says whether a diagnostic stops the command.
type Severity int

const (
	// Error refuses the command.
	Error Severity = iota
	// Warning is reported and the command goes on.
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Pos is a place in a source file. Line and Col are 1-based; zero means
// unknown.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	switch {
	case p.File == "":
		return ""
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Diagnostic is one finding with its stable code.
type Diagnostic struct {
	Code     Code
	Severity Severity
	Pos      Pos
	// Field is the path of the field at fault, e.g. artifacts[2].gateway.endpoint.
	Field string
	Msg   string
}

// String renders the one-line human form:
// "E-MAN-003 murmur.yaml:12:5 artifacts[0].name: message".
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(string(d.Code))
	if p := d.Pos.String(); p != "" {
		b.WriteByte(' ')
		b.WriteString(p)
	}
	if d.Field != "" {
		b.WriteByte(' ')
		b.WriteString(d.Field)
		b.WriteByte(':')
	}
	b.WriteByte(' ')
	b.WriteString(d.Msg)
	return b.String()
}

// Error makes a Diagnostic usable as an error.
func (d Diagnostic) Error() string { return d.String() }

// List is an ordered collection of diagnostics.
type List []Diagnostic

// HasErrors reports whether any diagnostic has error severity.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns only the error-severity diagnostics.
func (l List) Errors() List { return l.filter(Error) }

// Warnings returns only the warning-severity diagnostics.
func (l List) Warnings() List { return l.filter(Warning) }

func (l List) filter(s Severity) List {
	var out List
	for _, d := range l {
		if d.Severity == s {
			out = append(out, d)
		}
	}
	return out
}

// Sort orders diagnostics by file, line, column, then code, so output is
// stable whatever order the checks ran in.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col < b.Pos.Col
		}
		return a.Code < b.Code
	})
}

// Err returns the list as an error when it holds an error, else nil.
func (l List) Err() error {
	if !l.HasErrors() {
		return nil
	}
	return ListError(l.Errors())
}

// ListError is a non-empty list of error diagnostics used as an error.
type ListError List

func (e ListError) Error() string {
	lines := make([]string, len(e))
	for i, d := range e {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Has reports whether the list holds a diagnostic with code c.
func (l List) Has(c Code) bool {
	for _, d := range l {
		if d.Code == c {
			return true
		}
	}
	return false
}
