// This file turns glob patterns (*, ?, [...], ** and, for find and grep, {a,b}) into regular
// expressions over slash-separated relative paths.

package search

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// globRegexp returns the regular expression (without anchors) that matches what the glob
// pat matches: * and ? never cross a "/", [...] is a class ([!...] negated) that never
// matches "/", a backslash quotes the next character, and ** as a whole path segment
// matches any number of folders ("**/x", "a/**/b", "a/**"). Other runs of * are one *.
func globRegexp(pat string) string {
	var sb strings.Builder
	for i := 0; i < len(pat); {
		c := pat[i]
		switch c {
		case '*':
			j := i
			for j < len(pat) && pat[j] == '*' {
				j++
			}
			segStart := i == 0 || pat[i-1] == '/'
			segEnd := j == len(pat) || pat[j] == '/'
			switch {
			case j-i >= 2 && segStart && j == len(pat):
				sb.WriteString(".*")
				i = j
			case j-i >= 2 && segStart && segEnd:
				sb.WriteString("(?:.*/)?")
				i = j + 1 // the "/" is part of what (?:.*/)? matches
			default:
				sb.WriteString("[^/]*")
				i = j
			}
		case '?':
			sb.WriteString("[^/]")
			i++
		case '[':
			class, n := globClass(pat[i:])
			if n == 0 {
				sb.WriteString(`\[`)
				i++
				continue
			}
			sb.WriteString(class)
			i += n
		case '\\':
			if i+1 < len(pat) {
				sb.WriteString(regexp.QuoteMeta(pat[i+1 : i+2]))
				i += 2
			} else {
				sb.WriteString(`\\`)
				i++
			}
		default:
			sb.WriteString(regexp.QuoteMeta(pat[i : i+1]))
			i++
		}
	}
	return sb.String()
}

// globClass converts the bracket expression at the start of s to a regexp class and returns
// it with the bytes it used, or 0 when s has no closing bracket.
func globClass(s string) (string, int) {
	i := 1
	negate := false
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		negate = true
		i++
	}
	var body strings.Builder
	first := true
	for ; i < len(s); i++ {
		c := s[i]
		if c == ']' && !first {
			if negate {
				return "[^/" + body.String() + "]", i + 1
			}
			return "[" + body.String() + "]", i + 1
		}
		first = false
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			body.WriteString(regexp.QuoteMeta(s[i : i+1]))
		case c == '-':
			body.WriteByte('-')
		case c == '/':
			// never matches a separator
		default:
			body.WriteString(regexp.QuoteMeta(s[i : i+1]))
		}
	}
	return "", 0
}

// maxBraceExpansions bounds how many globs one {a,b} pattern expands to.
const maxBraceExpansions = 256

// expandBraces expands {a,b,c} alternatives, nested or in sequence, into plain globs:
// "*.{go,md}" gives "*.go" and "*.md". Braces with no comma are kept as written.
func expandBraces(pat string) ([]string, error) {
	out := []string{}
	var expand func(p string) error
	expand = func(p string) error {
		open, end, commas := findBraces(p)
		if open < 0 {
			if len(out) == maxBraceExpansions {
				return fmt.Errorf("pattern %q expands to more than %d patterns", pat, maxBraceExpansions)
			}
			out = append(out, p)
			return nil
		}
		prev := open
		for _, c := range append(commas, end) {
			if err := expand(p[:open] + p[prev+1:c] + p[end+1:]); err != nil {
				return err
			}
			prev = c
		}
		return nil
	}
	return out, expand(pat)
}

// findBraces returns the first top-level {...} of p that holds a top-level comma: the
// offsets of its braces and of those commas; open is -1 when there is none.
func findBraces(p string) (open, end int, commas []int) {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			depth := 0
			var cs []int
			for j := i; j < len(p); j++ {
				switch p[j] {
				case '\\':
					j++
				case '{':
					depth++
				case '}':
					depth--
					if depth == 0 {
						if len(cs) > 0 {
							return i, j, cs
						}
						j = len(p) // no comma: look for a later brace
					}
				case ',':
					if depth == 1 {
						cs = append(cs, j)
					}
				}
			}
		}
	}
	return -1, -1, nil
}

// globMatcher matches one glob (no braces) against a name or a slash-separated path. The
// shapes that make up most ignore files and find patterns (a plain name, "*.ext", "prefix*")
// are string comparisons; the rest is a regular expression.
type globMatcher struct {
	kind globKind
	lit  string
	re   *regexp.Regexp
	// For globByRegexp, what lets most names be turned down without running re: need, a
	// literal every match contains ("" when there is none), and last, the bytes a match can
	// end with (nil when any). "*.[oa]" ends in o or a: a name ending in c is not a match.
	need string
	last *[256]bool
}

type globKind uint8

const (
	globByRegexp globKind = iota // re decides
	globLiteral                  // equal to lit
	globSuffix                   // "*lit": ends with lit, no "/" before it
	globPrefix                   // "lit*": starts with lit, no "/" after it
	globAnything                 // "*": any string without "/"
)

