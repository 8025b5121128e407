// Package syntax splits the argument string of a non-interpreter shell
// tool into the binary's argv: quote removal and nothing else — no
// operators, no expansion, since no shell runs it. Reading a whole shell
// line (the read-only check) is mvdan.cc/sh/v3/syntax's job, in
// internal/shell/readonly.
package syntax

import (
	"errors"
	"strings"
)

// ErrUnterminated is returned by SplitArgs for a quote left open.
var ErrUnterminated = errors.New("unterminated quote")

// SplitArgs splits an argument string the way a shell would split words,
// with quote removal and nothing else: no operators, no expansion. It is
// how a non-interpreter shell tool's command becomes the binary's argv.
func SplitArgs(s string) ([]string, error) {
	var (
		out    []string
		b      strings.Builder
		inWord bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			if inWord {
				out = append(out, b.String())
				b.Reset()
				inWord = false
			}
		case '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, ErrUnterminated
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case '"':
			inWord = true
			i++
			closed := false
			for ; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
			}
			if !closed {
				return nil, ErrUnterminated
			}
		case '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		default:
			inWord = true
			b.WriteByte(c)
		}
	}
	if inWord {
		out = append(out, b.String())
	}
	return out, nil
}
