// This file reads sed: its options (in-place editing, script files) and its scripts, which
// may write files (w, W, s///w) or run commands (e, s///e); an allow rule on sed does not
// allow those unless it names them (options.go's table lists them).

package shellcmd

import "strings"

// sed reads a sed command: in-place editing, script files, and scripts that write or run.
func (r *shellReader) sed(words []Word, vouch int) int {
	sandbox := false
	for _, w := range words[1:] {
		if w.Lit && w.Text == "--sandbox" {
			sandbox = true
		}
	}
	scripted := false
	script := func(w Word, at int) {
		scripted = true
		if !w.Lit || (!sandbox && sedScriptRisky(w.Text)) {
			raise(&vouch, at+1)
		}
	}
	for j := 1; j < len(words); j++ {
		w := words[j]
		if !w.Lit || w.Glob {
			raise(&vouch, j+1)
			continue
		}
		t := w.Text
		switch {
		case t == "--":
			if !scripted && j+1 < len(words) {
				script(words[j+1], j+1)
			}
			for k := j + 1; k < len(words); k++ {
				if !words[k].Lit || words[k].Glob {
					raise(&vouch, k+1)
				}
			}
			return vouch
		case strings.HasPrefix(t, "--"):
			name, val, hasEq := strings.Cut(t, "=")
			switch name {
			case "--expression":
				if hasEq {
					script(Word{Text: val, Lit: true}, j)
				} else if j+1 < len(words) {
					script(words[j+1], j+1)
					j++
				}
			case "--file":
				scripted = true
				if !sandbox {
					raise(&vouch, j+1)
				}
				if !hasEq {
					j++
				}
			case "--line-length":
				if !hasEq {
					j++
				}
			case "--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered", "--null-data",
				"--zero-terminated", "--posix", "--debug", "--sandbox", "--follow-symlinks", "--binary":
			default: // --in-place and options pid does not know
				raise(&vouch, j+1)
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			at := j
		cluster:
			for k := 1; k < len(t); k++ {
				switch c := t[k]; c {
				case 'n', 'E', 'r', 's', 'u', 'z', 'b':
				case 'e', 'f', 'l':
					v := Word{Text: t[k+1:], Lit: true}
					vat := at
					if v.Text == "" {
						if j+1 >= len(words) {
							break cluster
						}
						j++
						v, vat = words[j], j
					}
					switch c {
					case 'e':
						script(v, vat)
					case 'f':
						scripted = true
						if !sandbox {
							raise(&vouch, at+1)
						}
					}
					break cluster
				default: // -i, -I and letters pid does not know
					raise(&vouch, at+1)
					break cluster
				}
			}
		default:
			if !scripted {
				script(w, j)
			}
		}
	}
	return vouch
}

// sedScriptRisky reports whether a sed script may write a file or run a command (w, W, e,
// s///w, s///e), or is one pid cannot read: it then asks. GNU sed ends a regular expression
// at the first unescaped delimiter, BSD sed skips bracket expressions ([/]) first: the
// script is read both ways, and is risky if either way finds a risk.
func sedScriptRisky(s string) bool { return sedRisky(s, false) || sedRisky(s, true) }

// sedRisky is sedScriptRisky's reading of s, the BSD way when bsd.
func sedRisky(s string, bsd bool) bool {
	p := &sedScanner{s: s, bsd: bsd}
	for p.i < len(s) {
		switch s[p.i] {
		case ' ', '\t', '\n', ';', '{', '}':
			p.i++
			continue
		case '#':
			p.toEOL()
			continue
		}
		if !p.addresses() {
			return true
		}
		if p.i >= len(s) {
			return true
		}
		c := s[p.i]
		p.i++
		if p.commandRisky(c) {
			return true
		}
	}
	return false
}

// sedScanner reads a sed script: s[i:] is what is left of it; bsd reads regular expressions
// the BSD way (bracket expressions skipped before looking for the delimiter).
type sedScanner struct {
	s   string
	i   int
	bsd bool
}

func (p *sedScanner) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// toEOL skips to the end of the line (escaped newlines included).
func (p *sedScanner) toEOL() {
	for p.i < len(p.s) && p.s[p.i] != '\n' {
		if p.s[p.i] == '\\' {
			p.i++
		}
		p.i++
	}
}

// toEnd skips a label: to ; or newline.
func (p *sedScanner) toEnd() {
	for p.i < len(p.s) && p.s[p.i] != ';' && p.s[p.i] != '\n' {
		p.i++
	}
}

// bracket skips a bracket expression at s[i] ("[", "[^]a]", "[[:alpha:]/]") and reports
// whether it was closed.
func (p *sedScanner) bracket() bool {
	s := p.s
	p.i++
	if p.i < len(s) && s[p.i] == '^' {
		p.i++
	}
	if p.i < len(s) && s[p.i] == ']' {
		p.i++
	}
	for p.i < len(s) {
		switch {
		case s[p.i] == ']':
			p.i++
			return true
		case s[p.i] == '[' && p.i+1 < len(s) && (s[p.i+1] == ':' || s[p.i+1] == '.' || s[p.i+1] == '='):
			end := strings.Index(s[p.i+2:], string(s[p.i+1])+"]")
			if end < 0 {
				return false
			}
			p.i += 2 + end + 2
		default:
			p.i++
		}
	}
	return false
}

// delimited reads text up to an unescaped delimiter d and reports whether it found it.
func (p *sedScanner) delimited(d byte) bool {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '\\':
			p.i += 2
			continue
		case c == d:
			p.i++
			return true
		case c == '[' && p.bsd:
			if !p.bracket() {
				return false
			}
			continue
		}
		p.i++
	}
	return false
}

