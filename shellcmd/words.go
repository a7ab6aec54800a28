// This file reads words: quote removal, which words are known before the command runs, and
// the expansions, arithmetic and tests inside them whose commands must be seen too.

package shellcmd

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word reads a word: quote removal, and the commands its substitutions run.
func (r *shellReader) word(w *syntax.Word) Word {
	out := literal(w)
	if out.Lit {
		return out
	}
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit, *syntax.SglQuoted, *syntax.ExtGlob:
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					r.expansion(q)
				}
			}
		default:
			r.expansion(part)
		}
	}
	out.Text = r.source(w)
	return out
}

// literal returns a word after quote removal: its text (when lit), whether it is literal,
// and whether it has a glob. It has no side effect: expansions are read by word.
func literal(w *syntax.Word) Word {
	if w == nil || len(w.Parts) == 0 {
		return Word{Lit: true}
	}
	if len(w.Parts) == 1 { // the usual case: one plain literal
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "\\*?[{~") {
			return Word{Text: l.Value, Lit: true}
		}
	}
	var b strings.Builder
	out := Word{Lit: true}
	for i, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(x.Value, "~") {
				out.Lit = false // tilde expansion
			}
			if unquoteLit(&b, x.Value) {
				out.Glob = true
			}
			if strings.ContainsRune(x.Value, '{') && bracesExpand(w) {
				out.Lit = false
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				b.WriteString(ansiC(x.Value))
			} else {
				b.WriteString(x.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					unquoteDouble(&b, l.Value)
				} else {
					out.Lit = false
				}
			}
		case *syntax.ExtGlob:
			out.Lit, out.Glob = false, true
		default:
			out.Lit = false
		}
	}
	if out.Lit {
		out.Text = b.String()
	}
	return out
}

// source returns a node as written.
func (r *shellReader) source(n syntax.Node) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(r.src) || s > e {
		return "?"
	}
	return r.src[s:e]
}

// bracesExpand reports whether a word has a brace expansion ({a,b} or {1..3}).
func bracesExpand(w *syntax.Word) bool {
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	return syntax.SplitBraces(cp)
}

// expansion reads a part of a word that expands: the commands it runs, and the expansions
// that can run commands hidden in a variable's value.
func (r *shellReader) expansion(p syntax.WordPart) {
	switch x := p.(type) {
	case *syntax.CmdSubst:
		r.stmts(x.Stmts)
	case *syntax.ProcSubst:
		r.stmts(x.Stmts)
	case *syntax.ArithmExp:
		r.arith(x.X)
	case *syntax.ParamExp:
		if x.Excl && x.Names == 0 {
			r.setUnsafe("the command uses an indirect expansion (${!name})")
		}
		if x.Exp != nil {
			if x.Exp.Op == syntax.OtherParamOps {
				r.setUnsafe("the command uses a ${name@op} expansion")
			}
			r.word(x.Exp.Word)
		}
		if x.Repl != nil {
			r.word(x.Repl.Orig)
			r.word(x.Repl.With)
		}
		if x.Index != nil {
			if w, ok := x.Index.(*syntax.Word); !ok || !(w.Lit() == "@" || w.Lit() == "*" || isNumber(w.Lit())) {
				r.arith(x.Index)
			}
		}
		if x.Slice != nil {
			r.arith(x.Slice.Offset)
			r.arith(x.Slice.Length)
		}
		if x.NestedParam != nil {
			r.expansion(x.NestedParam)
		}
	}
}

// arith reads an arithmetic expression. Bash evaluates variables in arithmetic recursively,
// and an array subscript in a variable's value runs $(...): only numbers are safe.
func (r *shellReader) arith(x syntax.ArithmExpr) {
	if x == nil {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			if sw := r.word(w); !sw.Lit || !isNumber(sw.Text) {
				r.setUnsafe("the command computes arithmetic on variables or commands")
			}
			return false
		}
		return true
	})
}

// isNumber reports whether s is an integer literal of bash arithmetic (42, 0x2a, 2#101).
func isNumber(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '#' || c == '_' || c == '@') {
			return false
		}
	}
	return true
}

// test reads a [[ ]] expression: its arithmetic comparisons evaluate their operands.
func (r *shellReader) test(x syntax.TestExpr) {
	switch x := x.(type) {
	case *syntax.Word:
		r.word(x)
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, y := range []syntax.TestExpr{x.X, x.Y} {
				w, ok := y.(*syntax.Word)
				if !ok {
					r.test(y)
					r.setUnsafe("the command computes arithmetic on variables or commands")
					continue
				}
				if sw := r.word(w); !sw.Lit || !isNumber(strings.TrimPrefix(sw.Text, "-")) {
					r.setUnsafe("the command computes arithmetic on variables or commands")
				}
			}
		default:
			r.test(x.X)
			r.test(x.Y)
		}
	case *syntax.UnaryTest:
		if w, ok := x.X.(*syntax.Word); ok && (x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar) {
			if sw := r.word(w); !sw.Lit || strings.ContainsRune(sw.Text, '[') {
				r.setUnsafe("the command tests a variable with a subscript bash evaluates")
			}
			return
		}
		r.test(x.X)
	case *syntax.ParenTest:
		r.test(x.X)
	}
}