// compileGlob compiles the glob pat (see globRegexp), choosing a string comparison when the
// glob's shape allows one.
func compileGlob(pat string) (globMatcher, error) {
	const meta = "*?[\\"
	switch {
	case !strings.ContainsAny(pat, meta):
		return globMatcher{kind: globLiteral, lit: pat}, nil
	case pat == "*":
		return globMatcher{kind: globAnything}, nil
	case pat[0] == '*' && !strings.ContainsAny(pat[1:], meta) && !strings.Contains(pat[1:], "/"):
		return globMatcher{kind: globSuffix, lit: pat[1:]}, nil
	case pat[len(pat)-1] == '*' && !strings.ContainsAny(pat[:len(pat)-1], meta) && !strings.Contains(pat, "/"):
		return globMatcher{kind: globPrefix, lit: pat[:len(pat)-1]}, nil
	}
	expr := "^" + globRegexp(pat) + "$"
	re, err := regexp.Compile(expr)
	if err != nil {
		return globMatcher{}, err
	}
	m := globMatcher{kind: globByRegexp, re: re}
	m.need, m.last = globHints(expr)
	return m, nil
}

// globHints returns a literal every match of the anchored expression expr contains, and the
// set of bytes a match can end with (nil when that is not known or is any byte), for
// globMatcher's quick rejections.
func globHints(expr string) (need string, last *[256]bool) {
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", nil
	}
	tree = tree.Simplify()
	// The longest part of the literal that is not case-folded ("[Mm]akefile" parses as a
	// folding "m" then "akefile").
	best := literalInfo(tree).best
	for i := 0; i < len(best.b); {
		j := i
		for j < len(best.b) && !best.fold[j] {
			j++
		}
		if j-i > len(need) {
			need = string(best.b[i:j])
		}
		i = j + 1
	}
	if tree.Op != syntax.OpConcat || len(tree.Sub) < 2 || tree.Sub[len(tree.Sub)-1].Op != syntax.OpEndText {
		return need, nil
	}
	var runes []rune // the ranges the last byte's rune is in, as pairs
	switch end := tree.Sub[len(tree.Sub)-2]; {
	case end.Op == syntax.OpLiteral && end.Flags&syntax.FoldCase == 0 && len(end.Rune) > 0:
		r := end.Rune[len(end.Rune)-1]
		runes = []rune{r, r}
	case end.Op == syntax.OpCharClass:
		runes = end.Rune
	default:
		return need, nil
	}
	var set [256]bool
	for i := 0; i+1 < len(runes); i += 2 {
		if runes[i+1] >= utf8.RuneSelf {
			return need, nil // a multi-byte rune: its last byte is not the rune
		}
		for r := runes[i]; r <= runes[i+1]; r++ {
			set[r] = true
		}
	}
	return need, &set
}

// match reports whether s matches the glob.
func (m *globMatcher) match(s string) bool {
	switch m.kind {
	case globLiteral:
		return s == m.lit
	case globSuffix:
		return strings.HasSuffix(s, m.lit) && strings.IndexByte(s[:len(s)-len(m.lit)], '/') < 0
	case globPrefix:
		return strings.HasPrefix(s, m.lit) && strings.IndexByte(s[len(m.lit):], '/') < 0
	case globAnything:
		return strings.IndexByte(s, '/') < 0
	}
	if m.need != "" && !strings.Contains(s, m.need) || m.last != nil && (s == "" || !m.last[s[len(s)-1]]) {
		return false
	}
	return m.re.MatchString(s)
}

// Glob matches slash-separated paths relative to a search root against a find or grep
// glob: a glob without "/" is matched against the last element (at any depth), one with
// "/" against the whole relative path. "**/x" where x has no "/" is matched as x.
type Glob struct {
	alts []pathAlt
}

// pathAlt is one {a,b} alternative of a Glob.
type pathAlt struct {
	m globMatcher
	// full says the alternative is matched against the whole relative path.
	full bool
}

// NewGlob compiles pat (with its {a,b} alternatives).
func NewGlob(pat string) (*Glob, error) {
	alts, err := expandBraces(pat)
	if err != nil {
		return nil, err
	}
	full := strings.Contains(pat, "/")
	g := &Glob{}
	for _, a := range alts {
		a = strings.TrimPrefix(a, "./")
		f := full
		if rest, ok := strings.CutPrefix(a, "**/"); ok && !strings.Contains(rest, "/") && !strings.Contains(rest, "**") {
			a, f = rest, false
		}
		m, err := compileGlob(a)
		if err != nil {
			return nil, fmt.Errorf("invalid glob %q: %v", pat, err)
		}
		g.alts = append(g.alts, pathAlt{m: m, full: f})
	}
	return g, nil
}

// Match reports whether the relative path rel (whose last element is name) matches.
func (g *Glob) Match(rel, name string) bool {
	for i := range g.alts {
		a := &g.alts[i]
		s := name
		if a.full {
			s = rel
		}
		if a.m.match(s) {
			return true
		}
	}
	return false
}

// MatchNode reports whether the walk entry n matches, building its relative path only
// for an alternative that needs it.
func (g *Glob) MatchNode(n *Node) bool {
	for i := range g.alts {
		a := &g.alts[i]
		s := n.e.Name
		if a.full {
			s = n.Rel()
		}
		if a.m.match(s) {
			return true
		}
	}
	return false
}
