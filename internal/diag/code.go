package diag

import "strings"

// Code is a stable diagnostic code such as E-MAN-003 or W-SEC-024. Codes are
// never renumbered; the catalogue lives in codes.go.
type Code string

// Severity is the severity a code implies: W- codes warn, all others refuse.
func (c Code) Severity() Severity {
	if strings.HasPrefix(string(c), "W-") {
		return Warning
	}
	return Error
}

// New builds a diagnostic for code c with the severity c implies.
func New(c Code, pos Pos, field, msg string) Diagnostic {
	return Diagnostic{Code: c, Severity: c.Severity(), Pos: pos, Field: field, Msg: msg}
}
