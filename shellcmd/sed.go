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

func sedRisky(s string, bsd bool) bool {
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	toEOL := func() {
		for i < len(s) && s[i] != '\n' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
	}
	// bracket skips a bracket expression at s[i] ("[", "[^]a]", "[[:alpha:]/]").
	bracket := func() bool {
		i++
		if i < len(s) && s[i] == '^' {
			i++
		}
		if i < len(s) && s[i] == ']' {
			i++
		}
		for i < len(s) {
			switch {
			case s[i] == ']':
				i++
				return true
			case s[i] == '[' && i+1 < len(s) && (s[i+1] == ':' || s[i+1] == '.' || s[i+1] == '='):
				end := strings.Index(s[i+2:], string(s[i+1])+"]")
				if end < 0 {
					return false
				}
				i += 2 + end + 2
			default:
				i++
			}
		}
		return false
	}
	toEnd := func() { // a label: to ; or newline
		for i < len(s) && s[i] != ';' && s[i] != '\n' {
			i++
		}
	}
	// delimited reads text up to an unescaped delimiter d.
	delimited := func(d byte) bool {
		for i < len(s) {
			switch c := s[i]; {
			case c == '\\':
				i += 2
				continue
			case c == d:
				i++
				return true
			case c == '[' && bsd:
				if !bracket() {
					return false
				}
				continue
			}
			i++
		}
		return false
	}
	address := func() bool {
		if i >= len(s) {
			return true
		}
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case c == '$':
			i++
		case c == '/':
			i++
			if !delimited('/') {
				return false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return false
			}
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
		default:
			return true
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
		return true
	}
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', ';', '{', '}':
			i++
			continue
		case '#':
			toEOL()
			continue
		}
		if !address() {
			return true
		}
		skipSpace()
		if i < len(s) && s[i] == ',' {
			i++
			skipSpace()
			if i < len(s) && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !address() {
				return true
			}
			skipSpace()
		}
		for i < len(s) && (s[i] == '!' || s[i] == ' ') {
			i++
		}
		if i >= len(s) {
			return true
		}
		c := s[i]
		i++
		switch c {
		case '{', '}':
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F', 'q', 'Q':
			skipSpace()
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			toEnd()
		case 'a', 'i', 'c', 'r', 'R':
			toEOL()
		case 's', 'y':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				return true
			}
			d := s[i]
			i++
			for range 2 { // the expression, then the replacement (s) or the second list (y)
				if !delimited(d) {
					return true
				}
			}
			if c == 's' {
				for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
					switch f := s[i]; {
					case f == 'w' || f == 'W' || f == 'e':
						return true
					case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f == ' ' || f == '\t' || f >= '0' && f <= '9':
					default:
						return true
					}
					i++
				}
			}
		default: // w, W, e, and commands pid does not know
			return true
		}
	}
	return false
}
