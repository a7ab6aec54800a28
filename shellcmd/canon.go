// This file holds quoting: a command's canonical text (words unquoted, then quoted one way,
// spaces normalised), quote removal (single, double and ANSI-C quotes), and words quoted
// back for a person to read.

package shellcmd

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// canonStmts returns a command's canonical text when it is simple commands with literal
// words and redirections joined by ;, &, &&, || or |: words unquoted then quoted the same
// way, spaces normalised. ok is false for anything else.
func canonStmts(list []*syntax.Stmt) (string, bool) {
	var b strings.Builder
	for i, s := range list {
		if i > 0 {
			if list[i-1].Background {
				b.WriteByte(' ')
			} else {
				b.WriteString("; ")
			}
		}
		if !canonStmt(&b, s) {
			return "", false
		}
	}
	return b.String(), true
}

func canonStmt(b *strings.Builder, s *syntax.Stmt) bool {
	if s == nil || s.Coprocess || s.Disown {
		return false
	}
	if s.Negated {
		b.WriteString("! ")
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		n := 0
		for _, a := range c.Assigns {
			if a == nil || a.Name == nil || a.Naked || a.Append || a.Index != nil || a.Array != nil {
				return false
			}
			v := ""
			if a.Value != nil {
				w, ok := plainWordText(a.Value)
				if !ok {
					return false
				}
				v = w
			}
			if n > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(a.Name.Value + "=" + quoteWord(v, false))
			n++
		}
		for i, a := range c.Args {
			w, ok := plainWordText(a)
			if !ok {
				return false
			}
			if n > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(quoteWord(w, i == 0))
			n++
		}
	case *syntax.BinaryCmd:
		if !canonStmt(b, c.X) {
			return false
		}
		b.WriteString(" " + c.Op.String() + " ")
		if !canonStmt(b, c.Y) {
			return false
		}
	default:
		return false
	}
	for _, rd := range s.Redirs {
		if rd == nil || rd.Hdoc != nil || rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc || rd.Word == nil {
			return false
		}
		w, ok := plainWordText(rd.Word)
		if !ok {
			return false
		}
		b.WriteByte(' ')
		if rd.N != nil {
			b.WriteString(rd.N.Value)
		}
		b.WriteString(rd.Op.String() + " " + quoteWord(w, false))
	}
	if s.Background {
		b.WriteString(" &")
	}
	return true
}

// plainWordText returns a word's text when it is literal and has no glob.
func plainWordText(w *syntax.Word) (string, bool) {
	sw := literal(w)
	if !sw.Lit || sw.Glob {
		return "", false
	}
	return sw.Text, true
}

// quoteWord writes a literal word so that bash reads it back as the same literal word:
// bare when it is made of safe characters, else in single quotes. A command name that bash
// would read as a keyword or an assignment is quoted.
func quoteWord(s string, command bool) string {
	if s == "[" || s == "]" || s == "[[" || s == "]]" {
		if command && s != "[" {
			return "'" + s + "'"
		}
		return s
	}
	safe := s != ""
	for i := 0; i < len(s) && safe; i++ {
		c := s[i]
		safe = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("_@%+=:,./-^", c) >= 0
	}
	if safe && command && (strings.Contains(s, "=") || syntax.IsKeyword(s)) {
		safe = false
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// unquoteLit writes an unquoted literal without its backslashes, and reports whether it
// has a glob (*, ? or a [...] class).
func unquoteLit(b *strings.Builder, v string) (glob bool) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '\\':
			if i+1 < len(v) {
				i++
				if v[i] != '\n' {
					b.WriteByte(v[i])
				}
				continue
			}
		case '*', '?':
			glob = true
		case '[':
			if strings.IndexByte(v[i+1:], ']') >= 0 {
				glob = true
			}
		}
		b.WriteByte(c)
	}
	return glob
}

// unquoteDouble writes the literal text of a double-quoted string: a backslash escapes
// only $, `, ", \ and a newline.
func unquoteDouble(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			i++
			if v[i] != '\n' {
				b.WriteByte(v[i])
			}
			continue
		}
		b.WriteByte(c)
	}
}

// ansiC decodes the escapes of a $'...' string ($'\x72m' is rm).
func ansiC(s string) string {
	var b strings.Builder
	hex := func(i, max int) (int, int) { // value, digits read
		v, n := 0, 0
		for n < max && i+n < len(s) {
			c := s[i+n]
			var d int
			switch {
			case c >= '0' && c <= '9':
				d = int(c - '0')
			case c >= 'a' && c <= 'f':
				d = int(c-'a') + 10
			case c >= 'A' && c <= 'F':
				d = int(c-'A') + 10
			default:
				return v, n
			}
			v = v*16 + d
			n++
		}
		return v, n
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'x':
			v, n := hex(i+1, 2)
			if n == 0 {
				b.WriteString(`\x`)
				continue
			}
			b.WriteByte(byte(v))
			i += n
		case 'u', 'U':
			max := 4
			if e == 'U' {
				max = 8
			}
			v, n := hex(i+1, max)
			if n == 0 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			b.WriteRune(rune(v))
			i += n
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		default:
			if e >= '0' && e <= '7' {
				v, n := 0, 0
				for n < 3 && i+n < len(s) && s[i+n] >= '0' && s[i+n] <= '7' {
					v = v*8 + int(s[i+n]-'0')
					n++
				}
				b.WriteByte(byte(v))
				i += n - 1
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}
