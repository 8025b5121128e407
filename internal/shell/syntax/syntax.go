// Package syntax reads just enough POSIX shell to find what a command line
// writes: simple commands with their words (quotes removed) and their output
// redirections. It never expands anything: command and process substitution,
// parameter expansion and arithmetic stay in a word as written, so whatever
// they would do is not identified — the read-only check refuses only what it
// can positively see.
package syntax

import (
	"errors"
	"strings"
)

// Command is one simple command of a line: its words in order (quote
// removal done, nothing expanded) and the redirections written on it.
type Command struct {
	Words  []string
	Redirs []Redirect
}

// Redirect is one redirection operator and the word it names. Op is the
// operator as written without its file-descriptor number (">", ">>", ">|",
// "&>", "&>>", "<", "<<", "<<<", "<>"); FD is that number, -1 when none was
// written.
type Redirect struct {
	Op     string
	FD     int
	Target string
}

// Writes reports whether the redirection opens its target for writing.
// "<>" opens read-write but the table of write forms does not list it.
func (r Redirect) Writes() bool {
	switch r.Op {
	case ">", ">>", ">|", "&>", "&>>":
		return true
	}
	return false
}

// Parse splits a shell line into its simple commands. Separators (newline,
// ;, &, &&, |, ||, |&) and grouping ((, ), and { } in command position) end
// a command; a here-document's body is skipped; a comment runs to the end of
// its line. Parse never fails: unbalanced quotes run to the end of the line.
func Parse(line string) []Command {
	p := parser{src: line}
	p.run()
	return p.cmds
}

type parser struct {
	src  string
	i    int
	cmds []Command

	cur      Command
	word     strings.Builder
	inWord   bool
	quoted   bool // the current word had a quote or escape in it
	pending  *Redirect
	heredocs []heredoc
}

type heredoc struct {
	delim string
	strip bool // <<- strips leading tabs from body lines
}

func (p *parser) run() {
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			p.endWord()
			p.i++
		case c == '\n':
			p.endWord()
			p.endCommand()
			p.i++
			p.skipHeredocs()
		case c == '#' && !p.inWord:
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		case c == ';' || c == '(' || c == ')':
			p.endWord()
			p.endCommand()
			p.i++
		case c == '|':
			p.endWord()
			p.endCommand()
			p.i++
			if p.i < len(p.src) && (p.src[p.i] == '|' || p.src[p.i] == '&') {
				p.i++
			}
		case c == '&':
			if p.i+1 < len(p.src) && p.src[p.i+1] == '>' {
				p.endWord()
				p.i += 2
				op := "&>"
				if p.i < len(p.src) && p.src[p.i] == '>' {
					op = "&>>"
					p.i++
				}
				p.startRedir(op, -1)
				continue
			}
			p.endWord()
			p.endCommand()
			p.i++
			if p.i < len(p.src) && p.src[p.i] == '&' {
				p.i++
			}
		case c == '>' || c == '<':
			if p.i+1 < len(p.src) && p.src[p.i+1] == '(' {
				// Process substitution: opaque, kept as a word.
				p.inWord = true
				p.word.WriteString(p.balanced(p.i+1, '(', ')'))
				continue
			}
			fd := -1
			if p.inWord && !p.quoted && isDigits(p.word.String()) {
				fd = atoi(p.word.String())
				p.word.Reset()
				p.inWord = false
			} else {
				p.endWord()
			}
			p.redirOp(c, fd)
		case c == '\'':
			p.inWord, p.quoted = true, true
			end := strings.IndexByte(p.src[p.i+1:], '\'')
			if end < 0 {
				p.word.WriteString(p.src[p.i+1:])
				p.i = len(p.src)
				continue
			}
			p.word.WriteString(p.src[p.i+1 : p.i+1+end])
			p.i += end + 2
		case c == '"':
			p.inWord, p.quoted = true, true
			p.i++
			p.doubleQuoted()
		case c == '\\':
			p.i++
			if p.i >= len(p.src) {
				continue
			}
			if p.src[p.i] == '\n' { // line continuation
				p.i++
				continue
			}
			p.inWord, p.quoted = true, true
			p.word.WriteByte(p.src[p.i])
			p.i++
		case c == '$' && p.i+1 < len(p.src) && (p.src[p.i+1] == '(' || p.src[p.i+1] == '{'):
			p.inWord = true
			open, close := byte('('), byte(')')
			if p.src[p.i+1] == '{' {
				open, close = '{', '}'
			}
			p.word.WriteString(p.balanced(p.i+1, open, close))
		case c == '`':
			p.inWord = true
			end := strings.IndexByte(p.src[p.i+1:], '`')
			if end < 0 {
				p.word.WriteString(p.src[p.i:])
				p.i = len(p.src)
				continue
			}
			p.word.WriteString(p.src[p.i : p.i+end+2])
			p.i += end + 2
		default:
			p.inWord = true
			p.word.WriteByte(c)
			p.i++
		}
	}
	p.endWord()
	p.endCommand()
}