// address reads one address (a line, $, /re/ or \cREc, with I and M flags), if there is
// one, and reports whether it could be read.
func (p *sedScanner) address() bool {
	s := p.s
	if p.i >= len(s) {
		return true
	}
	switch c := s[p.i]; {
	case c >= '0' && c <= '9':
		for p.i < len(s) && (s[p.i] >= '0' && s[p.i] <= '9' || s[p.i] == '~') {
			p.i++
		}
	case c == '$':
		p.i++
	case c == '/':
		p.i++
		if !p.delimited('/') {
			return false
		}
	case c == '\\':
		if p.i+1 >= len(s) {
			return false
		}
		d := s[p.i+1]
		p.i += 2
		if !p.delimited(d) {
			return false
		}
	default:
		return true
	}
	for p.i < len(s) && (s[p.i] == 'I' || s[p.i] == 'M') {
		p.i++
	}
	return true
}

// addresses reads a command's addresses (none, one, or a range) and its negations, and
// reports whether they could be read.
func (p *sedScanner) addresses() bool {
	s := p.s
	if !p.address() {
		return false
	}
	p.skipSpace()
	if p.i < len(s) && s[p.i] == ',' {
		p.i++
		p.skipSpace()
		if p.i < len(s) && (s[p.i] == '+' || s[p.i] == '~') {
			p.i++
		}
		if !p.address() {
			return false
		}
		p.skipSpace()
	}
	for p.i < len(s) && (s[p.i] == '!' || s[p.i] == ' ') {
		p.i++
	}
	return true
}

// commandRisky reads the rest of command c (its arguments) and reports whether it may write
// a file or run a command, or cannot be read.
func (p *sedScanner) commandRisky(c byte) bool {
	s := p.s
	switch c {
	case '{', '}':
	case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F', 'q', 'Q':
		p.skipSpace()
		for p.i < len(s) && s[p.i] >= '0' && s[p.i] <= '9' {
			p.i++
		}
	case ':', 'b', 't', 'T', 'v':
		p.toEnd()
	case 'a', 'i', 'c', 'r', 'R':
		p.toEOL()
	case 's', 'y':
		if p.i >= len(s) || s[p.i] == '\n' || s[p.i] == '\\' {
			return true
		}
		d := s[p.i]
		p.i++
		for range 2 { // the expression, then the replacement (s) or the second list (y)
			if !p.delimited(d) {
				return true
			}
		}
		if c == 's' {
			for p.i < len(s) && s[p.i] != ';' && s[p.i] != '\n' && s[p.i] != '}' {
				switch f := s[p.i]; {
				case f == 'w' || f == 'W' || f == 'e':
					return true
				case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f == ' ' || f == '\t' || f >= '0' && f <= '9':
				default:
					return true
				}
				p.i++
			}
		}
	default: // w, W, e, and commands pid does not know
		return true
	}
	return false
}
