// This file finds the lines of a buffer that grep's regular expression matches, without
// splitting the buffer into lines when it can: a literal every match must contain is looked
// for first (one rare byte at a time, with ASCII case folding when the pattern folds case),
// and only the lines around a hit are matched. An expression with no such literal is
// matched line by line (faster with Go's regexp than one run over the whole buffer).

package search

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Matcher finds matching lines. A line is matched on its own, without its "\n" (a "\r"
// before it is part of the line, as in ripgrep).
type Matcher struct {
	re  *regexp.Regexp // the expression, matched against one line
	lit *litFinder     // a literal every match contains, or nil
	// exact says finding lit on a line is finding a match: the expression is that literal.
	exact bool
	// perLine says lines are matched one by one: there is no literal to look for.
	perLine bool
}

// NewMatcher compiles expr (the pattern with "(?i)" in front for ignoreCase).
func NewMatcher(expr string) (*Matcher, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	m := &Matcher{re: re}
	// Only the literals are taken from the parse; every line is matched by re on its own.
	tree, err := syntax.Parse(expr, syntax.Perl&^syntax.OneLine)
	if err != nil {
		return nil, err
	}
	tree = tree.Simplify()
	info := literalInfo(tree)
	if run := info.best; len(run.b) > 0 {
		m.lit = newLitFinder(run)
		m.exact = info.whole && bytes.IndexByte(run.b, '\n') < 0 && tree.Op == syntax.OpLiteral
		return m, nil
	}
	m.perLine = true
	return m, nil
}

// next returns the bounds [start, end) of the first matching line of buf at or after pos,
// which is the start of a line; end is at the line's "\n" or at len(buf). ok is false when
// no line matches. A last line needs no "\n"; an empty one after the last "\n" is no line.
func (m *Matcher) next(buf []byte, pos int) (start, end int, ok bool) {
	for pos < len(buf) {
		if m.perLine {
			end = lineEnd(buf, pos)
			if m.re.Match(buf[pos:end]) {
				return pos, end, true
			}
			pos = end + 1
			continue
		}
		i := m.lit.index(buf[pos:])
		if i < 0 {
			return 0, 0, false
		}
		cand := pos + i
		start = pos + bytes.LastIndexByte(buf[pos:cand], '\n') + 1
		end = lineEnd(buf, cand)
		if m.exact || m.re.Match(buf[start:end]) {
			return start, end, true
		}
		pos = end + 1
	}
	return 0, 0, false
}

// lineEnd returns the offset of the first "\n" of buf at or after i, or len(buf).
func lineEnd(buf []byte, i int) int {
	if j := bytes.IndexByte(buf[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(buf)
}

// litRun is a literal: its bytes, and for each byte whether it matches either ASCII case
// (fold bytes are stored lower-case).
type litRun struct {
	b    []byte
	fold []bool
}

func (r litRun) plus(o litRun) litRun {
	return litRun{b: append(append([]byte{}, r.b...), o.b...), fold: append(append([]bool{}, r.fold...), o.fold...)}
}

// litInfo is what literalInfo learns about a piece of an expression: the longest literal
// every match of it contains (best), the literal every match starts with (pre) and ends
// with (suf), and whether the piece is exactly one literal (whole: pre, suf and best are it).
type litInfo struct {
	pre, suf, best litRun
	whole          bool
}

// literalInfo returns the literals of t that every match contains. A case-folding literal
// keeps only what ASCII folding describes exactly: a letter whose folds leave ASCII (k, s:
// the Kelvin sign, the long s) or any non-ASCII rune ends the literal there.
func literalInfo(t *syntax.Regexp) litInfo {
	switch t.Op {
	case syntax.OpLiteral:
		return literalRunes(t.Rune, t.Flags&syntax.FoldCase != 0)
	case syntax.OpCapture:
		return literalInfo(t.Sub[0])
	case syntax.OpPlus:
		in := literalInfo(t.Sub[0])
		in.whole = false
		return in
	case syntax.OpRepeat:
		if t.Min >= 1 {
			in := literalInfo(t.Sub[0])
			in.whole = in.whole && t.Min == 1 && t.Max == 1
			return in
		}
	case syntax.OpConcat:
		var out litInfo
		var cur litRun // the literal run open at the end so far
		atStart := true
		for _, s := range t.Sub {
			in := literalInfo(s)
			if in.whole {
				cur = cur.plus(in.best)
			} else {
				cur = cur.plus(in.pre)
				if atStart {
					out.pre = cur
				}
				keepLonger(&out.best, cur)
				keepLonger(&out.best, in.best)
				cur = in.suf
				atStart = false
			}
		}
		keepLonger(&out.best, cur)
		out.suf = cur
		if atStart {
			out.pre, out.whole = cur, true
		}
		return out
	}
	return litInfo{}
}

// keepLonger sets *best to r when r is longer.
func keepLonger(best *litRun, r litRun) {
	if len(r.b) > len(best.b) {
		*best = r
	}
}

// literalRunes returns the litInfo of a literal of runes rs, folding case when fold is set.
func literalRunes(rs []rune, fold bool) litInfo {
	var runs []litRun
	var cur litRun
	broken := false
	for _, r := range rs {
		lower := r | 0x20
		switch {
		case !fold:
			cur.b = utf8.AppendRune(cur.b, r)
			cur.fold = append(cur.fold, make([]bool, utf8.RuneLen(r))...)
		case lower >= 'a' && lower <= 'z' && lower != 'k' && lower != 's':
			cur.b = append(cur.b, byte(lower))
			cur.fold = append(cur.fold, true)
		case r < utf8.RuneSelf && !(lower >= 'a' && lower <= 'z'):
			cur.b = append(cur.b, byte(r))
			cur.fold = append(cur.fold, false)
		default:
			runs = append(runs, cur)
			cur, broken = litRun{}, true
		}
	}
	runs = append(runs, cur)
	in := litInfo{pre: runs[0], suf: runs[len(runs)-1], whole: !broken}
	for _, r := range runs {
		keepLonger(&in.best, r)
	}
	return in
}

// litFinder looks for a literal: it scans for its rarest byte (in both cases when that
// byte folds) and compares the rest around each hit.
type litFinder struct {
	run    litRun
	anyFld bool
	rare   int  // offset of the byte scanned for
	b1, b2 byte // that byte, in both cases (equal when it does not fold)
}

func newLitFinder(run litRun) *litFinder {
	f := &litFinder{run: run}
	best := 1 << 30
	for i, c := range run.b {
		if run.fold[i] {
			f.anyFld = true
		}
		score := byteRank(c)
		if run.fold[i] {
			score = max(score, byteRank(c&^0x20)) + 3 // two scans
		}
		if score < best {
			best, f.rare = score, i
		}
	}
	f.b1, f.b2 = run.b[f.rare], run.b[f.rare]
	if run.fold[f.rare] {
		f.b2 = f.b1 &^ 0x20
	}
	return f
}

// index returns the offset of the first occurrence of the literal in h, or -1.
func (f *litFinder) index(h []byte) int {
	n, r := len(f.run.b), f.rare
	if !f.anyFld && n > 1 && r == 0 {
		return bytes.Index(h, f.run.b)
	}
	next1, next2 := -2, -2 // cached offsets of the next b1 and b2 (-1: none left)
	for from := r; from < len(h); {
		if next1 != -1 && next1 < from {
			if k := bytes.IndexByte(h[from:], f.b1); k >= 0 {
				next1 = from + k
			} else {
				next1 = -1
			}
		}
		c := next1
		if f.b2 != f.b1 {
			if next2 != -1 && next2 < from {
				if k := bytes.IndexByte(h[from:], f.b2); k >= 0 {
					next2 = from + k
				} else {
					next2 = -1
				}
			}
			if c < 0 || next2 >= 0 && next2 < c {
				c = next2
			}
		}
		if c < 0 {
			return -1
		}
		if s := c - r; s+n <= len(h) && f.equal(h[s:s+n]) {
			return s
		}
		from = c + 1
	}
	return -1
}

// equal reports whether h (as long as the literal) is the literal.
func (f *litFinder) equal(h []byte) bool {
	if !f.anyFld {
		return bytes.Equal(h, f.run.b)
	}
	for i, c := range h {
		if f.run.fold[i] {
			c |= 0x20
		}
		if c != f.run.b[i] {
			return false
		}
	}
	return true
}

// byteOrder lists the printable ASCII bytes (with tab and newline) from the most to the
// least common in source code: the mean of their frequencies in Go's source tree and in
// Linux's C sources (.c and .h), where "_" is as common as "e" (4.8%), though rare in Go.
const byteOrder = " et\t\nnri_sao0cdl,ufpx()mS1gAET/h.IRC2=*bv\"PMOD:NL46y;3{}kF8-w5XUB#GV97H>[]<KW\\&Yq!z+|%Q'jZ`J@~?$^"

// byteRank is how common a byte is in source code and text, roughly: lower is rarer.
func byteRank(c byte) int {
	if i := strings.IndexByte(byteOrder, c); i >= 0 {
		return 2 * (len(byteOrder) - i)
	}
	return 0 // control bytes and non-ASCII
}