// redirOp reads the operator starting at p.i (a '>' or '<').
func (p *parser) redirOp(c byte, fd int) {
	rest := p.src[p.i:]
	if c == '>' {
		switch {
		case strings.HasPrefix(rest, ">>"):
			p.i += 2
			p.startRedir(">>", fd)
		case strings.HasPrefix(rest, ">|"):
			p.i += 2
			p.startRedir(">|", fd)
		case strings.HasPrefix(rest, ">&"):
			p.i += 2
			// >&N and >&- duplicate or close a descriptor; >&word is
			// bash's spelling of &>word.
			j := p.i
			for j < len(p.src) && p.src[j] >= '0' && p.src[j] <= '9' {
				j++
			}
			if j > p.i || (j < len(p.src) && p.src[j] == '-') {
				if j < len(p.src) && p.src[j] == '-' {
					j++
				}
				p.i = j
				return
			}
			if fd >= 0 {
				// N>&word with a non-numeric word is a dup of a
				// variable descriptor, not a file.
				p.startRedir("<dup>", fd)
				return
			}
			p.startRedir("&>", -1)
		default:
			p.i++
			p.startRedir(">", fd)
		}
		return
	}
	switch {
	case strings.HasPrefix(rest, "<<<"):
		p.i += 3
		p.startRedir("<<<", fd)
	case strings.HasPrefix(rest, "<<-"):
		p.i += 3
		p.startRedir("<<-", fd)
	case strings.HasPrefix(rest, "<<"):
		p.i += 2
		p.startRedir("<<", fd)
	case strings.HasPrefix(rest, "<>"):
		p.i += 2
		p.startRedir("<>", fd)
	case strings.HasPrefix(rest, "<&"):
		p.i += 2
		p.startRedir("<dup>", fd)
	default:
		p.i++
		p.startRedir("<", fd)
	}
}

func (p *parser) startRedir(op string, fd int) {
	p.pending = &Redirect{Op: op, FD: fd}
}

// doubleQuoted reads up to the closing quote; p.i is just past the opening
// one. Inside, only \ before $ ` " \ or newline escapes, and substitutions
// are copied whole.
func (p *parser) doubleQuoted() {
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '"':
			p.i++
			return
		case c == '\\' && p.i+1 < len(p.src):
			n := p.src[p.i+1]
			switch n {
			case '$', '`', '"', '\\':
				p.word.WriteByte(n)
			case '\n':
			default:
				p.word.WriteByte('\\')
				p.word.WriteByte(n)
			}
			p.i += 2
		case c == '$' && p.i+1 < len(p.src) && (p.src[p.i+1] == '(' || p.src[p.i+1] == '{'):
			open, close := byte('('), byte(')')
			if p.src[p.i+1] == '{' {
				open, close = '{', '}'
			}
			p.word.WriteString(p.balanced(p.i+1, open, close))
		case c == '`':
			end := strings.IndexByte(p.src[p.i+1:], '`')
			if end < 0 {
				p.word.WriteString(p.src[p.i:])
				p.i = len(p.src)
				return
			}
			p.word.WriteString(p.src[p.i : p.i+end+2])
			p.i += end + 2
		default:
			p.word.WriteByte(c)
			p.i++
		}
	}
}

// balanced returns the text from p.i (a '$', '>' or '<') through the bracket
// matching the one at openAt, skipping quoted text, and moves p.i past it.
// Unbalanced text runs to the end of the line.
func (p *parser) balanced(openAt int, open, close byte) string {
	start := p.i
	depth := 0
	j := openAt
	for j < len(p.src) {
		switch c := p.src[j]; {
		case c == '\\':
			j += 2
			continue
		case c == '\'':
			end := strings.IndexByte(p.src[j+1:], '\'')
			if end < 0 {
				j = len(p.src)
				continue
			}
			j += end + 2
			continue
		case c == open:
			depth++
		case c == close:
			depth--
			if depth == 0 {
				p.i = j + 1
				return p.src[start:p.i]
			}
		}
		j++
	}
	p.i = len(p.src)
	return p.src[start:]
}

func (p *parser) endWord() {
	if !p.inWord {
		return
	}
	w := p.word.String()
	p.word.Reset()
	p.inWord, p.quoted = false, false
	if p.pending != nil {
		r := *p.pending
		p.pending = nil
		r.Target = w
		switch r.Op {
		case "<<", "<<-":
			p.heredocs = append(p.heredocs, heredoc{delim: w, strip: r.Op == "<<-"})
		case "<dup>":
			return
		}
		p.cur.Redirs = append(p.cur.Redirs, r)
		return
	}
	p.cur.Words = append(p.cur.Words, w)
}

func (p *parser) endCommand() {
	p.pending = nil
	if len(p.cur.Words) > 0 || len(p.cur.Redirs) > 0 {
		p.cmds = append(p.cmds, p.cur)
	}
	p.cur = Command{}
}

// skipHeredocs skips the bodies of here-documents opened on the line that
// just ended; p.i is at the start of the next line.
func (p *parser) skipHeredocs() {
	for _, h := range p.heredocs {
		for p.i < len(p.src) {
			end := strings.IndexByte(p.src[p.i:], '\n')
			var line string
			if end < 0 {
				line, p.i = p.src[p.i:], len(p.src)
			} else {
				line, p.i = p.src[p.i:p.i+end], p.i+end+1
			}
			if h.strip {
				line = strings.TrimLeft(line, "\t")
			}
			if line == h.delim {
				break
			}
		}
	}
	p.heredocs = nil
}

func isDigits(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

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
